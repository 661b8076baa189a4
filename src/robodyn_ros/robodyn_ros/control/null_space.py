"""The whole-body programme's equalities eliminated: its variables x = (v̇, λ̃) written as
x = x₀ + Z z over the accelerations and forces that hold them, z one coordinate for each
actuated joint, so that the solver sees the cones alone.

The equalities are the base rows of the dynamics and the contacts held
(control.whole_body_programme), in y = (v̇_j, λ̃), the joints' accelerations and the forces:

    M_bb v̇_b + M_bj v̇_j − m J_bᵀ λ̃ = −b_b,     J_c v̇ = ζ.

The base rows give the base's acceleration, M_bb (the whole robot's 6 × 6 inertia about the
base) always positive definite: v̇_b = B [y; 1], B = M_bb⁻¹ [−M_bj, m J_bᵀ, −b_b] (`base`).
The contacts' rows on y are then D y = d, D = J_b B_y + [J_j, 0], d = ζ − J_b B_1
(`constraint`), k rows over n − 6 + k columns. Gauss–Jordan elimination takes k columns as
basic and writes them in the other n − 6: y_B = d' − D' y_N, each row's pivot the largest
entry of the columns left (partial pivoting, as on Dᵀ). Contacts whose rows are dependent (a
pivot below RANK_TOLERANCE of D's largest entry) leave no basis: the same frame held twice,
or held by links that cannot move it apart from the others.
"""

# The null-space method: Nocedal & Wright, Numerical Optimization (2006), §15.3 and §16.2.

from robodyn_ros.dynamics.arrays import FloatArray, IntArray
from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.linalg import back_substitute, cholesky, forward_substitute

BASE_ROWS = 6  # the free flyer's velocity rows, where no motor acts
RANK_TOLERANCE = 1e-10  # a pivot below this times D's largest entry: the rows are dependent


@kernel_helper
def eliminate_base(M: FloatArray, b: FloatArray, J_c: FloatArray, mass: float,
                   factor: FloatArray, base: FloatArray) -> bool:
    """base (6, n − 6 + k + 1) = M_bb⁻¹ [−M_bj, m J_bᵀ, −b_b]: v̇_b = base [y; 1]. factor
    (6, 6) takes M_bb's Cholesky factor. Returns False where M_bb is not positive definite."""
    n, forces = M.shape[0], J_c.shape[0]
    joints = n - BASE_ROWS
    for r in range(BASE_ROWS):
        for c in range(joints):
            base[r, c] = -M[r, BASE_ROWS + c]
        for c in range(forces):
            base[r, joints + c] = mass * J_c[c, r]
        base[r, joints + forces] = -b[r]
    if not cholesky(M[:BASE_ROWS, :BASE_ROWS], 0.0, factor):
        return False
    forward_substitute(factor, base)
    back_substitute(factor, base)
    return True


@kernel_helper
def eliminate_contacts(J_c: FloatArray, contact_goal: FloatArray, base: FloatArray,
                       constraint: FloatArray, columns: IntArray) -> bool:
    """The contacts' rows J_c v̇ = ζ over y, [D | d], reduced in `constraint` (k, n − 6 + k + 1)
    by Gauss–Jordan elimination, each row's pivot its largest entry among the columns left, to
    [1 | D' | d'] over the columns of y in the order `columns` takes them (k basic, then n − 6
    free). Returns False where the rows are dependent."""
    forces, width = constraint.shape
    joints = width - 1 - forces
    largest = 0.0
    for i in range(forces):
        for c in range(width):
            constraint[i, c] = 0.0
        for r in range(BASE_ROWS):
            for c in range(width):
                constraint[i, c] += J_c[i, r] * base[r, c]
        for c in range(joints):
            constraint[i, c] += J_c[i, BASE_ROWS + c]
        constraint[i, width - 1] = contact_goal[i] - constraint[i, width - 1]
        for c in range(width - 1):
            largest = max(largest, abs(constraint[i, c]))
    for c in range(width - 1):
        columns[c] = c
    for i in range(forces):
        pivot, pivot_column = 0.0, i
        for c in range(i, width - 1):
            if abs(constraint[i, c]) > pivot:
                pivot, pivot_column = abs(constraint[i, c]), c
        if not pivot > RANK_TOLERANCE * largest:
            return False
        for r in range(forces):
            constraint[r, i], constraint[r, pivot_column] = (constraint[r, pivot_column],
                                                             constraint[r, i])
        columns[i], columns[pivot_column] = columns[pivot_column], columns[i]
        scale = 1.0 / constraint[i, i]
        for c in range(i, width):
            constraint[i, c] *= scale
        for r in range(forces):
            factor = constraint[r, i]
            if r != i and factor != 0.0:
                for c in range(i, width):
                    constraint[r, c] -= factor * constraint[i, c]
    return True


@kernel_helper
def null_space_basis(base: FloatArray, constraint: FloatArray, columns: IntArray,
                     basis: FloatArray, particular: FloatArray) -> None:
    """x = particular + basis z over x = (v̇_b, y), after eliminate_contacts: the free
    columns of y are z, the basic ones d' − D' z, and v̇_b = base [y; 1]."""
    forces, width = constraint.shape
    free = basis.shape[1]
    basis[:, :] = 0.0
    particular[:] = 0.0
    for c in range(free):
        basis[BASE_ROWS + columns[forces + c], c] = 1.0
    for i in range(forces):
        row = BASE_ROWS + columns[i]
        particular[row] = constraint[i, width - 1]
        for c in range(free):
            basis[row, c] = -constraint[i, forces + c]
    for r in range(BASE_ROWS):
        particular[r] = base[r, width - 1]
        for t in range(width - 1):
            particular[r] += base[r, t] * particular[BASE_ROWS + t]
            for c in range(free):
                basis[r, c] += base[r, t] * basis[BASE_ROWS + t, c]
