"""The joint constraint-force system 𝒜 λ = b (Sharf & D'Eleuterio, "An iterative approach to
multibody simulation dynamics suitable for parallel implementation", eqs. 10–13): its
assembly, the constraint bases W_i and the 5 x 5 block algebra. Its iterative solves are in
constraint_iterations.py, its exact solves in schur.py and cyclic_reduction.py.

Kinematic trees (joint i's parent p(i) < i, several children per body allowed), every quantity
in world coordinates about the world origin (docs/algorithms.md, "The constraint-force
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

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.fixed_frame import (
    NewtonEulerWorkspace,
    gravity_acceleration,
    newton_euler,
    velocity_terms,
    world_inertias,
)
from robodyn_ros.dynamics.jit import kernel_helper, routine
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.linalg import LAMBDA_SIZE
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
from robodyn_ros.dynamics.tree import POSE, body_inertia, is_chain, parent_of

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
def check_chain(tree):
    """Refuse a tree to the constraint-force methods that need a chain."""
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
    for a in range(LAMBDA_SIZE):
        r = skip(a, k)
        for b in range(LAMBDA_SIZE):
            s = skip(b, m)
            out[a, b] = sign * (G[r, s] - 2.0 * (u[r] * z[s] + y[r] * w[s]))


@kernel_helper
def square_times(G, x):
    """G x for a 6 x 6 G."""
    return (
        dot6(vector6(G, 0), x), dot6(vector6(G, 1), x), dot6(vector6(G, 2), x),
        dot6(vector6(G, 3), x), dot6(vector6(G, 4), x), dot6(vector6(G, 5), x),
    )


# The constraint-force system 𝒜 λ = b of n links (module docstring), world frame.
SystemWorkspace = namedtuple("SystemWorkspace", (
    "X_world",        # (n, POSE) each link's pose
    "S_world",        # (n, 6) each joint's motion axis S_i
    "inertia",        # (n, 10) each body's inertia, world frame
    "Phi",            # (n, 6, 6) Φ_i = I_i⁻¹
    "house",          # (n, 6) u_i of the reflector whose columns ≠ k_i are W_i
    "pivot",          # (n,) k_i
    "Ad",             # (n, 5, 5) 𝒜_ii
    "Ao",             # (n, 5, 5) 𝒜_{p(i),i} at i − 1
    "scratch",        # (6, 6) a 6 x 6 block each algorithm uses as its own
    "scratch_b",      # (6, 6) a second one
    "abar",           # (n, 6) ā_i, the acceleration with λ = 0
    "v",              # (n, 6) each body's velocity
    "c",              # (n, 6) c_i = v_i × S_i q̇_i
    "bias",           # (n, 6) β_i = v_i ×* I_i v_i − f_ext,i
    "b",              # (n, 5) the right-hand side
    "lam",            # (n, 5) λ, the constraint forces
    "a",              # (n, 6) the net constraint force on each body, then its acceleration
    "parent",         # (n,) p(i), −1 for a joint on the base
    "branching",      # (n,) whether body i has several children
    "any_branching",  # (1,) whether any body has
))


@kernel_helper
def system_workspace(n):
    """A SystemWorkspace of n links (see assemble_matrix, assemble_rhs)."""
    blocks, forces = (n, LAMBDA_SIZE, LAMBDA_SIZE), (n, LAMBDA_SIZE)
    return SystemWorkspace(
        np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 10)), np.empty((n, 6, 6)),
        np.empty((n, 6)), np.empty(n, dtype=np.int64), np.empty(blocks), np.empty(blocks),
        np.empty((6, 6)), np.empty((6, 6)), np.empty((n, 6)), np.empty((n, 6)),
        np.empty((n, 6)), np.empty((n, 6)), np.empty(forces), np.empty(forces),
        np.empty((n, 6)), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.bool_),
        np.empty(1, dtype=np.bool_),
    )


@kernel_helper
def store_topology(tree, ws):
    """ws's parent of each joint and whether each body has several children (in depth-first
    order the first child of p is p + 1, so a child after it is a second one)."""
    parent, branching = ws.parent, ws.branching
    ws.any_branching[0] = False
    for i in range(tree.shape[0]):
        p = parent_of(tree, i)
        parent[i] = p
        branching[i] = False
        if p >= 0 and i != p + 1:
            branching[p] = True
            ws.any_branching[0] = True


@kernel_helper
def store_chain_topology(ws, m):
    """ws's topology for a chain of its first m links."""
    for i in range(m):
        ws.parent[i] = i - 1
        ws.branching[i] = False
    ws.any_branching[0] = False


@routine
def assemble_links(tree, q, ws):
    """The projections, Φ_i, the W_i and the topology at q."""
    forward_kinematics(tree, q, ws.X_world, ws.S_world)
    world_inertias(tree, ws.X_world, ws.inertia)
    for i in range(tree.shape[0]):
        store_link(tree, ws.X_world, ws.S_world, i, i, ws.Phi, ws.house, ws.pivot)
    store_topology(tree, ws)


@routine
def assemble_matrix(tree, q, ws):
    """assemble_links and the blocks 𝒜_ii (Ad) and 𝒜_{p(i),i} (Ao) at q."""
    assemble_links(tree, q, ws)
    assemble_blocks(ws, tree.shape[0])


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
    Phi, house, pivot, Ad, Ao, G = ws.Phi, ws.house, ws.pivot, ws.Ad, ws.Ao, ws.scratch
    parent = ws.parent
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
    S_world, Phi, house, pivot = ws.S_world, ws.Phi, ws.house, ws.pivot
    abar, b, parent = ws.abar, ws.b, ws.parent
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
    q̈_i = H_iᵀ (a_i − a_p − c_i). ws.a holds the net constraint force on each body, then its
    acceleration."""
    S_world, Phi, house, pivot = ws.S_world, ws.Phi, ws.house, ws.pivot
    abar, a, parent = ws.abar, ws.a, ws.parent
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
    velocity_terms(tree, qd, f_ext, ws.X_world, ws.S_world, ws.inertia, ws.v, ws.c, ws.bias)
    a_root = gravity_acceleration(gravity)
    assemble_rhs(tau, ws.c, ws.bias, a_root, ws)
    return a_root


@kernel_helper
def constraint_forces_of(tree, qdd, a_root, ws):
    """λ_i = W_iᵀ f_i (into ws's λ), f_i the force joint i transmits when the robot moves with
    q̈: one Newton–Euler pass in the fixed frame (the warm start from a q̈)."""
    passes = NewtonEulerWorkspace(ws.a, np.empty((qdd.shape[0], 6)))
    newton_euler(tree, ws.S_world, ws.inertia, qdd, a_root, ws.c, ws.bias,
                 np.empty(qdd.shape[0]), passes)
    for i in range(qdd.shape[0]):
        store(ws.lam, i, project(ws.house, ws.pivot, i, vector6(passes.f, i)))


@kernel_helper
def add5(a, b):
    """a + b for two 5-vectors (tuples), as spatial.add6 for 6."""
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]


@kernel_helper
def add_transposed_times(out, row, A, k, x, j, sign):
    """out[row] += sign A[k]ᵀ x[j] (5 x 5 blocks, n x 5 vectors)."""
    t = transposed_block_times(A, k, x, j)
    for r in range(LAMBDA_SIZE):
        out[row, r] += sign * t[r]


@kernel_helper
def diagonal_product(Ad, x, out):
    """out = D x, D the block diagonal of 𝒜."""
    for i in range(x.shape[0]):
        store(out, i, block_times(Ad, i, x, i))




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
