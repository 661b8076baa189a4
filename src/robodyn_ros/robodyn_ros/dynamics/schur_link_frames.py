"""Forward dynamics by the exact O(N) solve of the constraint-force system 𝒜 λ = b (Sharf &
D'Eleuterio eqs. 10–13; the Schur complement of Fijany, docs/algorithms.md) in link frames, in
three passes like the articulated-body algorithm: kinematics and the right-hand side from the
root, the block LDLᵀ of 𝒜 leaves first, the constraint forces and q̈ from the root.

Each body has a link frame: its URDF frame turned by a fixed rotation A so that its joint
turns about, or slides along, z. There S = e_k (k = 5, ω_z, for a turn; k = 2, v_z, for a
slide), the constraint basis W (6 x 5) is the selection of the other five components, ordered
(v_x, v_y, v_z, ω_x, ω_y) for a turn and (v_x, v_y, ω_z, ω_x, ω_y) for a slide, and the body's
inverse inertia Φ = I⁻¹ is constant. The motion transform from the parent's link frame is
X = X_Z(q) X_T: X_T constant, X_Z the joint's turn or slide, which keeps e_k and the span of
W, on which it acts as one 5 x 5 matrix J of either kind (joint_motion5).

The elimination (as schur.leaf_first_ldlt, by bodies): once j's subtree is eliminated body j
answers a force g with a_j = ã_j + Φ̃_j g, Φ̃_j the inverse of its articulated inertia. The
pivot of joint j is Z_j = W_jᵀ (Φ̃_j + X_j Φ̃_p X_jᵀ) W_j, and eliminating λ_j gives the parent
Φ̃_p ← Φ̃_p − B Z_j⁻¹ Bᵀ and ã_p ← ã_p − B Z_j⁻¹ y_j, B = Φ̃_p X_jᵀ W_j,
y_j = W_jᵀ (c_j − ã_j + X_j ã_p); then λ_j = Z_j⁻¹ (y_j + Bᵀ h_p), h_p the force on p of the
joints still there when j was eliminated (λ_p's and the earlier siblings'). With
Ψ̂ = Wᵀ X_T Φ̃_p X_Tᵀ W and Ĝ = Φ̃_p X_Tᵀ W, Z_j = J Z' Jᵀ and B = Ĝ Jᵀ, so the elimination runs
on the pivot in the frame before the joint, Z' = J⁻¹ Wᵀ Φ̃_j W J⁻ᵀ + Ψ̂, with Ĝ, y' = J⁻¹ y and
λ = J⁻ᵀ λ'. On a chain Φ̃_p is still Φ_p when its one child is eliminated, so Ψ̂ and Ĝ are
constants (link_frames); a later child of a body with several computes them (through_joint).
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.constraint_system import LAMBDA_SIZE, check_masses, store_inverse_inertia
from robodyn_ros.dynamics.fixed_frame import ZERO6, gravity_acceleration
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.linalg import ldlt5, lower_solve5, upper_solve5
from robodyn_ros.dynamics.moments import is_revolute, rotate_inertia, store_at
from robodyn_ros.dynamics.spatial import (
    add6,
    body_inertia_times,
    compose,
    cross,
    dot3,
    dot6,
    force_to_parent,
    motion_cross_force,
    motion_cross_motion,
    motion_to_child,
    pose_at,
    rotate_back,
    scale6,
    store,
    transposed,
    vector6,
)
from robodyn_ros.dynamics.tree import PLACEMENT, body_inertia, parent_of, subspace

# The columns of a joint's row of the link-frame array (link_frames).
LINK_PARENT = 0
REVOLUTE = 1  # 1 for a turn, 0 for a slide
LAST_CHILD = 2  # 1 when no later sibling: the first of its parent's children eliminated
HAS_CHILD = 3
TRANSFORM = 4  # pose of the link frame at q = 0 in the parent's link frame (12), X_T
ALIGN = 16  # A (9, row-major): link-frame vectors → URDF body frame
BODY = 25  # mass, centre of mass (3), rotational inertia about it (9), link frame
PHI = 38  # Φ (6 x 6, row-major)
PSI = 74  # Ψ̂ = Wᵀ X_T Φ_p X_Tᵀ W (5 x 5), then Ĝ = Φ_p X_Tᵀ W (6 x 5), as through_joint
SPAN = 55  # writes them
ROW = PSI + SPAN  # row k of X_T (6): q̈ = a[k] − X_T[k] · a_p
LINK_WIDTH = ROW + 6

# A joint's motion transform X_Z: a turn about z by the angle of cosine α and sine β (γ = 0) or
# a slide by γ along z (α = 1, β = 0); on the span of W the 5 x 5 matrix J (joint_motion5).
JointMotion = namedtuple("JointMotion", ("alpha", "beta", "gamma"))


@kernel_helper
def unit(k):
    """e_k of R⁶."""
    return (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0,
            1.0 if k == 3 else 0.0, 1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0)


@kernel_helper
def axis_index(revolute):
    """k, the component of S = e_k: ω_z for a turn, v_z for a slide."""
    return 5 if revolute else 2


@kernel_helper
def project_link_frame(x, revolute):
    """Wᵀ x (5) for a 6-vector x."""
    return x[0], x[1], x[2] if revolute else x[5], x[3], x[4]


@kernel_helper
def lift_link_frame(y, revolute):
    """W y (6) for a 5-vector y."""
    return (y[0], y[1], y[2] if revolute else 0.0, y[3], y[4], 0.0 if revolute else y[2])


@kernel_helper
def inverse_motion(J):
    """J⁻¹ (a JointMotion): the turn back, or the slide back."""
    return JointMotion(J.alpha, -J.beta, -J.gamma)


@kernel_helper
def joint_motion_at(joint, j):
    """The JointMotion of joint j from the (α, β, γ) in row j of `joint`."""
    return JointMotion(joint[j, 0], joint[j, 1], joint[j, 2])


@kernel_helper
def joint_motion5(J, x):
    """J x = Wᵀ X_Z W x: the joint's motion transform J (a JointMotion) on the span of W."""
    alpha, beta, gamma = J.alpha, J.beta, J.gamma
    return (
        alpha * x[0] + beta * x[1] + gamma * x[4], alpha * x[1] - beta * x[0] - gamma * x[3],
        x[2], alpha * x[3] + beta * x[4], alpha * x[4] - beta * x[3],
    )


@kernel_helper
def link_joint_pose(T, J):
    """T · Z: the pose T of the link frame at q = 0 followed by the joint's turn about z or
    slide along z, J (a JointMotion)."""
    alpha, beta, gamma = J.alpha, J.beta, J.gamma
    return (
        alpha * T[0] + beta * T[1], alpha * T[1] - beta * T[0], T[2],
        alpha * T[3] + beta * T[4], alpha * T[4] - beta * T[3], T[5],
        alpha * T[6] + beta * T[7], alpha * T[7] - beta * T[6], T[8],
        T[9] + gamma * T[2], T[10] + gamma * T[5], T[11] + gamma * T[8],
    )


@kernel_helper
def joint_force5(J, x):
    """Jᵀ x, J a JointMotion (joint_motion5)."""
    alpha, beta, gamma = J.alpha, J.beta, J.gamma
    return (
        alpha * x[0] - beta * x[1], beta * x[0] + alpha * x[1], x[2],
        alpha * x[3] - beta * x[4] - gamma * x[1], alpha * x[4] + beta * x[3] + gamma * x[0],
    )


@kernel_helper
def aligned_frame(axis):
    """A (9, row-major), a rotation with A e_z = axis (a unit vector); the identity for z."""
    if axis[0] == 0.0 and axis[1] == 0.0 and axis[2] > 0.0:
        return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    t = (1.0, 0.0, 0.0) if abs(axis[0]) < 0.9 else (0.0, 1.0, 0.0)
    d = dot3(t, axis)
    x = (t[0] - d * axis[0], t[1] - d * axis[1], t[2] - d * axis[2])
    s = 1.0 / np.sqrt(dot3(x, x))
    x = (s * x[0], s * x[1], s * x[2])
    y = cross(axis, x)
    return x[0], y[0], axis[0], x[1], y[1], axis[1], x[2], y[2], axis[2]


@kernel_helper
def body_at(links, j):
    """Mass, centre of mass (3) and rotational inertia about it (9) of body j, link frame."""
    return (*pose_at(links, j, BODY), links[j, BODY + 12])


@kernel_helper
def row5(a, i, start):
    """Columns start .. start + 4 of row i."""
    return a[i, start], a[i, start + 1], a[i, start + 2], a[i, start + 3], a[i, start + 4]


@kernel_helper
def matrix_row(a, i, start, r):
    """Row r of the 6 x 6 matrix stored row-major at columns start .. start + 35 of row i."""
    return vector6_at(a, i, start + 6 * r)


@kernel_helper
def matrix_times6(a, i, start, x):
    """The 6 x 6 matrix at columns start .. of row i times x."""
    return (
        dot6(matrix_row(a, i, start, 0), x), dot6(matrix_row(a, i, start, 1), x),
        dot6(matrix_row(a, i, start, 2), x), dot6(matrix_row(a, i, start, 3), x),
        dot6(matrix_row(a, i, start, 4), x), dot6(matrix_row(a, i, start, 5), x),
    )


@kernel_helper
def through_joint(T, a, i, start, revolute, out, o, at):
    """Ψ̂ = Wᵀ X_T Φ X_Tᵀ W (5 x 5) and Ĝ = Φ X_Tᵀ W (6 x 5) for the symmetric 6 x 6 Φ at
    columns start .. of row i of a, X_T the motion transform of pose T, W a joint's basis:
    into row o of out from column `at`, Ψ̂ then Ĝ, both row-major."""
    for r in range(6):  # row r of Φ X_Tᵀ is (X_T φ_r)ᵀ, φ_r = row r of Φ
        g = project_link_frame(motion_to_child(T, matrix_row(a, i, start, r)), revolute)
        for c in range(LAMBDA_SIZE):
            out[o, at + 25 + LAMBDA_SIZE * r + c] = g[c]
    for c in range(LAMBDA_SIZE):  # column c of Ψ̂ = Wᵀ X_T (column c of Ĝ)
        g = (out[o, at + 25 + c], out[o, at + 30 + c], out[o, at + 35 + c],
             out[o, at + 40 + c], out[o, at + 45 + c], out[o, at + 50 + c])
        psi = project_link_frame(motion_to_child(T, g), revolute)
        for r in range(LAMBDA_SIZE):
            out[o, at + LAMBDA_SIZE * r + c] = psi[r]


@kernel_helper
def store_link_row(tree, j, links):
    """Row j of the link-frame array, its parent's row already written."""
    p = parent_of(tree, j)
    S = subspace(tree, j)
    revolute = is_revolute(S)
    A = aligned_frame(S[3:6] if revolute else S[0:3])
    to_parent_link = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0) if p < 0 else pose_at(
        links, p, ALIGN)[:9]
    T = compose(compose((*transposed(to_parent_link), 0.0, 0.0, 0.0),
                        pose_at(tree, j, PLACEMENT)), (*A, 0.0, 0.0, 0.0))
    body = body_inertia(tree, j)
    body = (body[0], *rotate_back(A, body[1:4]), *rotate_inertia(transposed(A), body[4:13]))
    links[j, LINK_PARENT], links[j, REVOLUTE] = p, 1.0 if revolute else 0.0
    store_at(links, j, TRANSFORM, T)
    store_at(links, j, ALIGN, A)
    store_at(links, j, BODY, body)
    Phi = np.empty((1, 6, 6))
    store_inverse_inertia((1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), body,
                          Phi, 0)
    store_at(links, j, PHI, Phi.ravel())
    if p >= 0:
        through_joint(T, links, p, PHI, revolute, links, j, PSI)
    else:
        links[j, PSI:ROW] = 0.0
    k = axis_index(revolute)
    for c in range(6):
        links[j, ROW + c] = motion_to_child(T, unit(c))[k]


@kernel
def link_frames(tree: PackedTree) -> FloatArray:
    """The (n, LINK_WIDTH) array of the link frames' constants (the columns above) of a tree;
    ValueError for a massless body."""
    check_masses(tree)
    n = tree.shape[0]
    links = np.empty((n, LINK_WIDTH))
    last_child = np.full(n, -1)
    for j in range(n):
        store_link_row(tree, j, links)
        if parent_of(tree, j) >= 0:
            last_child[parent_of(tree, j)] = j
    for j in range(n):
        p = parent_of(tree, j)
        links[j, LAST_CHILD] = 1.0 if p < 0 or last_child[p] == j else 0.0
        links[j, HAS_CHILD] = 1.0 if last_child[j] >= 0 else 0.0
    return links


# The arrays of the three passes (module docstring), link frames.
LinkWorkspace = namedtuple("LinkWorkspace", (
    "X",        # (n, 12) each joint's pose X_j, parent link frame ← link frame
    "joint",    # (n, 3) (α, β, γ) of each joint's X_Z, a JointMotion (joint_motion_at)
    "v",        # (n, 6) each body's velocity; its acceleration a in the last pass
    "c",        # (n, 6) c_j = v_j × S q̇_j; the force h_j of the joints solved in the last pass
    "f",        # (n, 6) each body's known force
    "a_eff",    # (n, 6) ã_j
    "Phi_eff",  # (n, 36) Φ̃_j of a body with children (row-major)
    "L",        # (n, 10) the pivot's unit lower factor L (its 10 entries below the diagonal)
    "Ehat",     # (n, 30) Ê = E D⁻¹ (6 x 5, row-major)
    "g",        # (n, 5) g_j = D⁻¹ L⁻¹ y'
    "span",     # (1, SPAN) a through_joint row of a later child of a body with several
))


@kernel_helper
def link_workspace(n):
    """A LinkWorkspace of n links."""
    return LinkWorkspace(
        np.empty((n, 12)), np.empty((n, 3)), np.empty((n, 6)), np.empty((n, 6)),
        np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 36)), np.empty((n, 10)),
        np.empty((n, 6 * LAMBDA_SIZE)), np.empty((n, LAMBDA_SIZE)), np.empty((1, SPAN)),
    )


@kernel_helper
def kinematics_pass(links, q, qd, tau, f_ext, ws):
    """From the root: each joint's pose X (parent link frame ← link frame) and (α, β, γ) of
    X_Z, the velocities v, c = v × S q̇, and each body's known force
    f = S τ − v ×* I v + f_ext − Σ_children X_cᵀ S_c τ_c (link frames)."""
    X, joint, v, c, f = ws.X, ws.joint, ws.v, ws.c, ws.f
    for j in range(links.shape[0]):
        p = int(links[j, LINK_PARENT])
        revolute = links[j, REVOLUTE] != 0.0
        angle = q[j] if revolute else 0.0
        J = JointMotion(np.cos(angle), np.sin(angle), 0.0 if revolute else q[j])
        X_j = link_joint_pose(pose_at(links, j, TRANSFORM), J)
        S = unit(axis_index(revolute))
        vJ = scale6(qd[j], S)
        v_j = add6(motion_to_child(X_j, vector6(v, p)), vJ) if p >= 0 else vJ
        body = body_at(links, j)
        f_j = add6(scale6(tau[j], S), scale6(-1.0, motion_cross_force(
            v_j, body_inertia_times(body, v_j))))
        if f_ext is not None:
            A = pose_at(links, j, ALIGN)
            F = vector6(f_ext, j)
            f_j = add6(f_j, (*rotate_back(A, F[0:3]), *rotate_back(A, F[3:6])))
        store(X, j, X_j)
        joint[j, 0], joint[j, 1], joint[j, 2] = J.alpha, J.beta, J.gamma
        store(v, j, v_j)
        store(c, j, motion_cross_motion(v_j, vJ))
        store(f, j, f_j)
        if p >= 0:
            store(f, p, add6(vector6(f, p), scale6(-1.0, force_to_parent(X_j, scale6(tau[j], S)))))


@kernel_helper
def congruence(M, J):
    """The lower triangle, row by row (15), of J M Jᵀ for a symmetric 5 x 5 M (its rows),
    J a JointMotion (joint_motion5)."""
    y0 = joint_motion5(J, M[0])  # the columns of J M
    y1 = joint_motion5(J, M[1])
    y2 = joint_motion5(J, M[2])
    y3 = joint_motion5(J, M[3])
    y4 = joint_motion5(J, M[4])
    t0 = joint_motion5(J, (y0[0], y1[0], y2[0], y3[0], y4[0]))
    t1 = joint_motion5(J, (y0[1], y1[1], y2[1], y3[1], y4[1]))
    t2 = joint_motion5(J, (y0[2], y1[2], y2[2], y3[2], y4[2]))
    t3 = joint_motion5(J, (y0[3], y1[3], y2[3], y3[3], y4[3]))
    t4 = joint_motion5(J, (y0[4], y1[4], y2[4], y3[4], y4[4]))
    return (t0[0], t0[1], t1[1], t0[2], t1[2], t2[2], t0[3], t1[3], t2[3], t3[3], t0[4],
            t1[4], t2[4], t3[4], t4[4])


@kernel_helper
def projected(phi, i, o, revolute):
    """The rows of Wᵀ Φ̃ W (5 x 5), Φ̃ the 6 x 6 at columns o .. of row i of phi."""
    w = 2 if revolute else 5  # W's columns select (0, 1, w, 3, 4)
    return (
        (phi[i, o], phi[i, o + 1], phi[i, o + w], phi[i, o + 3], phi[i, o + 4]),
        (phi[i, o + 6], phi[i, o + 7], phi[i, o + 6 + w], phi[i, o + 9], phi[i, o + 10]),
        (phi[i, o + 6 * w], phi[i, o + 6 * w + 1], phi[i, o + 7 * w], phi[i, o + 6 * w + 3],
         phi[i, o + 6 * w + 4]),
        (phi[i, o + 18], phi[i, o + 19], phi[i, o + 18 + w], phi[i, o + 21], phi[i, o + 22]),
        (phi[i, o + 24], phi[i, o + 25], phi[i, o + 24 + w], phi[i, o + 27], phi[i, o + 28]),
    )


@kernel_helper
def pivot(phi, i, o, revolute, psi, k, start, J):
    """The lower triangle, row by row (15), of the pivot in the frame before the joint,
    Z' = J⁻¹ Wᵀ Φ̃ W J⁻ᵀ + Ψ̂, J a JointMotion (joint_motion5), Φ̃ the 6 x 6 at columns o .. of
    row i of phi, Ψ̂ (5 x 5) at columns start .. of row k of psi."""
    z = congruence(projected(phi, i, o, revolute), inverse_motion(J))
    return (
        z[0] + psi[k, start],
        z[1] + psi[k, start + 5], z[2] + psi[k, start + 6],
        z[3] + psi[k, start + 10], z[4] + psi[k, start + 11], z[5] + psi[k, start + 12],
        z[6] + psi[k, start + 15], z[7] + psi[k, start + 16], z[8] + psi[k, start + 17],
        z[9] + psi[k, start + 18],
        z[10] + psi[k, start + 20], z[11] + psi[k, start + 21], z[12] + psi[k, start + 22],
        z[13] + psi[k, start + 23], z[14] + psi[k, start + 24],
    )





@kernel_helper
def times5(a, b):
    """a ⊙ b for 5-vectors."""
    return a[0] * b[0], a[1] * b[1], a[2] * b[2], a[3] * b[3], a[4] * b[4]


@kernel_helper
def dot5(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4]


@kernel_helper
def downdate_articulated(phi, i, o, e, ehat, out, p):
    """Row p of out (6 x 6, row-major) = Φ̃ − Ê Eᵀ, Φ̃ the symmetric 6 x 6 at columns o .. of
    row i of phi, e and ehat the rows of E and Ê = E D⁻¹ (6 x 5)."""
    for r in range(6):
        for s in range(r + 1):
            t = phi[i, o + 6 * r + s] - dot5(ehat[r], e[s])
            out[p, 6 * r + s] = t
            out[p, 6 * s + r] = t


@kernel_helper
def coupling_rows(psi, i, o, low):
    """The rows of E = Ĝ L⁻ᵀ (6 x 5), Ĝ at columns o + 25 .. of row i of psi."""
    return (
        lower_solve5(low, row5(psi, i, o + 25)), lower_solve5(low, row5(psi, i, o + 30)),
        lower_solve5(low, row5(psi, i, o + 35)), lower_solve5(low, row5(psi, i, o + 40)),
        lower_solve5(low, row5(psi, i, o + 45)), lower_solve5(low, row5(psi, i, o + 50)),
    )


@kernel_helper
def elimination_pass(links, a_root, ws):
    """Leaves first: each joint's pivot Z' = L D Lᵀ (L and Ê = E D⁻¹, E = Ĝ L⁻ᵀ, kept), its
    g = D⁻¹ L⁻¹ y', and the parent's Φ̃_p and ã_p updated (module docstring). Φ̃ and ã of a
    body with children in Phi_eff and a_eff; a_eff gets every body's final ã."""
    X, joint, c, f, a_eff, Phi_eff = ws.X, ws.joint, ws.c, ws.f, ws.a_eff, ws.Phi_eff
    L, Ehat, g, span = ws.L, ws.Ehat, ws.g, ws.span
    for j in range(c.shape[0] - 1, -1, -1):
        p = int(links[j, LINK_PARENT])
        revolute = links[j, REVOLUTE] != 0.0
        J = joint_motion_at(joint, j)
        own = links[j, HAS_CHILD] != 0.0  # Φ̃_j, ã_j already downdated by its children
        fresh = p < 0 or links[j, LAST_CHILD] != 0.0  # Φ̃_p still Φ_p (or the base's 0)
        phi, phi_row, phi_start = (Phi_eff, j, 0) if own else (links, j, PHI)
        a_j = vector6(a_eff, j) if own else matrix_times6(links, j, PHI, vector6(f, j))
        store(a_eff, j, a_j)
        if fresh:
            psi, psi_row, psi_start = links, j, PSI
        else:
            through_joint(pose_at(links, j, TRANSFORM), Phi_eff, p, 0, revolute, span, 0, 0)
            psi, psi_row, psi_start = span, 0, 0
        low, d = ldlt5(pivot(phi, phi_row, phi_start, revolute, psi, psi_row, psi_start, J))
        store(L, j, low)
        e = coupling_rows(psi, psi_row, psi_start, low)
        ehat = (times5(e[0], d), times5(e[1], d), times5(e[2], d), times5(e[3], d),
                times5(e[4], d), times5(e[5], d))
        for r in range(6):
            store_at(Ehat, j, LAMBDA_SIZE * r, ehat[r])
        if p < 0:
            a_p = a_root
        elif fresh:
            a_p = matrix_times6(links, p, PHI, vector6(f, p))
        else:
            a_p = vector6(a_eff, p)
        y = project_link_frame(add6(vector6(c, j), add6(scale6(-1.0, a_j),
                                             motion_to_child(pose_at(X, j, 0), a_p))), revolute)
        g_j = times5(d, lower_solve5(low, joint_motion5(inverse_motion(J), y)))
        store(g, j, g_j)
        if p >= 0:
            store(a_eff, p, add6(a_p, (-dot5(e[0], g_j), -dot5(e[1], g_j), -dot5(e[2], g_j),
                                       -dot5(e[3], g_j), -dot5(e[4], g_j), -dot5(e[5], g_j))))
            if fresh:
                downdate_articulated(links, p, PHI, e, ehat, Phi_eff, p)
            else:
                downdate_articulated(Phi_eff, p, 0, e, ehat, Phi_eff, p)


@kernel_helper
def transposed_times(E, j, h):
    """Eᵀ h (5) for the 6 x 5 E in row j of E (row-major)."""
    return (
        E[j, 0] * h[0] + E[j, 5] * h[1] + E[j, 10] * h[2] + E[j, 15] * h[3] + E[j, 20] * h[4]
        + E[j, 25] * h[5],
        E[j, 1] * h[0] + E[j, 6] * h[1] + E[j, 11] * h[2] + E[j, 16] * h[3] + E[j, 21] * h[4]
        + E[j, 26] * h[5],
        E[j, 2] * h[0] + E[j, 7] * h[1] + E[j, 12] * h[2] + E[j, 17] * h[3] + E[j, 22] * h[4]
        + E[j, 27] * h[5],
        E[j, 3] * h[0] + E[j, 8] * h[1] + E[j, 13] * h[2] + E[j, 18] * h[3] + E[j, 23] * h[4]
        + E[j, 28] * h[5],
        E[j, 4] * h[0] + E[j, 9] * h[1] + E[j, 14] * h[2] + E[j, 19] * h[3] + E[j, 24] * h[4]
        + E[j, 29] * h[5],
    )


@kernel_helper
def acceleration_pass(links, a_root, ws, qdd):
    """From the root: λ_j = J⁻ᵀ L⁻ᵀ (g_j + Êᵀ h_p), a_j = ã_j + Φ̃_j W_j λ_j and
    q̈_j = (a_j − X_j a_p − c_j)[k] = a_j[k] − X_T[k] · a_p (X_Z and c_j leave component k
    alone); h_j = W_j λ_j, and an earlier sibling's reaction −X_jᵀ W_j λ_j joins h_p."""
    X, joint, a_eff, Phi_eff, L, Ehat, g = ws.X, ws.joint, ws.a_eff, ws.Phi_eff, ws.L, ws.Ehat, \
        ws.g
    a, h = ws.v, ws.c  # the velocities and c are no longer needed: they hold a and h
    for j in range(qdd.shape[0]):
        p = int(links[j, LINK_PARENT])
        revolute = links[j, REVOLUTE] != 0.0
        t = transposed_times(Ehat, j, vector6(h, p) if p >= 0 else ZERO6)
        lam = upper_solve5(vector10(L, j), (g[j, 0] + t[0], g[j, 1] + t[1], g[j, 2] + t[2],
                                            g[j, 3] + t[3], g[j, 4] + t[4]))
        lam_frame = joint_force5(inverse_motion(joint_motion_at(joint, j)), lam)
        W_lam = lift_link_frame(lam_frame, revolute)
        own = links[j, HAS_CHILD] != 0.0
        phi, phi_row, phi_start = (Phi_eff, j, 0) if own else (links, j, PHI)
        a_j = add6(vector6(a_eff, j), matrix_times6(phi, phi_row, phi_start, W_lam))
        a_p = vector6(a, p) if p >= 0 else a_root
        qdd[j] = (a_j[5] if revolute else a_j[2]) - dot6(vector6_at(links, j, ROW), a_p)
        store(a, j, a_j)
        store(h, j, W_lam)
        if p >= 0 and links[j, LAST_CHILD] == 0.0:
            store(h, p, add6(vector6(h, p), scale6(-1.0, force_to_parent(pose_at(X, j, 0),
                                                                         W_lam))))


@kernel_helper
def vector10(a, i):
    """Row i of an (n, 10) array."""
    return a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5], a[i, 6], a[i, 7], a[i, 8], \
        a[i, 9]


@kernel_helper
def vector6_at(a, i, start):
    """Columns start .. start + 5 of row i."""
    return a[i, start], a[i, start + 1], a[i, start + 2], a[i, start + 3], a[i, start + 4], \
        a[i, start + 5]


@kernel
def forward_dynamics_schur(links, gravity, q, qd, tau, f_ext, qdd):
    """q̈ by the three passes, for a state (n,) or a batch (B, n); links from link_frames,
    f_ext None or (..., n, 6) body-frame wrenches."""
    Q, QD, TAU = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(tau)
    B, n = Q.shape[0], links.shape[0]
    QDD = qdd.reshape((B, n))
    ws = link_workspace(n)
    a_root = gravity_acceleration(gravity)
    for b in range(B):
        F = None if f_ext is None else f_ext.reshape((B, n, 6))[b]
        kinematics_pass(links, Q[b], QD[b], TAU[b], F, ws)
        elimination_pass(links, a_root, ws)
        acceleration_pass(links, a_root, ws, QDD[b])
