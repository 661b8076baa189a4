"""Forward dynamics through the joint constraint forces, 𝒜 λ = b (Sharf & D'Eleuterio,
"An iterative approach to multibody simulation dynamics suitable for parallel implementation",
eqs. 10–13), solved iteratively:
Jacobi (eq. 15), Gauss–Seidel (16), SOR (17), Chebyshev semi-iteration J-SI and
conjugate-gradient-accelerated Jacobi J-CG (Table 1), stopping when the relative change of λ
between two iterates is ≤ tol (§5). The exact solves of the same system are in schur.py.

Serial chains, every quantity in world coordinates about the world origin (papers/README.md,
"The constraint-force formulation, restated"). Body i hangs from joint i; the force joint i
exerts on it is f_i = H_i τ_i + W_i λ_i, H_i = S_i / |S_i|² (S_iᵀ H_i = 1) and W_i (6 x 5,
orthonormal, S_iᵀ W_i = 0) the columns ≠ k_i of the Householder reflector 1 − 2 u_i u_iᵀ that
maps S_i / |S_i| to ∓e_{k_i}. With I_i a_i = f_i − f_{i+1} − β_i (β_i = v_i ×* I_i v_i − f_ext,i)
and W_iᵀ(a_i − a_{i−1} − c_i) = 0 (c_i = v_i × S_i q̇_i, a_{−1} = −g):

    𝒜_ii = W_iᵀ (Φ_i + Φ_{i−1}) W_i,   𝒜_{i,i+1} = −W_iᵀ Φ_i W_{i+1},   Φ_i = I_i⁻¹
    b_i = W_iᵀ (c_i − ā_i + ā_{i−1}),   ā_i = Φ_i (H_i τ_i − H_{i+1} τ_{i+1} − β_i)

then a_i = ā_i + Φ_i (W_i λ_i − W_{i+1} λ_{i+1}) and q̈_i = H_iᵀ (a_i − a_{i−1} − c_i).
"""

import numpy as np

from robodyn_ros.dynamics.fixed_frame import (
    gravity_acceleration,
    newton_euler,
    velocity_terms,
    world_inertias,
)
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.moments import rotate_inertia
from robodyn_ros.dynamics.spatial import (
    add3,
    add6,
    cross,
    dot6,
    matrix_times,
    pose_at,
    rotate,
    scale6,
    store,
    vector6,
)
from robodyn_ros.dynamics.tree import POSE, body_inertia, parent_of

C = 5  # constraint-force components of a one-degree-of-freedom joint
JACOBI, GAUSS_SEIDEL, SOR, JACOBI_SI, JACOBI_CG = 0, 1, 2, 3, 4
POWER_STEPS = 50  # power iterations of the estimate of ρ(B)

CHAIN_ONLY = (
    "the constraint-force methods (forward_dynamics 'schur', 'schur_bcr', 'jacobi', "
    "'gauss_seidel', 'sor', 'jacobi_si', 'jacobi_cg'; mass_matrix_inverse 'schur') need a serial "
    "chain (the parent of joint i is joint i-1): they assemble the block-tridiagonal system of "
    "the joint constraint forces; this robot is a tree, use 'aba', 'cholesky', 'cg' or 'pcg'"
)
MASSLESS = (
    "the constraint-force methods need every moving body to have a positive mass and an "
    "invertible rotational inertia (they use each body's inverse spatial inertia)"
)


@kernel_helper
def check_chain(tree):
    for i in range(tree.shape[0]):
        if parent_of(tree, i) != i - 1:
            raise ValueError(CHAIN_ONLY)
        if not body_inertia(tree, i)[0] > 0.0:
            raise ValueError(MASSLESS)


@kernel_helper
def skip(j, k):
    """Index in 0..5 of the j-th of the five indices ≠ k."""
    return j if j < k else j + 1


@kernel_helper
def inverse3(A):
    """A⁻¹ of a 3x3 row-major matrix."""
    a, b, c, d, e, f, g, h, k = A
    det = a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)
    s = 1.0 / det
    return (
        s * (e * k - f * h), s * (c * h - b * k), s * (b * f - c * e),
        s * (f * g - d * k), s * (a * k - c * g), s * (c * d - a * f),
        s * (d * h - e * g), s * (b * g - a * h), s * (a * e - b * d),
    )


@kernel_helper
def store_inverse_inertia(X, body, Phi, i):
    """Phi[i] (6 x 6) = the inverse spatial inertia of a body (tree.py layout) at pose X, world
    coordinates: a force [F; N] on it at rest gives α = J (N − c × F) and a_O = F/m + c × α,
    J = (R I_c Rᵀ)⁻¹ (RBDA eq. 2.63 inverted)."""
    mass = body[0]
    c = add3(X[9:12], rotate(X, body[1:4]))
    J = rotate_inertia(X, inverse3(body[4:13]))
    for j in range(6):
        F = (1.0 if j == 0 else 0.0, 1.0 if j == 1 else 0.0, 1.0 if j == 2 else 0.0)
        N = (1.0 if j == 3 else 0.0, 1.0 if j == 4 else 0.0, 1.0 if j == 5 else 0.0)
        cF = cross(c, F)
        alpha = rotate(J, (N[0] - cF[0], N[1] - cF[1], N[2] - cF[2]))
        linear = add3((F[0] / mass, F[1] / mass, F[2] / mass), cross(c, alpha))
        for r in range(3):
            Phi[i, r, j] = linear[r]
            Phi[i, 3 + r, j] = alpha[r]


@kernel_helper
def householder(S):
    """(u, k): the unit u of the reflector 1 − 2 u uᵀ that maps S/|S| to ∓e_k, k the largest
    component of S; its other five columns are an orthonormal basis of {f : Sᵀ f = 0}."""
    s = scale6(1.0 / np.sqrt(dot6(S, S)), S)
    k = 0
    for j in range(1, 6):
        if abs(s[j]) > abs(s[k]):
            k = j
    sign = 1.0 if s[k] >= 0.0 else -1.0
    u = add6(s, (sign if k == 0 else 0.0, sign if k == 1 else 0.0, sign if k == 2 else 0.0,
                 sign if k == 3 else 0.0, sign if k == 4 else 0.0, sign if k == 5 else 0.0))
    return scale6(1.0 / np.sqrt(dot6(u, u)), u), k


@kernel_helper
def project(house, pivot, i, g):
    """W_iᵀ g (5): the reflected g without its component k_i."""
    y = add6(g, scale6(-2.0 * dot6(vector6(house, i), g), vector6(house, i)))
    k = pivot[i]
    return y[skip(0, k)], y[skip(1, k)], y[skip(2, k)], y[skip(3, k)], y[skip(4, k)]


@kernel_helper
def lift(house, pivot, i, lam):
    """W_i λ_i (6), λ (n x 5)."""
    k = pivot[i]
    y = (
        lam[i, 0] if k > 0 else 0.0,
        (lam[i, 0] if k < 1 else lam[i, 1]) if k != 1 else 0.0,
        (lam[i, 1] if k < 2 else lam[i, 2]) if k != 2 else 0.0,
        (lam[i, 2] if k < 3 else lam[i, 3]) if k != 3 else 0.0,
        (lam[i, 3] if k < 4 else lam[i, 4]) if k != 4 else 0.0,
        lam[i, 4] if k < 5 else 0.0,
    )
    return add6(y, scale6(-2.0 * dot6(vector6(house, i), y), vector6(house, i)))


@kernel_helper
def reduced_block(G, u, k, w, m, sign, T, out):
    """out (5 x 5) = sign · W_uᵀ G W_w for a 6 x 6 G, W_u the columns ≠ k of 1 − 2 u uᵀ (and
    W_w those ≠ m of 1 − 2 w wᵀ)."""
    for r in range(6):  # T = G (1 − 2 w wᵀ)
        d = G[r, 0] * w[0] + G[r, 1] * w[1] + G[r, 2] * w[2] + G[r, 3] * w[3] + G[r, 4] * w[4] \
            + G[r, 5] * w[5]
        for s in range(6):
            T[r, s] = G[r, s] - 2.0 * d * w[s]
    for s in range(6):  # T = (1 − 2 u uᵀ) T
        d = u[0] * T[0, s] + u[1] * T[1, s] + u[2] * T[2, s] + u[3] * T[3, s] + u[4] * T[4, s] \
            + u[5] * T[5, s]
        for r in range(6):
            T[r, s] -= 2.0 * d * u[r]
    for r in range(C):
        for s in range(C):
            out[r, s] = sign * T[skip(r, k), skip(s, m)]


@kernel_helper
def system_workspace(n):
    """The arrays of the constraint-force system of an n-chain, as a tuple (see assemble_matrix,
    assemble_rhs); λ (n x 5) comes last."""
    return (
        np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 10)), np.empty((n, 6, 6)),
        np.empty((n, 6)), np.empty(n, dtype=np.int64), np.empty((n, C, C)),
        np.empty((n, C, C)), np.empty((6, 6)), np.empty((6, 6)), np.empty((n, 6)),
        np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, C)),
        np.empty((n, C)),
    )


@routine
def assemble_matrix(tree, q, ws):
    """The projections, Φ_i, the W_i, and the blocks 𝒜_ii (Ad) and 𝒜_{i,i+1} (Ao) at q."""
    X_world, S_world, inertia, Phi, house, pivot = ws[:6]
    n = q.shape[0]
    forward_kinematics(tree, q, X_world, S_world)
    world_inertias(tree, X_world, inertia)
    for i in range(n):
        store_link(tree, X_world, S_world, i, i, Phi, house, pivot)
    assemble_blocks(ws, n)


@kernel_helper
def store_link(tree, X_world, S_world, body, i, Phi, house, pivot):
    """Link i of the system is `body` on its joint: Φ_i, its inverse inertia, and W_i."""
    store_inverse_inertia(pose_at(X_world, body, 0), body_inertia(tree, body), Phi, i)
    store_joint_basis(S_world, body, i, house, pivot)


@kernel_helper
def store_joint_basis(S_world, body, i, house, pivot):
    """W_i of the joint of `body`, as its reflector (house[i], pivot[i])."""
    u, pivot[i] = householder(vector6(S_world, body))
    store(house, i, u)


@kernel_helper
def assemble_blocks(ws, n):
    """The blocks 𝒜_ii (Ad) and 𝒜_{i,i+1} (Ao) of the first n links of ws, from their Φ_i and
    W_i."""
    Phi, house, pivot, Ad, Ao, G, T = ws[3:10]
    for i in range(n):
        for r in range(6):
            for s in range(6):
                G[r, s] = Phi[i, r, s] + (Phi[i - 1, r, s] if i > 0 else 0.0)
        u, k = vector6(house, i), pivot[i]
        reduced_block(G, u, k, u, k, 1.0, T, Ad[i])
        if i + 1 < n:
            reduced_block(Phi[i], u, k, vector6(house, i + 1), pivot[i + 1], -1.0, T, Ao[i])


@kernel_helper
def joint_torque_force(S_world, tau, i):
    """H_i τ_i."""
    S = vector6(S_world, i)
    return scale6(tau[i] / dot6(S, S), S)


@routine
def assemble_rhs(tau, c, bias, a_root, ws):
    """ā (n x 6) and b (n x 5) for torques tau; c and bias None (a body at rest) or (n x 6)."""
    _, S_world, _, Phi, house, pivot = ws[:6]
    abar, b = ws[10], ws[14]
    n = tau.shape[0]
    for i in range(n):
        g = joint_torque_force(S_world, tau, i)
        if i + 1 < n:
            g = add6(g, scale6(-1.0, joint_torque_force(S_world, tau, i + 1)))
        if bias is not None:
            g = add6(g, scale6(-1.0, vector6(bias, i)))
        store(abar, i, matrix_times(Phi, i, g))
    for i in range(n):
        d = add6(vector6(abar, i - 1) if i > 0 else a_root, scale6(-1.0, vector6(abar, i)))
        if c is not None:
            d = add6(d, vector6(c, i))
        store(b, i, project(house, pivot, i, d))


@routine
def joint_accelerations(lam, c, a_root, ws, qdd):
    """q̈ from the constraint forces λ: a_i = ā_i + Φ_i (W_i λ_i − W_{i+1} λ_{i+1}),
    q̈_i = H_iᵀ (a_i − a_{i−1} − c_i)."""
    _, S_world, _, Phi, house, pivot = ws[:6]
    abar = ws[10]
    n = qdd.shape[0]
    a_parent = a_root
    for i in range(n):
        g = lift(house, pivot, i, lam)
        if i + 1 < n:
            g = add6(g, scale6(-1.0, lift(house, pivot, i + 1, lam)))
        a_i = add6(vector6(abar, i), matrix_times(Phi, i, g))
        d = add6(a_i, scale6(-1.0, a_parent))
        if c is not None:
            d = add6(d, scale6(-1.0, vector6(c, i)))
        S = vector6(S_world, i)
        qdd[i] = dot6(S, d) / dot6(S, S)
        a_parent = a_i


@routine
def assemble(tree, gravity, q, qd, tau, f_ext, ws):
    """The whole system 𝒜 λ = b of one state, with the Coriolis, centrifugal, gravity and
    external-force terms; returns a_root."""
    assemble_matrix(tree, q, ws)
    X_world, S_world, inertia = ws[:3]
    v, c, bias = ws[11], ws[12], ws[13]
    velocity_terms(tree, qd, f_ext, X_world, S_world, inertia, v, c, bias)
    a_root = gravity_acceleration(gravity)
    assemble_rhs(tau, c, bias, a_root, ws)
    return a_root


@kernel_helper
def constraint_forces_of(tree, qdd, a_root, ws):
    """λ_i = W_iᵀ f_i (into ws's λ), f_i the force joint i transmits when the robot moves with
    q̈: one Newton–Euler pass in the fixed frame (the warm start from a q̈)."""
    _, S_world, inertia, _, house, pivot = ws[:6]
    a, c, bias, lam = ws[11], ws[12], ws[13], ws[15]  # a: the velocities, no longer needed
    f = np.empty((qdd.shape[0], 6))
    newton_euler(tree, S_world, inertia, qdd, a_root, c, bias, np.empty(qdd.shape[0]), a, f)
    for i in range(qdd.shape[0]):
        store(lam, i, project(house, pivot, i, vector6(f, i)))


@kernel_helper
def block_product(Ad, Ao, x, out):
    """out = 𝒜 x; with Ao None, the block diagonal only."""
    n = x.shape[0]
    for i in range(n):
        for r in range(C):
            t = 0.0
            for s in range(C):
                t += Ad[i, r, s] * x[i, s]
                if Ao is not None:
                    if i + 1 < n:
                        t += Ao[i, r, s] * x[i + 1, s]
                    if i > 0:
                        t += Ao[i - 1, s, r] * x[i - 1, s]
            out[i, r] = t


@kernel_helper
def invert_spd(A, out, work):
    """out = A⁻¹ for a small symmetric positive-definite A, by Gauss–Jordan without pivoting;
    False (out undefined) when a pivot is not positive: A is not positive definite."""
    m = A.shape[0]
    work[:, :] = A
    out[:, :] = 0.0
    for p in range(m):
        out[p, p] = 1.0
    for p in range(m):
        if not work[p, p] > 0.0:
            return False
        d = 1.0 / work[p, p]
        for s in range(m):
            work[p, s] *= d
            out[p, s] *= d
        for r in range(m):
            e = work[r, p]
            if r != p and e != 0.0:
                for s in range(m):
                    work[r, s] -= e * work[p, s]
                    out[r, s] -= e * out[p, s]
    return True


@kernel_helper
def eliminate(A, B, Zinv, K, Z):
    """Z = A − B Zinv Bᵀ, one step of a block elimination (5 x 5 blocks; K = B Zinv)."""
    for r in range(C):
        for s in range(C):
            t = 0.0
            for m in range(C):
                t += B[r, m] * Zinv[m, s]
            K[r, s] = t
    for r in range(C):
        for s in range(C):
            t = A[r, s]
            for m in range(C):
                t -= K[r, m] * B[s, m]
            Z[r, s] = t


@kernel_helper
def block_times(A, i, x, j):
    """A[i] x[j] (5), A (n x 5 x 5), x (n x 5)."""
    return (
        A[i, 0, 0] * x[j, 0] + A[i, 0, 1] * x[j, 1] + A[i, 0, 2] * x[j, 2] + A[i, 0, 3] * x[j, 3]
        + A[i, 0, 4] * x[j, 4],
        A[i, 1, 0] * x[j, 0] + A[i, 1, 1] * x[j, 1] + A[i, 1, 2] * x[j, 2] + A[i, 1, 3] * x[j, 3]
        + A[i, 1, 4] * x[j, 4],
        A[i, 2, 0] * x[j, 0] + A[i, 2, 1] * x[j, 1] + A[i, 2, 2] * x[j, 2] + A[i, 2, 3] * x[j, 3]
        + A[i, 2, 4] * x[j, 4],
        A[i, 3, 0] * x[j, 0] + A[i, 3, 1] * x[j, 1] + A[i, 3, 2] * x[j, 2] + A[i, 3, 3] * x[j, 3]
        + A[i, 3, 4] * x[j, 4],
        A[i, 4, 0] * x[j, 0] + A[i, 4, 1] * x[j, 1] + A[i, 4, 2] * x[j, 2] + A[i, 4, 3] * x[j, 3]
        + A[i, 4, 4] * x[j, 4],
    )


@kernel_helper
def sweep(Dinv, Ao, b, source, previous, omega, out, t):
    """out_i = ω 𝒜_ii⁻¹ (b_i − 𝒜_{i,i−1} s_{i−1} − 𝒜_{i,i+1} s_{i+1}) + (1 − ω) previous_i,
    s = source, from the base to the tip; returns (‖out − source‖², ‖out‖²). Jacobi (eq. 15):
    ω = 1, out apart from source; Gauss–Seidel (16) and SOR (17): source, previous and out the
    same array, so s_{i−1} is already the new iterate; J-SI (Table 1): previous = f⁽ⁱ⁻¹⁾ and
    ω = ρ̄. t (5 x 5) is a workspace."""
    n = b.shape[0]
    change = norm = 0.0
    for i in range(n):
        for r in range(C):
            t[0, r] = b[i, r]
            for s in range(C):
                if i > 0:
                    t[0, r] -= Ao[i - 1, s, r] * source[i - 1, s]
                if i + 1 < n:
                    t[0, r] -= Ao[i, r, s] * source[i + 1, s]
        jacobi = block_times(Dinv, i, t, 0)
        for r in range(C):
            new = omega * jacobi[r] + (1.0 - omega) * previous[i, r]
            change += (new - source[i, r]) ** 2
            norm += new * new
            out[i, r] = new
    return change, norm


@kernel_helper
def relative(change, norm):
    """‖f⁽ⁱ⁾ − f⁽ⁱ⁻¹⁾‖ / ‖f⁽ⁱ⁾‖ from the squares (Sharf & D'Eleuterio §5)."""
    if norm > 0.0:
        return np.sqrt(change / norm)
    return 0.0 if change == 0.0 else np.inf


@kernel_helper
def jacobi_spectral_radius(Ad, Ao, Dinv, y, Ay, Dy):
    """An estimate of ρ(B), B = 1 − D⁻¹𝒜 the block-Jacobi iteration matrix: the eigenvalues of
    D⁻¹𝒜 are 1 ± μ (𝒜 is consistently ordered), so ρ(B) = λ_max(D⁻¹𝒜) − 1, from the Rayleigh
    quotient yᵀ𝒜y / yᵀDy after POWER_STEPS power iterations (a lower bound)."""
    y[:, :] = 1.0
    estimate = 0.0
    for _ in range(POWER_STEPS):
        block_product(Ad, Ao, y, Ay)
        block_product(Ad, None, y, Dy)
        estimate = np.sum(y * Ay) / np.sum(y * Dy) - 1.0
        for i in range(y.shape[0]):
            store(y, i, block_times(Dinv, i, Ay, i))
        y /= np.sqrt(np.sum(y * y))
    return min(max(estimate, 0.0), 1.0 - 1e-12)


@kernel_helper
def iteration_workspace(n):
    """(Dinv, f_prev, r, r_prev, z, Az, t): the arrays of the iterative solvers."""
    return (
        np.empty((n, C, C)), np.empty((n, C)), np.empty((n, C)), np.empty((n, C)),
        np.empty((n, C)), np.empty((n, C)), np.empty((C, C)),
    )


@kernel_helper
def stationary(Dinv, Ao, b, x, scheme, omega, mu, tol, max_iterations, iw):
    """Jacobi, Gauss–Seidel, SOR or J-SI from x; returns (iterations, relative change, x)."""
    previous, t = iw[1], iw[6]
    previous[:, :] = x
    rho = 1.0
    change = np.inf
    iterations = 0
    while change > tol and iterations < max_iterations:
        iterations += 1
        if scheme == JACOBI:
            step = sweep(Dinv, Ao, b, x, x, 1.0, previous, t)
            x, previous = previous, x
        elif scheme == JACOBI_SI:  # Table 1: ρ̄_1 = 1, ρ̄_2 = (1 − μ̄²/2)⁻¹, ρ̄ = (1 − μ̄²ρ̄/4)⁻¹
            rho = 1.0 if iterations == 1 else 1.0 / (
                1.0 - (0.5 if iterations == 2 else 0.25 * rho) * mu * mu)
            step = sweep(Dinv, Ao, b, x, previous, rho, previous, t)
            x, previous = previous, x
        else:  # Gauss–Seidel (ω = 1) and SOR
            step = sweep(Dinv, Ao, b, x, x, omega, x, t)
        change = relative(step[0], step[1])
    return iterations, change, x


@kernel_helper
def jacobi_cg(Ad, Ao, Dinv, b, x, tol, max_iterations, iw):
    """J-CG in Table 1's three-term form: z = D⁻¹(b − 𝒜 f), γ = (z, Dz)/(z, 𝒜z),
    ρ_{i+1} = (1 − (γ_{i+1}/γ_i) ((z⁽ⁱ⁾, Dz⁽ⁱ⁾)/(z⁽ⁱ⁻¹⁾, Dz⁽ⁱ⁻¹⁾)) / ρ_i)⁻¹,
    f⁽ⁱ⁺¹⁾ = ρ (f⁽ⁱ⁾ + γ z) + (1 − ρ) f⁽ⁱ⁻¹⁾; returns (iterations, relative change, x)."""
    _, previous, r, r_previous, z, Az, _ = iw
    block_product(Ad, Ao, x, Az)
    r[:, :] = b - Az
    previous[:, :] = x
    r_previous[:, :] = r
    rho = gamma = zDz = 1.0
    change = np.inf
    iterations = 0
    while change > tol and iterations < max_iterations:
        for i in range(x.shape[0]):
            store(z, i, block_times(Dinv, i, r, i))
        block_product(Ad, Ao, z, Az)
        zDz_next = np.sum(z * r)
        if zDz_next == 0.0:  # the exact answer already
            change = 0.0
            break
        gamma_next = zDz_next / np.sum(z * Az)
        rho = 1.0 if iterations == 0 else 1.0 / (1.0 - gamma_next / gamma * zDz_next / zDz / rho)
        gamma, zDz = gamma_next, zDz_next
        # previous becomes f⁽ⁱ⁺¹⁾, r_previous r⁽ⁱ⁺¹⁾ = ρ (r − γ 𝒜z) + (1 − ρ) r⁽ⁱ⁻¹⁾
        previous *= 1.0 - rho
        previous += rho * (x + gamma * z)
        r_previous *= 1.0 - rho
        r_previous += rho * (r - gamma * Az)
        change = relative(np.sum((previous - x) ** 2), np.sum(previous * previous))
        x, previous = previous, x
        r, r_previous = r_previous, r
        iterations += 1
    return iterations, change, x


@kernel_helper
def solve_iteratively(scheme, omega, mu, tol, max_iterations, ws, iw):
    """λ (in ws, holding the initial guess) by one of the iterative schemes; returns
    (iterations, relative change). ω NaN: Young's optimum 2 / (1 + √(1 − μ̄²)); μ̄ NaN: the
    estimate of ρ(B)."""
    Ad, Ao, b, lam = ws[6], ws[7], ws[14], ws[15]
    Dinv, y, Ay, Dy = iw[0], iw[2], iw[3], iw[4]
    for i in range(b.shape[0]):
        invert_spd(Ad[i], Dinv[i], iw[6])
    if scheme == JACOBI_CG:
        iterations, change, x = jacobi_cg(Ad, Ao, Dinv, b, lam, tol, max_iterations, iw)
    else:
        needs_mu = (scheme == SOR and np.isnan(omega)) or scheme == JACOBI_SI
        if needs_mu and np.isnan(mu):
            mu = jacobi_spectral_radius(Ad, Ao, Dinv, y, Ay, Dy)
        if scheme == SOR and np.isnan(omega):
            omega = 2.0 / (1.0 + np.sqrt(1.0 - mu * mu))
        if scheme != SOR:
            omega = 1.0
        iterations, change, x = stationary(Dinv, Ao, b, lam, scheme, omega, mu, tol,
                                           max_iterations, iw)
    lam[:, :] = x
    return iterations, change


@kernel
def forward_dynamics_constraint_forces(tree, gravity, q, qd, tau, f_ext, guess, warm, scheme,
                                       tol, max_iterations, omega, spectral_radius, qdd, stats):
    """q̈ (B, n) by an iterative solve of the constraint forces for a batch q, qd, tau (B, n),
    f_ext (B, n, 6); from the constraint forces of the q̈ in guess (B, n) when warm, else from
    λ = 0. stats (B, 2): iterations, relative change. One signature for every use, so the
    kernel compiles once."""
    check_chain(tree)
    B, n = q.shape
    ws, iw = system_workspace(n), iteration_workspace(n)
    for b in range(B):
        a_root = assemble(tree, gravity, q[b], qd[b], tau[b], f_ext[b], ws)
        if warm:
            constraint_forces_of(tree, guess[b], a_root, ws)
        else:
            ws[15][:, :] = 0.0
        stats[b, 0], stats[b, 1] = solve_iteratively(scheme, omega, spectral_radius, tol,
                                                     max_iterations, ws, iw)
        joint_accelerations(ws[15], ws[12], a_root, ws, qdd[b])

