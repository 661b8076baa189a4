"""Forward dynamics through the joint constraint forces, 𝒜 λ = b (Sharf & D'Eleuterio,
"An iterative approach to multibody simulation dynamics suitable for parallel implementation",
eqs. 10–13), solved iteratively:
Jacobi (eq. 15), Gauss–Seidel (16), SOR (17), Chebyshev semi-iteration J-SI and
conjugate-gradient-accelerated Jacobi J-CG (Table 1), stopping when the relative change of λ
between two iterates is ≤ tol (§5). The exact solves of the same system are in schur.py.

Kinematic trees (joint i's parent p(i) < i, several children per body allowed), every quantity
in world coordinates about the world origin (papers/README.md, "The constraint-force
formulation, restated", there for a chain). Body i hangs from joint i; the force joint i exerts
on it is f_i = H_i τ_i + W_i λ_i, H_i = S_i / |S_i|² (S_iᵀ H_i = 1) and W_i (6 x 5,
orthonormal, S_iᵀ W_i = 0) the columns ≠ k_i of the Householder reflector 1 − 2 u_i u_iᵀ that
maps S_i / |S_i| to ∓e_{k_i}. With I_i a_i = f_i − Σ_{c child of i} f_c − β_i
(β_i = v_i ×* I_i v_i − f_ext,i) and W_iᵀ(a_i − a_p − c_i) = 0 (p = p(i), c_i = v_i × S_i q̇_i,
a of the base = −g), 𝒜 = Wᵀ𝓟ᵀ𝓜⁻¹𝓟W = Σ_bodies E_bᵀ Φ_b E_b with E_b = W_b − Σ_c W_c (row b
of 𝓟W), so only a body's own joint and its children's joints meet in its Φ_b = I_b⁻¹:

    𝒜_ii = W_iᵀ (Φ_i + Φ_p) W_i,   𝒜_{p,i} = −W_pᵀ Φ_p W_i,   𝒜_{i,s} = W_iᵀ Φ_p W_s
    b_i = W_iᵀ (c_i − ā_i + ā_p),   ā_i = Φ_i (H_i τ_i − Σ_c H_c τ_c − β_i)

(s a sibling of i; Φ of the fixed base is 0, so joints on the base are coupled only through
their subtrees), then a_i = ā_i + Φ_i (W_i λ_i − Σ_c W_c λ_c) and q̈_i = H_iᵀ (a_i − a_p − c_i).
On a chain 𝒜 is block tridiagonal. Storage: Ad[i] = 𝒜_ii, Ao[i − 1] = 𝒜_{p(i),i} (on a chain
𝒜_{i−1,i}; zero for a joint on the base), the sibling blocks from Φ_p when they are used.
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
    "method 'schur_bcr' (block cyclic reduction of the block-tridiagonal constraint-force "
    "system) needs a serial chain (the parent of joint i is joint i-1); this robot is a tree: "
    "the constraint-force methods 'schur' (forward_dynamics and mass_matrix_inverse), "
    "'jacobi', 'gauss_seidel', 'sor', 'jacobi_si' and 'jacobi_cg' work on trees"
)
MASSLESS = (
    "the constraint-force methods need every moving body to have a positive mass and an "
    "invertible rotational inertia (they use each body's inverse spatial inertia)"
)


@kernel_helper
def is_chain(tree):
    """Whether the parent of every joint i is joint i − 1."""
    for i in range(tree.shape[0]):
        if parent_of(tree, i) != i - 1:
            return False
    return True


@kernel_helper
def check_chain(tree):
    if not is_chain(tree):
        raise ValueError(CHAIN_ONLY)


@kernel_helper
def check_masses(tree):
    for i in range(tree.shape[0]):
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
    J = (R I_c Rᵀ)⁻¹ (RBDA eq. 2.63 inverted), so Φ = [[1/m − P [c]×, P], [Pᵀ, J]], P = [c]× J."""
    mass = body[0]
    c = add3(X[9:12], rotate(X, body[1:4]))
    J = rotate_inertia(X, inverse3(body[4:13]))
    P = (cross(c, J[0:3]), cross(c, J[3:6]), cross(c, J[6:9]))  # columns of P (J symmetric)
    for r in range(3):
        Pc = cross((P[0][r], P[1][r], P[2][r]), c)  # row r of P [c]×
        for s in range(3):
            Phi[i, r, s] = (1.0 / mass if r == s else 0.0) - Pc[s]
            Phi[i, r, 3 + s] = Phi[i, 3 + s, r] = P[s][r]
            Phi[i, 3 + r, 3 + s] = J[3 * r + s]


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
def reduced_block(G, u, k, w, m, sign, out):
    """out (5 x 5) = sign · W_uᵀ G W_w for a symmetric 6 x 6 G, W_u the columns ≠ k of
    1 − 2 u uᵀ (and W_w those ≠ m of 1 − 2 w wᵀ), from
    (1 − 2 u uᵀ) G (1 − 2 w wᵀ) = G − 2 u zᵀ − 2 y wᵀ, y = G w, z = G u − 2 (uᵀ y) w."""
    y = square_times(G, w)
    z = add6(square_times(G, u), scale6(-2.0 * dot6(u, y), w))
    for a in range(C):
        r = skip(a, k)
        for b in range(C):
            s = skip(b, m)
            out[a, b] = sign * (G[r, s] - 2.0 * (u[r] * z[s] + y[r] * w[s]))


@kernel_helper
def square_times(G, x):
    """G x for a 6 x 6 G."""
    return (
        dot6(vector6(G, 0), x), dot6(vector6(G, 1), x), dot6(vector6(G, 2), x),
        dot6(vector6(G, 3), x), dot6(vector6(G, 4), x), dot6(vector6(G, 5), x),
    )


@kernel_helper
def system_workspace(n):
    """The arrays of the constraint-force system of n joints, as a tuple (see assemble_matrix,
    assemble_rhs): λ (n x 5) at 15, then the parent of each joint (16) and whether each body
    has several children (17), whether any body has (18)."""
    return (
        np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 10)), np.empty((n, 6, 6)),
        np.empty((n, 6)), np.empty(n, dtype=np.int64), np.empty((n, C, C)),
        np.empty((n, C, C)), np.empty((6, 6)), np.empty((6, 6)), np.empty((n, 6)),
        np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, C)),
        np.empty((n, C)), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.bool_),
        np.empty(1, dtype=np.bool_),
    )


@kernel_helper
def store_topology(tree, ws):
    """ws's parent of each joint and whether each body has several children (in depth-first
    order the first child of p is p + 1, so a child after it is a second one)."""
    parent, branches = ws[16], ws[17]
    ws[18][0] = False
    for i in range(tree.shape[0]):
        p = parent_of(tree, i)
        parent[i] = p
        branches[i] = False
        if p >= 0 and i != p + 1:
            branches[p] = True
            ws[18][0] = True


@kernel_helper
def store_chain_topology(ws, m):
    """ws's topology for a chain of its first m links."""
    for i in range(m):
        ws[16][i] = i - 1
        ws[17][i] = False
    ws[18][0] = False


@routine
def assemble_links(tree, q, ws):
    """The projections, Φ_i, the W_i and the topology at q."""
    X_world, S_world, inertia, Phi, house, pivot = ws[:6]
    forward_kinematics(tree, q, X_world, S_world)
    world_inertias(tree, X_world, inertia)
    for i in range(q.shape[0]):
        store_link(tree, X_world, S_world, i, i, Phi, house, pivot)
    store_topology(tree, ws)


@routine
def assemble_matrix(tree, q, ws):
    """assemble_links and the blocks 𝒜_ii (Ad) and 𝒜_{p(i),i} (Ao) at q."""
    assemble_links(tree, q, ws)
    assemble_blocks(ws, q.shape[0])


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
def diagonal_block(Phi, i, p, u, k, G, out):
    """out (5 x 5) = 𝒜_ii = W_iᵀ (Φ_i + Φ_p) W_i, W_i from (u, k), Φ_p = 0 where p < 0 (the
    root); G is a 6 x 6 workspace."""
    for r in range(6):
        for s in range(6):
            G[r, s] = Phi[i, r, s] + (Phi[p, r, s] if p >= 0 else 0.0)
    reduced_block(G, u, k, u, k, 1.0, out)


@kernel_helper
def assemble_blocks(ws, n):
    """The blocks 𝒜_ii (Ad) and 𝒜_{p(i),i} (Ao[i − 1]) of the first n links of ws, from their
    Φ_i, W_i and topology."""
    Phi, house, pivot, Ad, Ao, G = ws[3:9]
    parent = ws[16]
    for i in range(n):
        p = parent[i]
        u, k = vector6(house, i), pivot[i]
        diagonal_block(Phi, i, p, u, k, G, Ad[i])
        if i > 0 and p >= 0:
            reduced_block(Phi[p], vector6(house, p), pivot[p], u, k, -1.0, Ao[i - 1])
        elif i > 0:
            Ao[i - 1, :, :] = 0.0


@kernel_helper
def joint_torque_force(S_world, tau, i):
    """H_i τ_i."""
    S = vector6(S_world, i)
    return scale6(tau[i] / dot6(S, S), S)


@routine
def assemble_rhs(tau, c, bias, a_root, ws):
    """ā (n x 6) and b (n x 5) for torques tau; c and bias None (a body at rest) or (n x 6).
    ā holds each body's net force H_i τ_i − Σ_c H_c τ_c − β_i until it is multiplied by Φ_i."""
    _, S_world, _, Phi, house, pivot = ws[:6]
    abar, b, parent = ws[10], ws[14], ws[16]
    n = tau.shape[0]
    for i in range(n):
        g = joint_torque_force(S_world, tau, i)
        store(abar, i, add6(g, scale6(-1.0, vector6(bias, i))) if bias is not None else g)
        if parent[i] >= 0:
            store(abar, parent[i], add6(vector6(abar, parent[i]), scale6(-1.0, g)))
    for i in range(n):
        a_i = matrix_times(Phi, i, vector6(abar, i))
        store(abar, i, a_i)
        d = add6(vector6(abar, parent[i]) if parent[i] >= 0 else a_root, scale6(-1.0, a_i))
        if c is not None:
            d = add6(d, vector6(c, i))
        store(b, i, project(house, pivot, i, d))


@routine
def joint_accelerations(lam, c, a_root, ws, qdd):
    """q̈ from the constraint forces λ: a_i = ā_i + Φ_i (W_i λ_i − Σ_c W_c λ_c),
    q̈_i = H_iᵀ (a_i − a_p − c_i). ws[11] (the velocities, no longer needed) holds the net
    constraint force on each body, then its acceleration."""
    _, S_world, _, Phi, house, pivot = ws[:6]
    abar, a, parent = ws[10], ws[11], ws[16]
    n = qdd.shape[0]
    for i in range(n):
        g = lift(house, pivot, i, lam)
        store(a, i, g)
        if parent[i] >= 0:
            store(a, parent[i], add6(vector6(a, parent[i]), scale6(-1.0, g)))
    for i in range(n):
        a_i = add6(vector6(abar, i), matrix_times(Phi, i, vector6(a, i)))
        store(a, i, a_i)
        d = add6(a_i, scale6(-1.0, vector6(a, parent[i]) if parent[i] >= 0 else a_root))
        if c is not None:
            d = add6(d, scale6(-1.0, vector6(c, i)))
        S = vector6(S_world, i)
        qdd[i] = dot6(S, d) / dot6(S, S)


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


@routine
def family_sums(ws, x, psi, sigma):
    """For each body p with several children, psi_p (n x 5) = Σ 𝒜_{p,c} x_c over its children
    c but the first (p + 1) and sigma_p (n x 6) = Σ W_c x_c over all its children."""
    house, pivot, Ao, parent, branches = ws[4], ws[5], ws[7], ws[16], ws[17]
    n = x.shape[0]
    for p in range(n):
        if branches[p]:
            psi[p, :] = 0.0
            sigma[p, :] = 0.0
    for c in range(n):
        p = parent[c]
        if p >= 0 and branches[p]:
            store(sigma, p, add6(vector6(sigma, p), lift(house, pivot, c, x)))
            if c != p + 1:
                Ax = block_times(Ao, c - 1, x, c)
                for r in range(C):
                    psi[p, r] += Ax[r]


@routine
def siblings_times(Phi, house, pivot, x, i, p, sigma):
    """Σ 𝒜_is x_s over the siblings s of joint i (parent p with several children):
    W_iᵀ Φ_p (σ_p − W_i x_i), σ_p = Σ W_c x_c over p's children (family_sums). Only rows
    on a branching body take it, so it is compiled once and called, not inlined into every
    sweep."""
    g = add6(vector6(sigma, p), scale6(-1.0, lift(house, pivot, i, x)))
    return project(house, pivot, i, matrix_times(Phi, p, g))


@routine
def add_lifted(sigma, p, house, pivot, i, x, sign):
    """σ_p += sign W_i x_i: a Gauss–Seidel or SOR sweep keeps σ_p on the new iterate."""
    store(sigma, p, add6(vector6(sigma, p), scale6(sign, lift(house, pivot, i, x))))


@kernel_helper
def add5(a, b):
    """a + b for two 5-vectors (tuples), as spatial.add6 for 6."""
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]


@kernel_helper
def add_transposed_times(out, row, A, k, x, j, sign):
    """out[row] += sign A[k]ᵀ x[j] (5 x 5 blocks, n x 5 vectors)."""
    t = transposed_block_times(A, k, x, j)
    for r in range(C):
        out[row, r] += sign * t[r]


@kernel_helper
def block_product(ws, x, out, iw):
    """out = 𝒜 x: sweep's pass over the rows with 𝒜's diagonal blocks; iw from
    iteration_workspace."""
    sweep(ws, ws[6], x, x, x, 1.0, 1.0, out, False, iw, True)


@kernel_helper
def diagonal_product(Ad, x, out):
    """out = D x, D the block diagonal of 𝒜."""
    for i in range(x.shape[0]):
        store(out, i, block_times(Ad, i, x, i))


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
def transposed_block_times(A, i, x, j):
    """A[i]ᵀ x[j] (5), A (n x 5 x 5), x (n x 5)."""
    return (
        column_times(A, i, 0, x, j), column_times(A, i, 1, x, j), column_times(A, i, 2, x, j),
        column_times(A, i, 3, x, j), column_times(A, i, 4, x, j),
    )


@kernel_helper
def column_times(A, i, c, x, j):
    """Column c of A[i] times x[j]."""
    return (A[i, 0, c] * x[j, 0] + A[i, 1, c] * x[j, 1] + A[i, 2, c] * x[j, 2]
            + A[i, 3, c] * x[j, 3] + A[i, 4, c] * x[j, 4])


@kernel_helper
def sweep(ws, D, b, source, previous, omega, gamma, out, in_place, iw, product):
    """out_i = ω J_i + (1 − ω) previous_i, J_i = γ 𝒜_ii⁻¹ (b_i − Σ_{j ≠ i} 𝒜_ij s_j)
    + (1 − γ) s_i, s = source, D[i] = 𝒜_ii⁻¹, in index order (parents before children);
    returns (‖out − source‖², ‖out‖²). Jacobi (eq. 15): ω = 1, out apart from source;
    Gauss–Seidel (16) and SOR (17): γ = 1, `in_place`, source, previous and out the same array,
    so a parent's and the earlier siblings' s_j are already the new iterate (the children's
    come later: their products are taken before the sweep); J-SI (Table 1):
    previous = f⁽ⁱ⁻¹⁾ and ω = ρ̄. γ ≠ 1 extrapolates the Jacobi step (jacobi_extrapolation).
    When `product` (block_product), out_i = D_i s_i + Σ_{j ≠ i} 𝒜_ij s_j instead, D = 𝒜's
    diagonal blocks. The row sums: the first child's 𝒜_{i,i+1} s_{i+1}, the other children's
    psi_i, the parent's 𝒜_{i,p} s_p = 𝒜_{p,i}ᵀ s_p and the siblings' (siblings_times), are
    written in the loop: the same sums in an inlined helper of their own, branches and all,
    made a chain's sweep 5x slower (most likely its array arguments, reference-counted at every
    row). iw from iteration_workspace."""
    house, pivot, Ao, parent, branches = ws[4], ws[5], ws[7], ws[16], ws[17]
    t, psi, sigma = iw[6], iw[7], iw[8]
    n = source.shape[0]
    if ws[18][0]:
        family_sums(ws, source, psi, sigma)
    change = norm = 0.0
    for i in range(n):
        off = (0.0, 0.0, 0.0, 0.0, 0.0)
        if i + 1 < n and parent[i + 1] == i:
            off = block_times(Ao, i, source, i + 1)
        if branches[i]:
            off = add5(off, (psi[i, 0], psi[i, 1], psi[i, 2], psi[i, 3], psi[i, 4]))
        p = parent[i]
        if p >= 0:
            off = add5(off, transposed_block_times(Ao, i - 1, source, p))
            if branches[p]:
                off = add5(off, siblings_times(ws[3], house, pivot, source, i, p, sigma))
        if product:
            store(out, i, add5(block_times(D, i, source, i), off))
            continue
        for r in range(C):
            t[0, r] = b[i, r] - off[r]
        jacobi = block_times(D, i, t, 0)
        shared = in_place and p >= 0 and branches[p]
        if shared:  # σ_p follows the new iterate of i
            add_lifted(sigma, p, house, pivot, i, source, -1.0)
        for r in range(C):
            step = gamma * jacobi[r] + (1.0 - gamma) * source[i, r]
            new = omega * step + (1.0 - omega) * previous[i, r]
            change += (new - source[i, r]) ** 2
            norm += new * new
            out[i, r] = new
        if shared:
            add_lifted(sigma, p, house, pivot, i, out, 1.0)
    return change, norm


@kernel_helper
def relative(change, norm):
    """‖f⁽ⁱ⁾ − f⁽ⁱ⁻¹⁾‖ / ‖f⁽ⁱ⁾‖ from the squares (Sharf & D'Eleuterio §5)."""
    if norm > 0.0:
        return np.sqrt(change / norm)
    return 0.0 if change == 0.0 else np.inf


@kernel_helper
def extreme_eigenvalue(ws, Dinv, shift, iw):
    """An eigenvalue of D⁻¹𝒜 at an end of its spectrum, the one farthest from `shift`: the
    Rayleigh quotient yᵀ𝒜y / yᵀDy after POWER_STEPS power iterations y ← (D⁻¹𝒜 − shift) y
    (an inner bound: the largest from below, the smallest from above)."""
    y, Ay, Dy = iw[2], iw[3], iw[4]
    y[:, :] = 1.0
    estimate = 0.0
    for _ in range(POWER_STEPS):
        block_product(ws, y, Ay, iw)
        diagonal_product(ws[6], y, Dy)
        estimate = np.sum(y * Ay) / np.sum(y * Dy)
        for i in range(y.shape[0]):
            DAy = block_times(Dinv, i, Ay, i)
            for r in range(C):
                y[i, r] = DAy[r] - shift * y[i, r]
        y /= np.sqrt(np.sum(y * y))
    return estimate


@kernel_helper
def jacobi_extrapolation(ws, Dinv, mu, iw):
    """(γ, μ̄): the extrapolation γ of the block-Jacobi step and the spectral radius μ̄ of its
    iteration matrix 1 − γ D⁻¹𝒜 (Hageman & Young's extrapolated Jacobi method), from the ends
    λ_min, λ_max of the spectrum of D⁻¹𝒜: γ = 2 / (λ_min + λ_max),
    μ̄ = (λ_max − λ_min) / (λ_max + λ_min). Without a body with several children (chains) 𝒜 is
    consistently ordered, the eigenvalues of D⁻¹𝒜 are 1 ± μ, so γ = 1 (the plain Jacobi step)
    and μ̄ = λ_max − 1 = ρ(B); μ̄ given (not NaN) is taken as that. With sibling joints coupled
    through their parent's Φ, λ_max may pass 2 (ρ(B) > 1: plain Jacobi diverges) and λ_min
    needs its own estimate. μ̄ is kept below 1."""
    if not np.isnan(mu):
        return 1.0, mu
    high = extreme_eigenvalue(ws, Dinv, 0.0, iw)
    if not ws[18][0]:
        return 1.0, min(max(high - 1.0, 0.0), 1.0 - 1e-12)
    low = extreme_eigenvalue(ws, Dinv, high, iw)
    return 2.0 / (low + high), min(max((high - low) / (high + low), 0.0), 1.0 - 1e-12)


@kernel_helper
def iteration_workspace(n):
    """(Dinv, f_prev, r, r_prev, z, Az, t, psi, sigma): the arrays of the iterative solvers."""
    return (
        np.empty((n, C, C)), np.empty((n, C)), np.empty((n, C)), np.empty((n, C)),
        np.empty((n, C)), np.empty((n, C)), np.empty((C, C)), np.empty((n, C)),
        np.empty((n, 6)),
    )


@kernel_helper
def stationary(ws, Dinv, b, x, scheme, omega, gamma, mu, tol, max_iterations, iw):
    """Jacobi, Gauss–Seidel, SOR or J-SI from x, the Jacobi steps extrapolated by γ; returns
    (iterations, relative change, x)."""
    previous = iw[1]
    previous[:, :] = x
    rho = 1.0
    change = np.inf
    iterations = 0
    while change > tol and iterations < max_iterations:
        iterations += 1
        if scheme == JACOBI:
            step = sweep(ws, Dinv, b, x, x, 1.0, gamma, previous, False, iw, False)
            x, previous = previous, x
        elif scheme == JACOBI_SI:  # Table 1: ρ̄_1 = 1, ρ̄_2 = (1 − μ̄²/2)⁻¹, ρ̄ = (1 − μ̄²ρ̄/4)⁻¹
            rho = 1.0 if iterations == 1 else 1.0 / (
                1.0 - (0.5 if iterations == 2 else 0.25 * rho) * mu * mu)
            step = sweep(ws, Dinv, b, x, previous, rho, gamma, previous, False, iw, False)
            x, previous = previous, x
        else:  # Gauss–Seidel (ω = 1) and SOR
            step = sweep(ws, Dinv, b, x, x, omega, 1.0, x, True, iw, False)
        change = relative(step[0], step[1])
    return iterations, change, x


@kernel_helper
def jacobi_cg(ws, Dinv, b, x, tol, max_iterations, iw):
    """J-CG in Table 1's three-term form: z = D⁻¹(b − 𝒜 f), γ = (z, Dz)/(z, 𝒜z),
    ρ_{i+1} = (1 − (γ_{i+1}/γ_i) ((z⁽ⁱ⁾, Dz⁽ⁱ⁾)/(z⁽ⁱ⁻¹⁾, Dz⁽ⁱ⁻¹⁾)) / ρ_i)⁻¹,
    f⁽ⁱ⁺¹⁾ = ρ (f⁽ⁱ⁾ + γ z) + (1 − ρ) f⁽ⁱ⁻¹⁾; returns (iterations, relative change, x)."""
    _, previous, r, r_previous, z, Az = iw[:6]
    block_product(ws, x, Az, iw)
    r[:, :] = b - Az
    previous[:, :] = x
    r_previous[:, :] = r
    rho = gamma = zDz = 1.0
    change = np.inf
    iterations = 0
    while change > tol and iterations < max_iterations:
        for i in range(x.shape[0]):
            store(z, i, block_times(Dinv, i, r, i))
        block_product(ws, z, Az, iw)
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
    (iterations, relative change). ω NaN: Young's optimum 2 / (1 + √(1 − μ̄²)) (exact for a
    consistently ordered 𝒜, a chain; on a tree from the μ̄ of the extrapolated Jacobi method);
    μ̄ NaN: its estimate (jacobi_extrapolation), which Jacobi needs only on a tree with
    branches."""
    Ad, b, lam = ws[6], ws[14], ws[15]
    Dinv = iw[0]
    for i in range(b.shape[0]):
        invert_spd(Ad[i], Dinv[i], iw[6])
    if scheme == JACOBI_CG:
        iterations, change, x = jacobi_cg(ws, Dinv, b, lam, tol, max_iterations, iw)
    else:
        gamma = 1.0
        needs_mu = ((scheme == SOR and np.isnan(omega)) or scheme == JACOBI_SI
                    or (scheme == JACOBI and ws[18][0]))
        if needs_mu:
            gamma, mu = jacobi_extrapolation(ws, Dinv, mu, iw)
        if scheme == SOR and np.isnan(omega):
            omega = 2.0 / (1.0 + np.sqrt(1.0 - mu * mu))
        if scheme != SOR:
            omega = 1.0
        iterations, change, x = stationary(ws, Dinv, b, lam, scheme, omega, gamma, mu, tol,
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
    check_masses(tree)
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

