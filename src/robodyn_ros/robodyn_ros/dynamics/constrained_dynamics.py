"""Forward dynamics of a robot with frames held in the world (rigid bilateral contacts),
Baumgarte-stabilised, in world coordinates, on any tree (a free flyer or planar joint is a
joint like the others).

With J_c the held rows of the contact frames' Jacobians, λ the contact forces and the Delassus
matrix D = J_c M⁻¹ J_cᵀ (the Λ⁻¹ of the contact frames: Featherstone 2010's O(n) recursion,
task_space.articulated_task_inverse), the KKT system of M v̇ + b = τ + J_cᵀ λ and
J_c v̇ + γ = −kd J_c v − kp e is solved by its Schur complement:

    v̇_free = ABA(τ),   λ = D⁻¹ (−kd J_c v − kp e − J_c v̇_free − γ),   v̇ = v̇_free + ABA₀(J_cᵀ λ)

(ABA₀: at rest, without gravity, i.e. M⁻¹). One forward kinematics and one pass of articulated
inertias serve all three: the Λ⁻¹ recursion and both articulated-body solves, which run in
world coordinates (articulated_solve), the free solve with the root accelerating upwards at g
as RNEA takes gravity. γ is the classical acceleration at v̇ = 0 of a "3d"
contact's origin and the spatial one of a "6d" contact's frame, as Pinocchio's constraint
dynamics takes them; e the placement error, given.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import BoolArray, FloatArray, IntArray, PackedTree
from robodyn_ros.dynamics.fixed_frame import (
    ZERO6,
    gravity_acceleration,
    velocity_terms,
    world_inertias,
)
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.kinematics import forward_kinematics, frame_origin, frames_jacobian_into
from robodyn_ros.dynamics.linalg import cholesky, cholesky_solve
from robodyn_ros.dynamics.spatial import (
    add3,
    add6,
    cross,
    dot6,
    inertia_at,
    matrix_times,
    scale6,
    store,
    store_inertia_matrix,
    vector6,
)
from robodyn_ros.dynamics.task_space import (
    articulated_pass,
    articulated_workspace,
    frames_classical_acceleration_into,
    inverse_inertia_blocks,
    mark_paths,
)
from robodyn_ros.dynamics.tree import (
    FRAME_BODY,
    FRAME_WIDTH,
    UNIT_TOLERANCE,
    parent_of,
    rotations_are_unit,
)

ZERO3 = (0.0, 0.0, 0.0)

DEPENDENT_CONTACTS = 1e-12
"""A Delassus pivot at or below this times its largest diagonal entry: the contacts are not
independent, and their forces not determined."""

ConstraintWorkspace = namedtuple("ConstraintWorkspace", (
    "free",         # (n,) v̇_free = ABA(τ)
    "full",         # (6F, 6F) Λ⁻¹ of the contact frames, world axes
    "J",            # (6F, n) their Jacobians, world axes
    "drift",        # (6F,) γ of each frame, world axes
    "inertia",      # (n, 10) each body's inertia, world coordinates
    "v_body",       # (n, 6) each body's velocity
    "c",            # (n, 6) each joint's velocity product v_i × S_i q̇_i
    "bias",         # (n, 6) each body's v_i ×* I_i v_i
    "a_body",       # (n, 6) each body's acceleration at the kernels' q̈ = 0
    "pA",           # (n, 6) the articulated bias forces of a solve
    "a",            # (n, 6) the accelerations of a solve
    "delassus",     # (m, m) D, the held rows of full
    "factor",       # (m, m) its Cholesky factor
    "rhs",          # (m,) the right-hand side, then λ
    "generalised",  # (n,) J_cᵀ λ
    "response",     # (n,) M⁻¹ J_cᵀ λ
    "articulated",  # an ArticulatedWorkspace (task_space): kinematics, IA, U, D, Ω
))


TASK_HEADER = 7  # gravity (3), kp, kd, the number of frames F and of held rows m


def pack_contact_task(gravity: np.ndarray, frames: np.ndarray, rows: np.ndarray,
                      spatial: np.ndarray, kp: float, kd: float) -> np.ndarray:
    """The arguments of constrained_forward_dynamics but the state, as one float array (the
    constants of contact_state_entry's C entry): the header (TASK_HEADER), the F frames' rows,
    the m held rows and the F "6d" flags."""
    header = [*gravity, kp, kd, frames.shape[0], rows.shape[0]]
    return np.concatenate([header, frames.ravel(), rows, spatial]).astype(float)


@kernel_helper
def contact_task_size(header):
    """The length of a packed contact task, from its header."""
    frames, m = int(header[5]), int(header[6])
    return TASK_HEADER + frames * (FRAME_WIDTH + 1) + m


@kernel_helper
def unpack_contact_task(task):
    """gravity, gains, frames, rows and spatial of a task packed by pack_contact_task."""
    F, m = int(task[5]), int(task[6])
    at = TASK_HEADER + F * FRAME_WIDTH
    rows = np.empty(m, dtype=np.int64)
    for r in range(m):
        rows[r] = int(task[at + r])
    frames = task[TASK_HEADER:at].reshape((F, FRAME_WIDTH))
    return task[0:3], task[3:5], frames, rows, task[at + m : at + m + F] != 0.0


@kernel_helper
def constraint_workspace(n, frames, m):
    """A ConstraintWorkspace of n joints, `frames` contact frames and m held rows."""
    return ConstraintWorkspace(
        np.empty(n), np.empty((6 * frames, 6 * frames)), np.empty((6 * frames, n)),
        np.empty(6 * frames), np.empty((n, 10)), np.empty((n, 6)), np.empty((n, 6)),
        np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)),
        np.empty((m, m)), np.empty((m, m)), np.empty(m), np.empty(n), np.empty(n),
        articulated_workspace(n),
    )


@kernel_helper
def articulated_solve(tree, S_world, IA, U, D, tau, c, bias, carrying, a_root, qdd, pA, a):
    """q̈ of the articulated-body algorithm in world coordinates (RBDA Table 7.1, every
    quantity about the world origin, so nothing is transformed), its articulated inertias IA,
    U = IA S and D = Sᵀ U (armature included) already made (task_space.articulated_inertias):
    the bias pass p_λ += p_i + I^a_i c_i + U_i u_i / D_i with u_i = τ_i − S_iᵀ p_i and
    I^a_i = IA_i − U_i U_iᵀ / D_i, then
    q̈_i = (u_i − U_iᵀ a'_i) / D_i with a'_i = a_λ + c_i, a_i = a'_i + S_i q̈_i. c and bias
    (n x 6: velocity products v_i × S_i q̇_i and forces v_i ×* I_i v_i) None: zero, a solve of
    M q̈ = τ. carrying None, or (n,) bool: only those bodies carry force in the bias pass (τ
    is zero on the others and on their subtrees). a_root: the root's acceleration
    (fixed_frame.gravity_acceleration for gravity, ZERO6 for none); pA, a: workspaces."""
    n = tau.shape[0]
    for i in range(n):
        if bias is None:
            store(pA, i, ZERO6)
        else:
            store(pA, i, vector6(bias, i))
    for i in range(n - 1, -1, -1):
        if carrying is not None and not carrying[i]:
            qdd[i] = 0.0
            continue
        S, U_i, p_i = vector6(S_world, i), vector6(U, i), vector6(pA, i)
        u = tau[i] - dot6(S, p_i)
        qdd[i] = u
        parent = parent_of(tree, i)
        if parent >= 0:
            if c is None:
                passed = add6(p_i, scale6(u / D[i], U_i))
            else:  # I^a c = IA c − U Uᵀ c / D
                c_i = vector6(c, i)
                passed = add6(add6(p_i, matrix_times(IA, i, c_i)),
                              scale6((u - dot6(U_i, c_i)) / D[i], U_i))
            store(pA, parent, add6(vector6(pA, parent), passed))
    for i in range(n):
        parent = parent_of(tree, i)
        a_i = vector6(a, parent) if parent >= 0 else a_root
        if c is not None:
            a_i = add6(a_i, vector6(c, i))
        qdd[i] = (qdd[i] - dot6(vector6(U, i), a_i)) / D[i]
        store(a, i, add6(a_i, scale6(qdd[i], vector6(S_world, i))))


@kernel_helper
def contact_kinematics(tree, frames, spatial, ws):
    """ws.J and ws.drift of every contact frame, after the kinematics and velocity terms: γ is
    the classical acceleration [a_p; α] at the kernels' q̈ = 0 (each body accelerating at the
    sum of the velocity products above it), less ω × ṗ on the linear rows of a frame held
    whole (`spatial`)."""
    X_world, S_world = ws.articulated.X_world, ws.articulated.S_world
    for i in range(ws.c.shape[0]):
        parent = parent_of(tree, i)
        a_parent = vector6(ws.a_body, parent) if parent >= 0 else ZERO6
        store(ws.a_body, i, add6(a_parent, vector6(ws.c, i)))
    frames_jacobian_into(tree, X_world, S_world, frames, ws.J)
    frames_classical_acceleration_into(X_world, ws.v_body, ws.a_body, frames, ws.drift)
    for k in range(frames.shape[0]):
        if spatial[k]:
            body, origin = int(frames[k, FRAME_BODY]), frame_origin(X_world, frames[k])
            linear, angular = frame_twist(ws.v_body, body, origin)
            ws.drift[6 * k] -= angular[1] * linear[2] - angular[2] * linear[1]
            ws.drift[6 * k + 1] -= angular[2] * linear[0] - angular[0] * linear[2]
            ws.drift[6 * k + 2] -= angular[0] * linear[1] - angular[1] * linear[0]


@kernel_helper
def frame_twist(v: FloatArray, body: int, origin: FloatArray | tuple[float, float, float]
                ) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """The velocity (ṗ, ω) of the point `origin` fixed to `body`, from its spatial velocity
    [v_O; ω] about the world origin: ṗ = v_O + ω × p (zero on the root)."""
    if body < 0:
        return ZERO3, ZERO3
    w = (v[body, 3], v[body, 4], v[body, 5])
    return add3((v[body, 0], v[body, 1], v[body, 2]), cross(w, origin)), w


@routine
def held(tree, gravity, frames, rows, spatial, gains, q, v, tau, error, given, vdot, forces, ws):
    """One state's v̇ and λ (world axes) by the module's Schur complement; both NaN where a
    free flyer's or planar joint's rotation is off unit norm or the contacts are not
    independent. error (m,): the placement error, world axes; given: Λ⁻¹ of the frames by
    another route, or empty (0 x 0) to compute it."""
    kp, kd = gains[0], gains[1]
    art, n = ws.articulated, v.shape[0]
    X_world, S_world, on_path = art.X_world, art.S_world, art.on_path
    forward_kinematics(tree, q, X_world, S_world)
    world_inertias(tree, X_world, ws.inertia)
    for i in range(n):
        store_inertia_matrix(art.IA, i, inertia_at(ws.inertia, i))
    on_path[:] = False
    articulated_pass(tree, art, on_path)  # every body passes its inertia on
    mark_paths(tree, frames, on_path)
    if given.shape[0] == 0:
        inverse_inertia_blocks(tree, frames, ws.full, art)
    else:
        ws.full[:, :] = given
    velocity_terms(tree, v, None, X_world, S_world, ws.inertia, ws.v_body, ws.c, ws.bias)
    articulated_solve(tree, S_world, art.IA, art.U, art.D, tau, ws.c, ws.bias, None,
                      gravity_acceleration(gravity), ws.free, ws.pA, ws.a)
    contact_kinematics(tree, frames, spatial, ws)
    m = rows.shape[0]
    for r in range(m):
        row = rows[r]
        acceleration, velocity = ws.drift[row], 0.0
        for j in range(n):  # J_c is zero off the contacts' paths
            if on_path[j]:
                acceleration += ws.J[row, j] * ws.free[j]
                velocity += ws.J[row, j] * v[j]
        ws.rhs[r] = -kd * velocity - kp * error[r] - acceleration
        for c in range(m):
            ws.delassus[r, c] = ws.full[row, rows[c]]
    largest = 0.0
    for r in range(m):
        largest = max(largest, ws.delassus[r, r])
    independent = cholesky(ws.delassus, 0.0, ws.factor)
    for r in range(m):  # the factor keeps 1 / √pivot on its diagonal
        independent = independent and 1.0 / ws.factor[r, r] ** 2 > DEPENDENT_CONTACTS * largest
    if not (independent and rotations_are_unit(tree, q, UNIT_TOLERANCE)):
        vdot[:] = np.nan
        forces[:] = np.nan
        return
    cholesky_solve(ws.factor, ws.rhs)
    for j in range(n):
        total = 0.0
        if on_path[j]:
            for r in range(m):
                total += ws.J[rows[r], j] * ws.rhs[r]
        ws.generalised[j] = total
    articulated_solve(tree, S_world, art.IA, art.U, art.D, ws.generalised, None, None, on_path,
                      ZERO6, ws.response, ws.pA, ws.a)
    for j in range(n):
        vdot[j] = ws.free[j] + ws.response[j]
    forces[:] = ws.rhs


@kernel
def constrained_forward_dynamics(tree: PackedTree, gravity: FloatArray, frames: FloatArray,
                                 rows: IntArray, spatial: BoolArray, gains: FloatArray,
                                 q: FloatArray, v: FloatArray, tau: FloatArray,
                                 error: FloatArray, given: FloatArray, vdot: FloatArray,
                                 forces: FloatArray) -> None:
    """v̇ and the contact forces for a state or a batch (module doc).

    Args:
        tree, gravity: the packed tree and gravity in the world.
        frames: (F, FRAME_WIDTH) the contact frames' rows.
        rows: (m,) int64, the held rows 6 k + axis of the 6F task, whole 3-row blocks.
        spatial: (F,) bool, frames held whole ("6d": γ is their spatial acceleration).
        gains: (kp, kd), the Baumgarte gains.
        q, v, tau: (..., nq), (..., n), (..., n) the states and generalised forces.
        error: (..., m) the placement errors in world axes.
        given: (..., 6F, 6F) Λ⁻¹ of the frames in world axes by another route, or an empty
            array: computed here by the recursion (one array type either way: one build).
        vdot, forces: out, (..., n) and (..., m), the forces in world axes.
    """
    Q, V, TAU, ERROR = np.atleast_2d(q), np.atleast_2d(v), np.atleast_2d(tau), np.atleast_2d(error)
    B, n = V.shape
    F, m = frames.shape[0], rows.shape[0]
    VDOT, FORCES = vdot.reshape((B, n)), forces.reshape((B, m))
    ws = constraint_workspace(n, F, m)
    computed = given.size == 0
    GIVEN = np.empty((1, 0, 0)) if computed else given.reshape((B, 6 * F, 6 * F))
    for b in range(B):
        held(tree, gravity, frames, rows, spatial, gains, Q[b], V[b], TAU[b], ERROR[b],
             GIVEN[0 if computed else b], VDOT[b], FORCES[b], ws)
