"""Operational-space dynamics of task frames (Khatib 1987): Λ⁻¹, the operational-space
inertia Λ, and what an operational-space controller needs besides: J̄, μ, p and J̇ q̇.

Λ⁻¹ of the stacked task of F frames (6F x 6F, [linear; angular] about each frame origin in
world-aligned axes) by three routes, each then cut to the selected task rows:

- dense: M⁻¹ by the O(n²) recursion, the frame Jacobians and J M⁻¹ Jᵀ; the reference.
- recursive: O(n), no n x n matrix. The articulated inertias of ABA's backward pass (world
  frame, RBDA Table 7.1) give the response of body k at rest to a force F on it, a_k = Ω_k F:
  Ω_i = T_iᵀ Ω_λ T_i + S_i S_iᵀ / D_i with T_i = 1 − U_i S_iᵀ / D_i, U_i = IA_i S_i,
  D_i = S_iᵀ U_i + a_i (a_i the armature, as in ABA), Ω of the fixed base 0 (the inverse
  articulated-body inertia recursion of Featherstone, "Exploiting sparsity in
  operational-space dynamics", IJRR 2010, eqs. 21–24, in one frame). Between frames on
  bodies k and h with deepest common ancestor c: Ω_hk = Φ_hᵀ Ω_c Φ_k, Φ_k = T_{c'} ⋯ T_k the
  product down the path from c to k (zero when the paths meet only at the base).
- schur, schur_bcr: Λ⁻¹ = D − Eᵀ 𝒜⁻¹ E of one body (schur.tip_inverse_inertia): the
  constraint-force system of the joints from the base to it, the rest of the tree eliminated
  leaf first (path_system), then 𝒜 reduced from the base or by block cyclic reduction. No
  term for the armature: Robot refuses these routes for a robot with armature.

A frame at point p of body k is reached by X_p = [1, −[p]×; 0, 1]: Λ⁻¹_hk = X_ph Ω_hk X_pkᵀ.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, IntArray, PackedTree
from robodyn_ros.dynamics.constraint_system import (
    LAMBDA_SIZE,
    MASSLESS,
    assemble_blocks,
    store_chain_topology,
    store_joint_basis,
    store_link,
    system_workspace,
)
from robodyn_ros.dynamics.cyclic_reduction import cyclic_reduction_workspace
from robodyn_ros.dynamics.forward_dynamics import aba_state, aba_workspace
from robodyn_ros.dynamics.inertia_inverse import minv_aba, minv_workspace
from robodyn_ros.dynamics.inverse_dynamics import rnea, rnea_workspace
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.kinematics import (
    forward_kinematics,
    frame_origin,
    frames_jacobian_into,
    joint_velocity_less_before,
)
from robodyn_ros.dynamics.linalg import invert_spd
from robodyn_ros.dynamics.schur import tip_inertia, tip_inverse_inertia
from robodyn_ros.dynamics.spatial import (
    add3,
    add6,
    cross,
    dot6,
    inertia_to_world,
    matrix_times,
    motion_cross_motion,
    pose_at,
    rotate_back,
    scale6,
    store,
    store_inertia_matrix,
    vector6,
)
from robodyn_ros.dynamics.tree import FRAME_BODY, POSE, armature, body_inertia, parent_of

# Λ⁻¹ with a condition number above this counts as singular: the frame's Jacobian has lost
# rank, and Λ does not exist there.
SINGULAR_CONDITION = 1e12


@kernel_helper
def norm1(A):
    """The 1-norm of a matrix: its largest absolute column sum (NaN if any entry is NaN)."""
    largest = 0.0
    for c in range(A.shape[1]):
        t = 0.0
        for r in range(A.shape[0]):
            t += abs(A[r, c])
        if t > largest or t != t:
            largest = t if largest == largest else largest
    return largest


@kernel_helper
def invert_task_inertia(Lambda_inv, out):
    """out = Λ = (Λ⁻¹)⁻¹ by Gauss–Jordan (Λ⁻¹ is symmetric positive semi-definite, no pivoting
    needed); False where Λ⁻¹ is singular to working precision. Λ⁻¹ is overwritten."""
    size = norm1(Lambda_inv)
    return invert_spd(Lambda_inv, out, Lambda_inv) and size * norm1(out) < SINGULAR_CONDITION


# What articulated_task_inverse and path_system need (RBDA Table 7.1; Featherstone 2010).
ArticulatedWorkspace = namedtuple("ArticulatedWorkspace", (
    "X_world",  # (n, POSE) each link's pose
    "S_world",  # (n, 6) each joint's motion axis S_i
    "IA",       # (n, 6, 6) the articulated inertias
    "U",        # (n, 6) U_i = IA_i S_i
    "D",        # (n,) D_i = S_iᵀ U_i + armature
    "Omega",    # (n, 6, 6) Ω_i, the inverse articulated inertia at body i (eq. 24)
    "on_path",  # (n,) whether body i is on the path from the base to the task's body
    "Phi_row",  # (6, 6) a transfer of Ω to a frame's row body
    "Phi_col",  # (6, 6) and to its column body
    "T",        # (6, 6) Ω Φ_col
))


@kernel_helper
def articulated_workspace(n):
    """An ArticulatedWorkspace of n links."""
    return ArticulatedWorkspace(
        np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6, 6)), np.empty((n, 6)),
        np.empty(n), np.empty((n, 6, 6)), np.empty(n, dtype=np.bool_),
        np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6)),
    )


@kernel_helper
def articulated_inertias(tree, q, ws, kept):
    """ABA's backward pass at rest (articulated_pass), after forward kinematics into ws and
    the bodies' inertias into ws.IA."""
    X_world, IA = ws.X_world, ws.IA
    forward_kinematics(tree, q, X_world, ws.S_world)
    for i in range(tree.shape[0]):
        store_inertia_matrix(IA, i, inertia_to_world(pose_at(X_world, i, 0), body_inertia(tree, i)))
    articulated_pass(tree, ws, kept)


@kernel_helper
def articulated_pass(tree, ws, kept):
    """ABA's backward pass at rest (RBDA Table 7.1), world frame, from the bodies' own
    inertias in ws.IA: IA_λ += IA_i − U_i U_iᵀ / D_i, U_i = IA_i S_i, D_i = S_iᵀ U_i +
    armature, except from the bodies i with kept[i]."""
    S_world, IA, U, D = ws.S_world, ws.IA, ws.U, ws.D
    for i in range(D.shape[0] - 1, -1, -1):
        S = vector6(S_world, i)
        U_i = matrix_times(IA, i, S)
        D[i] = dot6(S, U_i) + armature(tree, i)
        store(U, i, U_i)
        parent = parent_of(tree, i)
        if parent >= 0 and not kept[i]:
            inverse = 1.0 / D[i]  # hoisted: IA's stores would reload and divide D[i] each time
            for r in range(6):
                U_D = U_i[r] * inverse
                for k in range(6):
                    IA[parent, r, k] += IA[i, r, k] - U_D * U_i[k]


@kernel_helper
def propagate_inverse_inertia(Omega, i, parent, S, U, D):
    """Ω_i = T_iᵀ Ω_λ T_i + S_i S_iᵀ / D_i, T_i = 1 − U_i S_iᵀ / D_i (Featherstone 2010, eq. 24):
    with w = Ω_λ U_i and σ = U_iᵀ w, Ω_λ − (S wᵀ + w Sᵀ) / D + S Sᵀ (σ / D + 1) / D."""
    if parent < 0:
        for r in range(6):
            for s in range(6):
                Omega[i, r, s] = S[r] * S[s] / D
        return
    w = matrix_times(Omega, parent, U)
    c = (dot6(U, w) / D + 1.0) / D
    for r in range(6):
        for s in range(6):
            Omega[i, r, s] = Omega[parent, r, s] - (S[r] * w[s] + w[r] * S[s]) / D + S[r] * S[s] * c


@kernel_helper
def common_ancestor(tree, a, b):
    """The deepest body on the paths of bodies a and b to the base (-1: the base); depth-first
    order puts every parent before its children."""
    while a != b:
        if a > b:
            a = parent_of(tree, a)
        else:
            b = parent_of(tree, b)
    return a


@kernel_helper
def transfer(tree, S_world, U, D, body, ancestor, Phi):
    """Phi (6 x 6) = T_{c'} ⋯ T_body, the force transfer from `body` up to its ancestor c:
    T_j Φ = Φ − U_j (S_jᵀ Φ) / D_j for each joint j on the way."""
    Phi[:, :] = 0.0
    for r in range(6):
        Phi[r, r] = 1.0
    j = body
    while j != ancestor:
        S, U_j = vector6(S_world, j), vector6(U, j)
        for s in range(6):
            t = (S[0] * Phi[0, s] + S[1] * Phi[1, s] + S[2] * Phi[2, s] + S[3] * Phi[3, s]
                 + S[4] * Phi[4, s] + S[5] * Phi[5, s]) / D[j]
            for r in range(6):
                Phi[r, s] -= U_j[r] * t
        j = parent_of(tree, j)


@kernel_helper
def subtract_moments(block, p_row, p_col, to, by):
    """block[to + j, c] −= (p_row × block[by : by + 3, c])_j for every column c, then
    block[r, to + j] −= (p_col × block[r, by : by + 3])_j for every row r."""
    for c in range(6):
        m = cross(p_row, (block[by, c], block[by + 1, c], block[by + 2, c]))
        for j in range(3):
            block[to + j, c] -= m[j]
    for r in range(6):
        m = cross(p_col, (block[r, by], block[r, by + 1], block[r, by + 2]))
        for j in range(3):
            block[r, to + j] -= m[j]


@kernel_helper
def shift_to_points(block, p_row, p_col):
    """block ← X_row block X_colᵀ, X_p = [1, −[p]×; 0, 1]: a response about the world origin
    moved to the frame origins (v_p = v_O − p × ω, and the force's moment likewise)."""
    subtract_moments(block, p_row, p_col, 0, 3)


@kernel_helper
def shift_inertia_to_point(Lambda, p):
    """Λ ← X_p⁻ᵀ Λ X_p⁻¹ (X_p as in shift_to_points): an inertia about the world origin moved
    to the point p; the bottom rows and right columns lose p × the top ones."""
    subtract_moments(Lambda, p, p, 3, 0)


@routine
def articulated_task_inverse(tree, frames, q, full, ws):
    """full (6F x 6F) = Λ⁻¹ of the stacked task of F frames by the O(n) recursion (module
    docstring); ws from articulated_workspace."""
    ws.on_path[:] = False
    articulated_inertias(tree, q, ws, ws.on_path)  # every body passes its inertia on
    mark_paths(tree, frames, ws.on_path)
    inverse_inertia_blocks(tree, frames, full, ws)


@kernel_helper
def mark_paths(tree, frames, on_path):
    """on_path[i] = True for every body on the way from a frame's body to the base."""
    for k in range(frames.shape[0]):
        j = int(frames[k, FRAME_BODY])
        while j >= 0 and not on_path[j]:
            on_path[j] = True
            j = parent_of(tree, j)


@routine
def inverse_inertia_blocks(tree, frames, full, ws):
    """full (6F x 6F) = Λ⁻¹ of the frames from the articulated inertias in ws, the paths of
    the frames' bodies marked in ws.on_path: Ω along the paths (eq. 24), then each block."""
    X_world, S_world, U, D, Omega = ws.X_world, ws.S_world, ws.U, ws.D, ws.Omega
    on_path, Phi_row, Phi_col, T = ws.on_path, ws.Phi_row, ws.Phi_col, ws.T
    for i in range(D.shape[0]):
        if on_path[i]:
            propagate_inverse_inertia(Omega, i, parent_of(tree, i), vector6(S_world, i),
                                      vector6(U, i), D[i])
    for k in range(frames.shape[0]):
        body_k = int(frames[k, FRAME_BODY])
        p_k = frame_origin(X_world, frames[k])
        for h in range(k + 1):
            body_h = int(frames[h, FRAME_BODY])
            block = full[6 * h : 6 * h + 6, 6 * k : 6 * k + 6]
            c = common_ancestor(tree, body_h, body_k)
            if c < 0:
                block[:, :] = 0.0
            elif body_h == c and body_k == c:
                block[:, :] = Omega[c]
            else:
                transfer(tree, S_world, U, D, body_h, c, Phi_row)
                transfer(tree, S_world, U, D, body_k, c, Phi_col)
                product_into(Omega[c], Phi_col, T)
                product_into(Phi_row.T, T, block)  # Φ_rowᵀ Ω_c Φ_col
            shift_to_points(block, frame_origin(X_world, frames[h]), p_k)
            if h != k:
                full[6 * k : 6 * k + 6, 6 * h : 6 * h + 6] = block.T


@kernel_helper
def product_into(A, B, out):
    """out (6 x 6) = A B, in loops: at this size a BLAS call costs more than the product."""
    for r in range(6):
        for c in range(6):
            t = 0.0
            for k in range(6):
                t += A[r, k] * B[k, c]
            out[r, c] = t


@routine
def dense_task_inverse(tree, frames, q, full, workspace, Minv, J):
    """full (6F x 6F) = J M⁻¹ Jᵀ of the stacked task, J (6F x n) the stacked frame Jacobians."""
    X_world, S_world = workspace.X_world, workspace.S_world
    minv_aba(tree, q, Minv, workspace)
    frames_jacobian_into(tree, X_world, S_world, frames, J)
    full[:, :] = J @ (Minv @ J.T)


@routine
def path_system(tree, q, body, ws, aw, I_tip):
    """The constraint-force system (ws: Φ_i, W_i and the blocks of 𝒜) of the chain of joints
    from the base to `body`, the rest of the tree eliminated leaf first; returns its length m
    and sets I_tip (6 x 6) to the inertia `body` then has. Eliminating the constraint forces
    of a subtree hanging from body p by joint c leaves p with the subtree's articulated
    inertia added, IA_c − U_c U_cᵀ / D_c at τ = 0 (RBDA Table 7.1): the backward pass stops at
    the path. A path body carrying no subtree keeps its exact inverse inertia."""
    X_world, S_world, IA, on_path = aw.X_world, aw.S_world, aw.IA, aw.on_path
    n = tree.shape[0]
    on_path[:] = False
    j = body
    while j >= 0:
        on_path[j] = True
        j = parent_of(tree, j)
    articulated_inertias(tree, q, aw, on_path)
    carries = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        if not on_path[i] and parent_of(tree, i) >= 0 and on_path[parent_of(tree, i)]:
            carries[parent_of(tree, i)] = True
    Phi, house, pivot, work = ws.Phi, ws.house, ws.pivot, ws.scratch_b
    m = 0
    for i in range(n):
        if on_path[i]:
            if carries[i]:
                if not invert_spd(IA[i], Phi[m], work):
                    raise ValueError(MASSLESS)
                store_joint_basis(S_world, i, m, house, pivot)
            elif body_inertia(tree, i)[0] > 0.0:
                store_link(tree, X_world, S_world, i, m, Phi, house, pivot)
            else:
                raise ValueError(MASSLESS)
            m += 1
    I_tip[:, :] = IA[body]
    store_chain_topology(ws, m)
    assemble_blocks(ws, m)
    return m


@routine
def schur_task_inverse(tree, frames, q, full, cyclic, ws, aw, sw):
    """full (6F x 6F) of frames on one body, from its Λ⁻¹ about the world origin
    (schur.tip_inverse_inertia of path_system); ws, aw, sw from schur_workspace_of."""
    m = path_system(tree, q, int(frames[0, FRAME_BODY]), ws, aw, sw.I_tip)
    Omega = sw.Lambda_inv
    tip_inverse_inertia(ws, m, sw.I_tip, cyclic, sw.reduction, sw.Yinv, sw.Y, Omega)
    X_world = aw.X_world
    for k in range(frames.shape[0]):
        p_k = frame_origin(X_world, frames[k])
        for h in range(frames.shape[0]):
            block = full[6 * h : 6 * h + 6, 6 * k : 6 * k + 6]
            block[:, :] = Omega
            shift_to_points(block, frame_origin(X_world, frames[h]), p_k)


@routine
def schur_direct_inertia(tree, frame, q, out, cyclic, ws, aw, sw):
    """out (6 x 6) = Λ of one frame by the direct form (schur.tip_inertia of path_system),
    refused where the pivot R is singular to working precision."""
    m = path_system(tree, q, int(frame[FRAME_BODY]), ws, aw, sw.I_tip)
    R, Rinv = sw.Y, sw.Yinv  # here the pivot R of the direct form and its inverse
    tip_inertia(ws, m, sw.I_tip, cyclic, sw.reduction, Rinv, R, out)
    if not norm1(R) * norm1(Rinv) < SINGULAR_CONDITION:
        raise np.linalg.LinAlgError("J M⁻¹ Jᵀ is singular")
    shift_inertia_to_point(out, frame_origin(aw.X_world, frame))


@kernel_helper
def whole_frame(frames, rows):
    """Whether the task is one frame with its six axes in order."""
    if frames.shape[0] != 1 or rows.shape[0] != 6:
        return False
    for r in range(6):
        if rows[r] != r:
            return False
    return True


# What the Schur-complement routes to Λ need beside the system and the articulated inertias.
SchurTaskWorkspace = namedtuple("SchurTaskWorkspace", (
    "reduction",   # the CyclicReductionWorkspace of the path's system
    "Yinv",        # (5, 5) Y_N⁻¹, the inverse of the last pivot (or R⁻¹ of the direct form)
    "Y",           # (5, 5) Y_N (or R)
    "Lambda_inv",  # (6, 6) Λ⁻¹ of the task's body about the world origin
    "I_tip",       # (6, 6) the inertia of the task's body with the rest of the tree eliminated
))


@kernel_helper
def schur_workspace_of(n):
    """(system_workspace(n), articulated_workspace(n), a SchurTaskWorkspace of n links)."""
    return system_workspace(n), articulated_workspace(n), SchurTaskWorkspace(
        cyclic_reduction_workspace(n), np.empty((LAMBDA_SIZE, LAMBDA_SIZE)),
        np.empty((LAMBDA_SIZE, LAMBDA_SIZE)), np.empty((6, 6)), np.empty((6, 6)),
    )


@kernel_helper
def select_task(full, rows, out):
    """out (m x m) = the rows and columns `rows` of full."""
    for r in range(rows.shape[0]):
        for s in range(rows.shape[0]):
            out[r, s] = full[rows[r], rows[s]]


@kernel_helper
def task_output(full, rows, inverse, selected, out):
    """out = the selected Λ⁻¹, or Λ when not `inverse`."""
    if inverse:
        select_task(full, rows, out)
    else:
        select_task(full, rows, selected)
        if not invert_task_inertia(selected, out):
            raise np.linalg.LinAlgError("J M⁻¹ Jᵀ is singular")


@kernel
def operational_space_inertia(tree, frames, rows, q, inverse, out):
    """Λ (or Λ⁻¹ when `inverse`) of the task rows `rows` (indices into the 6F rows of the F
    frames' [linear; angular], F x 13 frame rows) by the dense route, for a state (n,) or a
    batch (B, n); out is (..., m, m)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    m, F6 = rows.shape[0], 6 * frames.shape[0]
    OUT = out.reshape((B, m, m))
    workspace = minv_workspace(tree, n)
    Minv, J = np.empty((n, n)), np.empty((F6, n))
    full, selected = np.empty((F6, F6)), np.empty((m, m))
    for b in range(B):
        dense_task_inverse(tree, frames, Q[b], full, workspace, Minv, J)
        task_output(full, rows, inverse, selected, OUT[b])


@kernel
def operational_space_inertia_recursive(tree, frames, rows, q, inverse, out):
    """operational_space_inertia by the O(n) articulated-body recursion (trees)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    m, F6 = rows.shape[0], 6 * frames.shape[0]
    OUT = out.reshape((B, m, m))
    ws = articulated_workspace(n)
    full, selected = np.empty((F6, F6)), np.empty((m, m))
    for b in range(B):
        articulated_task_inverse(tree, frames, Q[b], full, ws)
        task_output(full, rows, inverse, selected, OUT[b])


@kernel_helper
def schur_task_inertia(tree, frames, rows, q, inverse, out, cyclic):
    """operational_space_inertia by Λ⁻¹ = D − Eᵀ 𝒜⁻¹ E (frames on one body, path_system),
    𝒜 reduced by elimination from the base or, when `cyclic`, by block cyclic reduction; Λ of
    one whole frame by the direct form (schur_direct_inertia). `cyclic` is a numpy bool, not
    a literal: the routines then compile once for both kernels."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    m, F6 = rows.shape[0], 6 * frames.shape[0]
    OUT = out.reshape((B, m, m))
    ws, aw, sw = schur_workspace_of(n)
    full, selected = np.empty((F6, F6)), np.empty((m, m))
    direct = not inverse and whole_frame(frames, rows)
    for b in range(B):
        if direct:
            schur_direct_inertia(tree, frames[0], Q[b], OUT[b], cyclic, ws, aw, sw)
        else:
            schur_task_inverse(tree, frames, Q[b], full, cyclic, ws, aw, sw)
            task_output(full, rows, inverse, selected, OUT[b])


@kernel
def operational_space_inertia_schur(tree, frames, rows, q, inverse, out):
    """schur_task_inertia by elimination from the base, O(N)."""
    schur_task_inertia(tree, frames, rows, q, inverse, out, np.bool_(False))


@kernel
def operational_space_inertia_schur_bcr(tree, frames, rows, q, inverse, out):
    """schur_task_inertia by block cyclic reduction, ⌈log₂N⌉ levels."""
    schur_task_inertia(tree, frames, rows, q, inverse, out, np.bool_(True))


@kernel
def operational_space_inertia_inverse_times(tree: PackedTree, frames: FloatArray,
                                            rows: IntArray, q: FloatArray, force: FloatArray,
                                            out: FloatArray) -> None:
    """out (..., m) = Λ⁻¹ F for one task force F (..., m) on the task rows `rows`, for a state
    (n,) or a batch (B, n): the frames' accelerations when F acts on them at rest with τ = 0
    and no gravity. One right-hand side: ABA with F as external wrenches (RBDA Table 7.1),
    O(n), no matrix formed. A wrench [F; N] at the frame origin p is the force F with moment
    N + p × F about the world origin, then in the body's coordinates."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    m, F6 = rows.shape[0], 6 * frames.shape[0]
    FORCE, OUT = force.reshape((B, m)), out.reshape((B, m))
    workspace, zero, qdd = aba_workspace(n, 1), np.zeros(n), np.empty(n)
    X_world, S_world = workspace.X_world[0], workspace.S_world[0]  # aba's, lane 0
    a = workspace.c[0]  # the accelerations, once the last pass is done
    f_ext, wrench, no_gravity = np.empty((n, 6)), np.empty(F6), np.zeros(3)
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        wrench[:] = 0.0
        for r in range(m):
            wrench[rows[r]] = FORCE[b, r]
        f_ext[:, :] = 0.0
        for k in range(frames.shape[0]):
            body = int(frames[k, FRAME_BODY])
            if body >= 0:
                p, X = frame_origin(X_world, frames[k]), pose_at(X_world, body, 0)
                F = (wrench[6 * k], wrench[6 * k + 1], wrench[6 * k + 2])
                moment = add3((wrench[6 * k + 3], wrench[6 * k + 4], wrench[6 * k + 5]),
                              cross(p, F))
                local = (*rotate_back(X, F), *rotate_back(X, add3(moment, cross(F, X[9:12]))))
                store(f_ext, body, add6(vector6(f_ext, body), local))
        aba_state(tree, no_gravity, Q[b], zero, zero, f_ext.reshape((1, n, 6)), qdd, workspace)
        for r in range(m):
            k, axis = rows[r] // 6, rows[r] % 6
            body = int(frames[k, FRAME_BODY])
            p = frame_origin(X_world, frames[k])
            motion = vector6(a, body) if body >= 0 else (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            linear = add3(motion[0:3], cross(motion[3:6], p))  # a_p = a_O + α × p
            OUT[b, r] = linear[axis] if axis < 3 else motion[axis]


@kernel_helper
def body_velocities(tree: PackedTree, S_world: FloatArray, qd: FloatArray,
                    v: FloatArray) -> None:
    """Forward pass: each body's spatial velocity v[i] (n x 6, world axes about the world
    origin), v_i = v_λ + S_i q̇_i (RBDA eq. 7.1 in the world frame)."""
    for i in range(qd.shape[0]):
        parent = parent_of(tree, i)
        for r in range(6):
            v[i, r] = (v[parent, r] if parent >= 0 else 0.0) + S_world[i, r] * qd[i]


@kernel_helper
def velocity_product_accelerations(tree: PackedTree, S_world: FloatArray, qd: FloatArray,
                                   v: FloatArray, a: FloatArray) -> None:
    """Forward pass: each body's spatial velocity v[i] and its acceleration at q̈ = 0, a[i]
    (n x 6, world axes about the world origin): v_i = v_λ + S_i q̇_i, a_i = a_λ + v_λ × S_i q̇_i
    (the world-frame form of RBDA eq. 7.4 with Ṡ_i = v_i × S_i)."""
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(qd.shape[0]):
        parent = parent_of(tree, i)
        v_parent = vector6(v, parent) if parent >= 0 else zero
        a_parent = vector6(a, parent) if parent >= 0 else zero
        vJ = scale6(qd[i], vector6(S_world, i))
        store(v, i, add6(v_parent, vJ))
        v_joint = joint_velocity_less_before(tree, i, qd, S_world, v_parent)  # v_λ of the joint
        store(a, i, add6(a_parent, motion_cross_motion(v_joint, vJ)))


@kernel_helper
def classical_acceleration_into(v: FloatArray, a: FloatArray, body: int,
                                origin: FloatArray | tuple[float, float, float],
                                out: FloatArray) -> None:
    """out (6,) = [a_p; α], the classical acceleration of the point p = origin fixed to `body`
    (zero for a frame on the root): a_p = a_O + α × p + ω × (v_O + ω × p), from the body's
    spatial velocity [v_O; ω] and acceleration [a_O; α] about the world origin O."""
    if body < 0:
        out[:] = 0.0
        return
    w, alpha = (v[body, 3], v[body, 4], v[body, 5]), (a[body, 3], a[body, 4], a[body, 5])
    v_p = add3((v[body, 0], v[body, 1], v[body, 2]), cross(w, origin))
    a_p = add3(add3((a[body, 0], a[body, 1], a[body, 2]), cross(alpha, origin)), cross(w, v_p))
    out[0], out[1], out[2] = a_p
    out[3], out[4], out[5] = alpha


@kernel_helper
def frames_classical_acceleration_into(X_world: FloatArray, v: FloatArray, a: FloatArray,
                                       frames: FloatArray, out: FloatArray) -> None:
    """out (6F): the F frames' classical accelerations (classical_acceleration_into) stacked,
    frame k in 6k .. 6k + 5."""
    for k in range(frames.shape[0]):
        classical_acceleration_into(v, a, int(frames[k, FRAME_BODY]),
                                    frame_origin(X_world, frames[k]), out[6 * k : 6 * k + 6])


@kernel
def classical_accelerations(tree: PackedTree, frames: FloatArray, rows: IntArray,
                            q: FloatArray, qd: FloatArray, out: FloatArray) -> None:
    """out (..., m) = J̇ q̇ of the task rows `rows` of the F frames, for a state (n,) or a batch
    (B, n): the classical acceleration [a_p; α] of each frame origin at q̈ = 0, world-aligned
    axes (velocity_product_accelerations, then classical_acceleration_into); M never enters."""
    Q, QD = np.atleast_2d(q), np.atleast_2d(qd)
    B, n = Q.shape[0], tree.shape[0]
    m = rows.shape[0]
    OUT = out.reshape((B, m))
    X_world, S_world = np.empty((n, POSE)), np.empty((n, 6))
    v, a, frame_accelerations = np.empty((n, 6)), np.empty((n, 6)), np.empty(6 * frames.shape[0])
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        velocity_product_accelerations(tree, S_world, QD[b], v, a)
        frames_classical_acceleration_into(X_world, v, a, frames, frame_accelerations)
        for r in range(m):
            OUT[b, r] = frame_accelerations[rows[r]]


@kernel_helper
def damped_task_inertia(Lambda_inv: FloatArray, threshold: float, damping: float,
                        Lambda: FloatArray, info: FloatArray) -> None:
    """Λ from Λ⁻¹ = V diag(s) Vᵀ, never NaN or infinite. With s_max the largest eigenvalue,
    the ones ≥ threshold · s_max are inverted exactly; when the smallest is below that,
    every direction gets s / (s² + λ²) with λ² = (damping · s_max)² (1 − (s_min / (threshold ·
    s_max))²): damped least squares with variable damping (Nakamura & Hanafusa 1986;
    Maciejewski & Klein 1988), continuous at the threshold and zero along a lost direction.
    info = [rank: eigenvalues ≥ threshold · s_max, condition number s_max / s_min]."""
    s, V = np.linalg.eigh(0.5 * (Lambda_inv + Lambda_inv.T))
    s_max = max(s[-1], 0.0)
    cutoff = threshold * s_max
    s_min = max(s[0], 0.0)
    if s_max > 0.0 and s_min >= cutoff:
        inverse = 1.0 / s
    else:
        lam2 = (damping * s_max) ** 2 * (1.0 - (s_min / cutoff) ** 2) if cutoff > 0.0 else 1.0
        inverse = np.maximum(s, 0.0) / (s * s + lam2)
    np.dot(V * inverse, V.T, Lambda)
    info[0] = np.sum(s >= cutoff) if s_max > 0.0 else 0
    info[1] = s_max / s_min if s_min > 0.0 else np.inf


TaskSettings = namedtuple("TaskSettings", (
    "singular_threshold",  # damped_task_inertia's threshold, in (0, 1)
    "singular_damping",    # damped_task_inertia's damping, > 0
    "given_inverse",       # whether Λ⁻¹ arrives filled in by another route (not "dense")
))

TaskQuantities = namedtuple("TaskQuantities", (
    "J",           # (B, m, n) the task Jacobian
    "Lambda_inv",  # (B, m, m) Λ⁻¹ = J M⁻¹ Jᵀ
    "Lambda",      # (B, m, m) Λ, damped near singularities (damped_task_inertia)
    "Jbar",        # (B, n, m) J̄ = M⁻¹ Jᵀ Λ, the dynamically consistent inverse
    "mu",          # (B, m) μ = J̄ᵀ C q̇ − Λ J̇ q̇
    "p",           # (B, m) p = J̄ᵀ g
    "Jdot_qd",     # (B, m) J̇ q̇
    "info",        # (B, 2) damped_task_inertia's info: rank, condition number of Λ⁻¹
))


@kernel
def operational_space_dynamics(tree: PackedTree, gravity: FloatArray, frames: FloatArray,
                               rows: IntArray, settings: tuple[float, float, bool], q: FloatArray,
                               qd: FloatArray, quantities: tuple[FloatArray, ...]) -> None:
    """The operational-space dynamics (Khatib 1987) of the task rows `rows` (m indices into
    the 6F rows of the F frames' [linear; angular], F x 13 frame rows), world-aligned axes at
    each frame origin, for a batch q, qd (B, n): the TaskQuantities, as `settings`
    (TaskSettings) say. Both records arrive as plain tuples in their fields' order and are
    named here: numba types a plain tuple from Python as cheaply as its items, a namedtuple
    only by reading its class (docs/development.md)."""
    setting = TaskSettings(*settings)
    out = TaskQuantities(*quantities)
    B, n = q.shape[0], tree.shape[0]
    m, F6 = rows.shape[0], 6 * frames.shape[0]
    workspace = minv_workspace(tree, n)
    X_world, S_world = workspace.X_world, workspace.S_world
    Minv, J_full = np.empty((n, n)), np.empty((F6, n))
    Jdot_full, zero = np.empty(F6), np.zeros(n)
    rnea_ws = rnea_workspace(n)
    v, a = rnea_ws.v, rnea_ws.a  # the frames' world-frame pass in RNEA's arrays, before rnea
    bias, g = np.empty(n), np.empty(n)
    for b in range(B):
        minv_aba(tree, q[b], Minv, workspace)
        velocity_product_accelerations(tree, S_world, qd[b], v, a)
        frames_jacobian_into(tree, X_world, S_world, frames, J_full)
        frames_classical_acceleration_into(X_world, v, a, frames, Jdot_full)
        J, Jdot_qd = out.J[b], out.Jdot_qd[b]
        for r in range(m):
            Jdot_qd[r] = Jdot_full[rows[r]]
            for column in range(n):
                J[r, column] = J_full[rows[r], column]
        for velocity, forces in ((qd[b], bias), (zero, g)):  # b(q, q̇), then g(q): one RNEA
            rnea(tree, gravity, q[b], velocity, zero, None, forces, rnea_ws)
        # products written into their outputs (np.dot's out): an array assigned into a slice
        # compiles numba's shape-mismatch error path, seconds per kernel
        MinvJT = Minv @ J.T
        if not setting.given_inverse:
            np.dot(J, MinvJT, out.Lambda_inv[b])
        Lambda = out.Lambda[b]
        damped_task_inertia(out.Lambda_inv[b], setting.singular_threshold,
                            setting.singular_damping, Lambda, out.info[b])
        Jbar, mu = out.Jbar[b], out.mu[b]
        np.dot(MinvJT, Lambda, Jbar)
        np.dot(Jbar.T, g, out.p[b])
        np.dot(Jbar.T, bias - g, mu)
        mu -= Lambda @ Jdot_qd
