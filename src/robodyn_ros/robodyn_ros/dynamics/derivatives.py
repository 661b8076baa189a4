"""Analytical derivatives of the dynamics: ∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ = M of the RNEA, and
∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂τ = M⁻¹ of the forward dynamics (Carpentier & Mansard, "Analytical
Derivatives of Rigid Body Dynamics Algorithms", RSS 2018, Algorithm 1 and §IV-C).

Every quantity is in world axes about the world origin (fixed_frame.py), where moving joint j
by δq_j moves the whole subtree of its joint rigidly by the world twist S_j δq_j; the
derivatives in q are taken in the tangent space, a free flyer's and a planar joint's along
their local velocity (tree.py), as Pinocchio's computeRNEADerivatives defines them. With
a_λ, v_λ the acceleration (gravity taken as the base accelerating upwards) and velocity of the
body a joint hangs from, and v the velocity of the joint's own body, the forward pass gives
each row j

    ∂v/∂q_j = v_λ × S_j                    (dV, the motion a subtree body gains beyond rigid)
    ∂a/∂q_j = a_λ × S_j + v_λ × ∂v/∂q_j    (dA)
    ∂a/∂q̇_j = v × S_j + v_λ × S_j          (dAv)

and the backward pass composites of the subtree: inertia Ic, its rate İc = v ×* I − I v×,
momentum hc and force F (the net forces, less the external wrenches). A body's force then
moves, beyond the rigid motion S_j ×* f, by Ic dA + (İc + hc×̄) dV, and the entries are, for k
in the subtree of i (the index range i .. end[i] − 1, depth-first)

    ∂τ_i/∂q_k = S_iᵀ (Ic_k dA_k + İc_k dV_k + dV_k ×* hc_k + S_k ×* F_k)
    ∂τ_i/∂q̇_k = S_iᵀ (Ic_k dAv_k + İc_k S_k + S_k ×* hc_k)

the rigid term S_k ×* F_k only where row i is not of k's own joint (a multi-DOF joint's rows
all turn with each of its coordinates, and that term cancels against S_i's own turn), and,
for j an ancestor of i,

    ∂τ_i/∂q_j = (Ic_i S_i)ᵀ dA_j + (İc_i S_i − S_i ×* hc_i)ᵀ dV_j
    ∂τ_i/∂q̇_j = (Ic_i S_i)ᵀ dAv_j + (İc_i S_i − S_i ×* hc_i)ᵀ S_j

(hc×̄ m = m ×* hc is skew, so (İc + hc×̄)ᵀ S = İc S − S ×* hc).

The forward derivatives are those of the RNEA at q̈ = FD(q, q̇, τ): ∂q̈/∂x = −M⁻¹ ∂τ/∂x
(§IV-C). The RNEA is linear in q̈, so they come from one derivative pass at q̈ = 0, which also
gives M and the bias b = τ(q, q̇, 0) (b_j = S_jᵀ F_j), then q̈ = M⁻¹ (τ − b), and a light pass
that adds ∂(M(q) q̈)/∂q: the entries above with v = 0, no gravity and no wrenches, so dV, İc
and hc vanish and the subtree force of row j is Ic_j a_j + Σ_c G_c over its children c, where
G_c = Σ Ic_r S_r q̈_r over the rows r of c's subtree. ∂τ/∂q̇ and M do not depend on q̈.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.factorization import ltdl, ltdl_inverse, ltdl_solve
from robodyn_ros.dynamics.fixed_frame import ZERO6, gravity_acceleration, world_inertias
from robodyn_ros.dynamics.inertia_inverse import minv_aba, minv_workspace
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.kinematics import (
    forward_kinematics,
    joint_body_row,
    joint_velocity_less_before,
)
from robodyn_ros.dynamics.linalg import (
    carved,
    cholesky,
    cholesky_inverse,
    cholesky_solve,
    unsigned_range,
)
from robodyn_ros.dynamics.spatial import (
    add6,
    dot6,
    force_to_parent,
    inertia_at,
    inertia_rate,
    inertia_times,
    motion_cross_force,
    motion_cross_motion,
    pose_at,
    scale6,
    store,
    vector6,
)
from robodyn_ros.dynamics.tree import (
    POSE,
    armature,
    joint_start,
    parent_indices,
    parent_of,
    subtree_ends,
)

INERTIA_SIZE = 10  # a rigid-body inertia (M, h, I_O), spatial.py

# Carpentier & Mansard 2018, Algorithm 1: what the two passes keep of each body (module
# docstring), world axes about the world origin. What the answers' rows read across is kept as
# columns (6, n), so that a row of each answer is one contiguous sweep.
DerivativesWorkspace = namedtuple("DerivativesWorkspace", (
    "end",       # (n,) one past the last row of each row's subtree (subtree_ends)
    "joint_end",  # (n,) one past the last row of each row's joint
    "X_world",   # (n, POSE) each body's pose
    "S_world",   # (n, 6) each row's motion S
    "v",         # (n, 6) each body's velocity
    "a",         # (n, 6) each body's acceleration, gravity as the base accelerating upwards
    "Ic",        # (n, INERTIA_SIZE) each body's inertia, then its subtree's
    "Ic_rate",   # (n, INERTIA_SIZE) its rate İ, then the subtree's
    "hc",        # (n, 6) its momentum I v, then the subtree's
    "F",         # (n, 6) its net force, then the subtree's: the force its joint transmits
    "S_columns",  # (6, n) each row's motion S, as columns
    "dV",        # (6, n) ∂v/∂q_j = v_λ × S_j
    "dA",        # (6, n) ∂a/∂q_j = a_λ × S_j + v_λ × dV_j
    "dAv",       # (6, n) ∂a/∂q̇_j = v × S_j + v_λ × S_j
    "dFdq",      # (6, n) the subtree force's motion in q_j, less the rigid S_j ×* F_j
    "dFdq_turned",  # (6, n) with it
    "dFdv",      # (6, n) its motion in q̇_j
    "dFda",      # (6, n) its motion in q̈_j: Ic_j S_j
    "G",         # (n, 6) Σ Ic_r S_r q̈_r over the rows r of each row's subtree (q̈ pass)
))

# What fd_derivatives needs besides a DerivativesWorkspace.
ForwardDerivativesWorkspace = namedtuple("ForwardDerivativesWorkspace", (
    "rnea",     # a DerivativesWorkspace
    "qdd",      # (n,) zero, then q̈ = M⁻¹ (τ − b)
    "dtau",     # (3, n, n) ∂τ/∂q at q̈ = 0 then at q̈, ∂τ/∂q̇, M
    "L",        # (n, n) M's Cholesky factor, below BLAS_SIZE rows
    "L_inverse",  # (n, n) its inverse, below BLAS_SIZE rows
    "parent",   # (n,) each row's parent row (parent_indices)
    "LD",       # (n, n) M's LᵀDL factor, on a branched tree from BLAS_SIZE rows; else (0, 0)
))

BLAS_SIZE = 24
"""From this many rows on, fd_derivatives takes M⁻¹ from M's sparse LᵀDL factor on a branched
tree (is_branched), by minv_aba on a deep one (its workspace made there), and the products by
BLAS (negative_products); below, M⁻¹ from M's Cholesky factor and the products by a few loops,
which cost less than entering BLAS."""

BRANCHED_DEPTH = 2.0
"""A tree is branched when its rows' root-mean-square depth (rows above them) is at most this
many times the square root of its rows: the LᵀDL factor's work, Σ depth², is then at most
BRANCHED_DEPTH² n², against minv_aba's O(n²) and M's dense factor's O(n³)."""


@kernel_helper
def derivatives_workspace(tree, n):
    """A DerivativesWorkspace of the tree's n bodies, its arrays carved from two blocks."""
    ends = np.empty((2, n), dtype=np.int64)
    subtree_ends(tree, ends[0])
    for i in range(n):
        ends[1, i] = joint_body_row(tree, i) + 1
    block = np.empty(n * (POSE + 2 * INERTIA_SIZE + 6 * 6 + 8 * 6))
    X_world, at = carved(block, 0, (n, POSE))
    inertias, at = carved(block, at, (2, n, INERTIA_SIZE))
    rows, at = carved(block, at, (6, n, 6))
    columns, at = carved(block, at, (8, 6, n))
    return DerivativesWorkspace(
        ends[0], ends[1], X_world, rows[0], rows[1], rows[2], inertias[0], inertias[1],
        rows[3], rows[4], columns[0], columns[1], columns[2], columns[3], columns[4],
        columns[5], columns[6], columns[7], rows[5],
    )


@kernel_helper
def forward_derivatives_workspace(tree, n):
    """A ForwardDerivativesWorkspace of the tree's n bodies."""
    parent = parent_indices(tree)
    small = 0 if n >= BLAS_SIZE else n
    sparse = n if n >= BLAS_SIZE and is_branched(parent) else 0
    block = np.empty(n + 3 * n * n + 2 * small * small + sparse * sparse)
    qdd, at = carved(block, 0, (n,))
    dtau, at = carved(block, at, (3, n, n))
    factors, at = carved(block, at, (2, small, small))
    LD, at = carved(block, at, (sparse, sparse))
    return ForwardDerivativesWorkspace(derivatives_workspace(tree, n), qdd, dtau, factors[0],
                                       factors[1], parent, LD)


@kernel_helper
def is_branched(parent):
    """Whether Σ depth² over the rows is at most (BRANCHED_DEPTH n)² (BRANCHED_DEPTH)."""
    n = parent.shape[0]
    depth = np.zeros(n, dtype=np.int64)
    work = 0
    for i in range(n):
        if parent[i] >= 0:
            depth[i] = depth[parent[i]] + 1
        work += depth[i] * depth[i]
    return work <= (BRANCHED_DEPTH * n) ** 2


@kernel_helper
def store_column(a, j, values):
    """Column j of a (6, n) array = values."""
    for r in range(6):
        a[r, j] = values[r]


@kernel_helper
def column6(a, j):
    """Column j of a (6, n) array."""
    return a[0, j], a[1, j], a[2, j], a[3, j], a[4, j], a[5, j]


@kernel_helper
def column_dot(a, columns, k):
    """aᵀ columns[:, k]: a a 6-vector, columns (6, n)."""
    return (a[0] * columns[0, k] + a[1] * columns[1, k] + a[2] * columns[2, k]
            + a[3] * columns[3, k] + a[4] * columns[4, k] + a[5] * columns[5, k])


@kernel_helper
def motion_pass(tree, gravity, q, qd, qdd, f_ext, ws):
    """Forward pass: the kinematics, each body's v, a, world inertia, İ, momentum and net force
    I a + v ×* I v − f_ext (f_ext None or (n, 6) body-frame wrenches), and each row's dV, dA
    and dAv (module docstring). A multi-DOF joint's rows take v_λ and a_λ of the body it hangs
    from and v of its last row."""
    forward_kinematics(tree, q, ws.X_world, ws.S_world)
    world_inertias(tree, ws.X_world, ws.Ic)
    a_root = gravity_acceleration(gravity)
    for i in range(tree.shape[0]):
        parent = parent_of(tree, i)
        S = vector6(ws.S_world, i)
        vJ = scale6(qd[i], S)
        v_i = add6(vector6(ws.v, parent), vJ) if parent >= 0 else vJ
        a_parent = vector6(ws.a, parent) if parent >= 0 else a_root
        a_i = add6(add6(a_parent, scale6(qdd[i], S)),
                   motion_cross_motion(joint_velocity_less_before(tree, i, qd, ws.S_world, v_i),
                                       vJ))
        I_i = inertia_at(ws.Ic, i)
        h_i = inertia_times(I_i, v_i)
        f_i = add6(inertia_times(I_i, a_i), motion_cross_force(v_i, h_i))
        if f_ext is not None:
            f_i = add6(f_i, scale6(-1.0, force_to_parent(pose_at(ws.X_world, i, 0),
                                                          vector6(f_ext, i))))
        store(ws.v, i, v_i)
        store(ws.a, i, a_i)
        store(ws.hc, i, h_i)
        store(ws.F, i, f_i)
        store(ws.Ic_rate, i, inertia_rate(I_i, v_i))
        hung_from = parent_of(tree, joint_start(tree, i))
        v_from = vector6(ws.v, hung_from) if hung_from >= 0 else ZERO6
        a_from = vector6(ws.a, hung_from) if hung_from >= 0 else a_root
        dV = motion_cross_motion(v_from, S)
        store_column(ws.S_columns, i, S)
        store_column(ws.dV, i, dV)
        store_column(ws.dA, i, add6(motion_cross_motion(a_from, S),
                                    motion_cross_motion(v_from, dV)))
        if ws.joint_end[i] == i + 1:  # v_i is the joint's body's: dAv of each of its rows
            for j in range(joint_start(tree, i), i + 1):
                S_j = vector6(ws.S_world, j)
                store_column(ws.dAv, j, add6(motion_cross_motion(v_i, S_j),
                                             motion_cross_motion(v_from, S_j)))


@kernel_helper
def derivative_pass(tree, ws, dtau_dq, dtau_dv, M):
    """Backward pass: the composites; at each row j its dFdq, dFdv and dFda, then row
    j of ∂τ/∂q, ∂τ/∂q̇ and M, M's armature on its diagonal (module docstring): with its
    subtree (k in j .. end[j] − 1), with its ancestors (the rows c < j whose subtree holds j,
    end[c] > j), and zero with the rows on other branches."""
    n = tree.shape[0]
    dFdq, dFdq_turned, dFdv, dFda = ws.dFdq, ws.dFdq_turned, ws.dFdv, ws.dFda
    S_columns, dA_columns, dV_columns, dAv_columns = ws.S_columns, ws.dA, ws.dV, ws.dAv
    end_of = ws.end
    for j in range(n - 1, -1, -1):
        S = vector6(ws.S_world, j)
        I_c, rate, h = inertia_at(ws.Ic, j), inertia_at(ws.Ic_rate, j), vector6(ws.hc, j)
        dV, dA, dAv = column6(dV_columns, j), column6(dA_columns, j), column6(dAv_columns, j)
        IS = inertia_times(I_c, S)
        rate_S, S_h = inertia_times(rate, S), motion_cross_force(S, h)
        Q = add6(rate_S, scale6(-1.0, S_h))  # (İc + hc×̄)ᵀ S
        dFdq_j = add6(add6(inertia_times(I_c, dA), inertia_times(rate, dV)),
                      motion_cross_force(dV, h))
        store_column(dFda, j, IS)
        store_column(dFdq, j, dFdq_j)
        store_column(dFdq_turned, j, add6(dFdq_j, motion_cross_force(S, vector6(ws.F, j))))
        store_column(dFdv, j, add6(add6(inertia_times(I_c, dAv), rate_S), S_h))
        end, joint_end = end_of[j], ws.joint_end[j]
        # row j of each answer, one answer per loop (a loop that writes one array is one LLVM
        # can vectorise): with the rows before it, (Ic_j S_j)ᵀ dA_c + Qᵀ dV_c, ...
        dtau_dq_j, dtau_dv_j, M_j = dtau_dq[j], dtau_dv[j], M[j]
        for c in unsigned_range(0, j):
            dtau_dq_j[c] = column_dot(IS, dA_columns, c) + column_dot(Q, dV_columns, c)
        for c in unsigned_range(0, j):
            dtau_dv_j[c] = column_dot(IS, dAv_columns, c) + column_dot(Q, S_columns, c)
        for c in unsigned_range(0, j):
            M_j[c] = column_dot(IS, S_columns, c)
        for c in range(j):  # ... zero where the row is not its ancestor (another branch)
            if end_of[c] <= j:
                dtau_dq_j[c] = dtau_dv_j[c] = M_j[c] = 0.0
        # with its subtree: S_jᵀ dF_k over its joint's rows, S_k ×* F_k with the rows below
        for k in unsigned_range(j, joint_end):
            dtau_dq_j[k] = column_dot(S, dFdq, k)
        for k in unsigned_range(joint_end, end):
            dtau_dq_j[k] = column_dot(S, dFdq_turned, k)
        for k in unsigned_range(j, end):
            dtau_dv_j[k] = column_dot(S, dFdv, k)
        for k in unsigned_range(j, end):
            M_j[k] = column_dot(S, dFda, k)
        for k in unsigned_range(end, n):  # the rows past its subtree: other branches
            dtau_dq_j[k] = dtau_dv_j[k] = M_j[k] = 0.0
        M_j[j] += armature(tree, j)
        parent = parent_of(tree, j)
        if parent >= 0:
            for r in range(INERTIA_SIZE):
                ws.Ic[parent, r] += ws.Ic[j, r]
                ws.Ic_rate[parent, r] += ws.Ic_rate[j, r]
            store(ws.hc, parent, add6(vector6(ws.hc, parent), h))
            store(ws.F, parent, add6(vector6(ws.F, parent), vector6(ws.F, j)))


@routine
def rnea_derivatives(tree, gravity, q, qd, qdd, f_ext, dtau_dq, dtau_dv, M, ws):
    """∂τ/∂q, ∂τ/∂q̇ and M = ∂τ/∂q̈ of τ = RNEA(q, q̇, q̈, f_ext) for one state, each (n x n),
    ∂τ/∂q in the tangent space (module docstring); f_ext None or (n, 6) body-frame wrenches;
    ws a DerivativesWorkspace. A routine: the inverse and forward derivatives share one
    build."""
    motion_pass(tree, gravity, q, qd, qdd, f_ext, ws)
    derivative_pass(tree, ws, dtau_dq, dtau_dv, M)


@kernel_helper
def acceleration_pass(tree, qdd, ws, dtau_dq):
    """dtau_dq += ∂(M(q) q̈)/∂q in the tangent space: the forward pass's accelerations of q̈
    alone and their dA, then the backward pass's entries (module docstring), on the subtree
    inertias Ic and the columns Ic S that derivative_pass left in ws."""
    n = tree.shape[0]
    dA_columns, dFdq, dFdq_turned, IS_columns = ws.dA, ws.dFdq, ws.dFdq_turned, ws.dFda
    for i in range(n):
        parent = parent_of(tree, i)
        S = vector6(ws.S_world, i)
        a_i = scale6(qdd[i], S)
        if parent >= 0:
            a_i = add6(vector6(ws.a, parent), a_i)
        store(ws.a, i, a_i)
        store(ws.G, i, ZERO6)
        hung_from = parent_of(tree, joint_start(tree, i))
        a_from = vector6(ws.a, hung_from) if hung_from >= 0 else ZERO6
        store_column(dA_columns, i, motion_cross_motion(a_from, S))
    end_of = ws.end
    for j in range(n - 1, -1, -1):
        S = vector6(ws.S_world, j)
        I_c, IS = inertia_at(ws.Ic, j), column6(IS_columns, j)
        F_j = add6(inertia_times(I_c, vector6(ws.a, j)), vector6(ws.G, j))
        dFdq_j = inertia_times(I_c, column6(dA_columns, j))
        store_column(dFdq, j, dFdq_j)
        store_column(dFdq_turned, j, add6(dFdq_j, motion_cross_force(S, F_j)))
        end, joint_end = end_of[j], ws.joint_end[j]
        dtau_dq_j = dtau_dq[j]
        for c in range(j):  # its ancestors: (Ic_j S_j)ᵀ dA_c
            if end_of[c] > j:
                dtau_dq_j[c] += column_dot(IS, dA_columns, c)
        for k in unsigned_range(j, joint_end):  # its subtree, S_k ×* F_k past its joint's rows
            dtau_dq_j[k] += column_dot(S, dFdq, k)
        for k in unsigned_range(joint_end, end):
            dtau_dq_j[k] += column_dot(S, dFdq_turned, k)
        parent = parent_of(tree, j)
        if parent >= 0:
            G_j = add6(vector6(ws.G, j), scale6(qdd[j], IS))
            store(ws.G, parent, add6(vector6(ws.G, parent), G_j))


@kernel_helper
def fd_derivatives(tree, gravity, q, qd, tau, f_ext, dqdd_dq, dqdd_dv, Minv, ws):
    """∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ = ∂q̈/∂τ of q̈ = FD(q, q̇, τ, f_ext) for one state, each
    (n x n): −M⁻¹ ∂τ/∂x of the RNEA at that q̈ (module docstring); f_ext None or (n, 6)
    body-frame wrenches; ws a ForwardDerivativesWorkspace. Where M is not positive definite,
    NaN."""
    n = qd.shape[0]
    qdd, dtau = ws.qdd, ws.dtau
    qdd[:] = 0.0
    rnea_derivatives(tree, gravity, q, qd, qdd, f_ext, dtau[0], dtau[1], dtau[2], ws.rnea)
    for j in range(n):  # τ − b, b_j = S_jᵀ F_j
        qdd[j] = tau[j] - dot6(vector6(ws.rnea.S_world, j), vector6(ws.rnea.F, j))
    if not solve_mass_matrix(tree, q, dtau[2], qdd, Minv, ws):
        Minv[:, :] = np.nan
        qdd[:] = np.nan
    acceleration_pass(tree, qdd, ws.rnea, dtau[0])
    negative_products(Minv, dtau[0], dtau[1], dqdd_dq, dqdd_dv)


@kernel_helper
def solve_mass_matrix(tree, q, M, qdd, Minv, ws):
    """qdd ← M⁻¹ qdd and Minv = M⁻¹, by the route ws was made for
    (forward_derivatives_workspace); False where M is not positive definite."""
    if qdd.shape[0] < BLAS_SIZE:
        if not cholesky(M, 0.0, ws.L):
            return False
        cholesky_solve(ws.L, qdd)
        cholesky_inverse(ws.L, ws.L_inverse, Minv)
    elif ws.LD.shape[0] == 0:  # a deep tree
        minv_aba(tree, q, Minv, minv_workspace(tree, qdd.shape[0]))
        solve_by_inverse(Minv, M, qdd)
    else:
        ws.LD[:, :] = M
        if not ltdl(ws.LD, ws.parent):
            return False
        ltdl_solve(ws.LD, ws.parent, qdd)
        ltdl_inverse(ws.LD, ws.parent, ws.rnea.end, Minv)
    return True


@kernel_helper
def solve_by_inverse(Minv, M, x):
    """x ← M⁻¹ x by the explicit inverse, refined once against M."""
    rhs = x.copy()
    x[:] = np.dot(Minv, rhs)
    x += np.dot(Minv, rhs - np.dot(M, x))


@kernel_helper
def negative_products(A, B1, B2, out1, out2):
    """out1 = −A B1 and out2 = −A B2 (n x n): by BLAS from BLAS_SIZE rows on; below by dot
    products, both answers' entries in one sweep."""
    n = out1.shape[0]
    if n >= BLAS_SIZE:
        for B, out in ((B1, out1), (B2, out2)):
            np.dot(A, B, out)
            for r in range(n):
                for c in range(n):
                    out[r, c] = -out[r, c]
        return
    for r in range(n):
        for c in range(n):
            sum1 = sum2 = 0.0
            for k in range(n):
                sum1 += A[r, k] * B1[k, c]
                sum2 += A[r, k] * B2[k, c]
            out1[r, c] = -sum1
            out2[r, c] = -sum2


@kernel
def inverse_dynamics_derivatives(tree: PackedTree, gravity: FloatArray, q: FloatArray,
                                 qd: FloatArray, qdd: FloatArray, f_ext: FloatArray | None,
                                 out: FloatArray) -> None:
    """rnea_derivatives for a state or a batch: q (..., nq), qd and qdd (..., n), f_ext None
    or (..., n, 6); out (..., 3, n, n): ∂τ/∂q, ∂τ/∂q̇, M."""
    Q, QD, QDD = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(qdd)
    B, n = QD.shape
    OUT = out.reshape((B, 3, n, n))
    ws = derivatives_workspace(tree, n)
    if f_ext is None:
        for b in range(B):
            rnea_derivatives(tree, gravity, Q[b], QD[b], QDD[b], None, OUT[b, 0], OUT[b, 1],
                             OUT[b, 2], ws)
    else:
        F = f_ext.reshape((B, n, 6))
        for b in range(B):
            rnea_derivatives(tree, gravity, Q[b], QD[b], QDD[b], F[b], OUT[b, 0], OUT[b, 1],
                             OUT[b, 2], ws)


@kernel
def forward_dynamics_derivatives(tree: PackedTree, gravity: FloatArray, q: FloatArray,
                                 qd: FloatArray, tau: FloatArray, f_ext: FloatArray | None,
                                 out: FloatArray) -> None:
    """fd_derivatives for a state or a batch: q (..., nq), qd and tau (..., n), f_ext None
    or (..., n, 6); out (..., 3, n, n): ∂q̈/∂q, ∂q̈/∂q̇, M⁻¹."""
    Q, QD, TAU = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(tau)
    B, n = QD.shape
    OUT = out.reshape((B, 3, n, n))
    ws = forward_derivatives_workspace(tree, n)
    if f_ext is None:
        for b in range(B):
            fd_derivatives(tree, gravity, Q[b], QD[b], TAU[b], None, OUT[b, 0], OUT[b, 1],
                            OUT[b, 2], ws)
    else:
        F = f_ext.reshape((B, n, 6))
        for b in range(B):
            fd_derivatives(tree, gravity, Q[b], QD[b], TAU[b], F[b], OUT[b, 0], OUT[b, 1],
                            OUT[b, 2], ws)
