"""Forward dynamics of a floating-base robot with frames held in the world (rigid bilateral
contacts), Baumgarte-stabilised, in the base frame of dynamics.floating_base.

With J_c the held rows of the contact frames' Jacobians, λ the contact forces and the Delassus
matrix D = J_c M⁻¹ J_cᵀ (the Λ⁻¹ of the contact frames: Featherstone 2010's O(n) recursion,
task_space.articulated_task_inverse), the KKT system of M v̇ + b = τ + J_cᵀ λ and
J_c v̇ + γ = −kd J_c v − kp e is solved by its Schur complement:

    v̇_free = ABA(τ),   λ = D⁻¹ (−kd J_c v − kp e − J_c v̇_free − γ),   v̇ = v̇_free + ABA₀(J_cᵀ λ)

(ABA₀: at rest, without gravity, i.e. M⁻¹). γ is the classical acceleration at v̇ = 0 of a "3d"
contact's origin and the spatial one of a "6d" contact's frame, as Pinocchio's constraint
dynamics takes them; e the placement error, given.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.floating_base import base_frame_state
from robodyn_ros.dynamics.forward_dynamics import aba_state, aba_workspace
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import (
    forward_kinematics,
    frame_jacobian_into,
    frame_origin,
)
from robodyn_ros.dynamics.linalg import cholesky, cholesky_solve
from robodyn_ros.dynamics.task_space import (
    articulated_task_inverse,
    articulated_workspace,
    classical_acceleration_into,
    velocity_product_accelerations,
)
from robodyn_ros.dynamics.tree import FRAME_BODY

DEPENDENT_CONTACTS = 1e-12
"""A Delassus pivot at or below this times its largest diagonal entry: the contacts are not
independent, and their forces not determined."""

ConstraintWorkspace = namedtuple("ConstraintWorkspace", (
    "free",         # (n,) the kernels' q̈ of ABA(τ), v̇_free less the base shift
    "full",         # (6F, 6F) Λ⁻¹ of the contact frames, base axes
    "J",            # (6F, n) their Jacobians, base axes
    "drift",        # (6F,) γ of each frame, base axes
    "v_body",       # (n, 6) each body's velocity, for γ
    "a_body",       # (n, 6) each body's acceleration at the kernels' q̈ = 0
    "delassus",     # (m, m) D, the held rows of full
    "factor",       # (m, m) its Cholesky factor
    "rhs",          # (m,) the right-hand side, then λ in base axes
    "generalised",  # (n,) J_cᵀ λ
    "response",     # (n,) M⁻¹ J_cᵀ λ
    "articulated",  # an ArticulatedWorkspace (task_space)
    "aba",          # an ABA workspace of one lane
))


@kernel_helper
def constraint_workspace(n, frames, m):
    """A ConstraintWorkspace of n joints, `frames` contact frames and m held rows."""
    return ConstraintWorkspace(
        np.empty(n), np.empty((6 * frames, 6 * frames)), np.empty((6 * frames, n)),
        np.empty(6 * frames), np.empty((n, 6)), np.empty((n, 6)), np.empty((m, m)),
        np.empty((m, m)), np.empty(m), np.empty(n), np.empty(n), articulated_workspace(n),
        aba_workspace(n, 1),
    )


@kernel_helper
def contact_kinematics(tree, frames, spatial, v, ws):
    """ws.J and ws.drift of every contact frame, after articulated_task_inverse's forward
    kinematics: γ is the classical acceleration [a_p; α] at the kernels' q̈ = 0, less ω × ṗ on
    the linear rows of a frame held whole (`spatial`)."""
    X_world, S_world = ws.articulated.X_world, ws.articulated.S_world
    velocity_product_accelerations(tree, S_world, v, ws.v_body, ws.a_body)
    for k in range(frames.shape[0]):
        body, origin = int(frames[k, FRAME_BODY]), frame_origin(X_world, frames[k])
        block = slice(6 * k, 6 * k + 6)
        frame_jacobian_into(tree, S_world, body, origin, ws.J[block])
        classical_acceleration_into(ws.v_body, ws.a_body, body, origin, ws.drift[block])
        if spatial[k]:
            twist = ws.J[block] @ v
            ws.drift[6 * k] -= twist[4] * twist[2] - twist[5] * twist[1]
            ws.drift[6 * k + 1] -= twist[5] * twist[0] - twist[3] * twist[2]
            ws.drift[6 * k + 2] -= twist[3] * twist[1] - twist[4] * twist[0]


@kernel_helper
def rotate_blocks(R, x, transpose):
    """x ← R x (Rᵀ x when `transpose`) on each 3-row block of x, in place."""
    for start in range(0, x.shape[0], 3):
        a, b, c = x[start], x[start + 1], x[start + 2]
        for r in range(3):
            if transpose:
                x[start + r] = R[0, r] * a + R[1, r] * b + R[2, r] * c
            else:
                x[start + r] = R[r, 0] * a + R[r, 1] * b + R[r, 2] * c


@kernel_helper
def held(tree, gravity, frames, rows, spatial, gains, q, v, tau, error, given, vdot, forces, ws):
    """One state's v̇ and λ (world axes) by the module's Schur complement; both NaN where the
    base quaternion is not of unit norm or the contacts are not independent. error (m,) is
    the placement error in world axes, rotated here to the base frame."""
    kp, kd = gains[0], gains[1]
    no_gravity = np.zeros(3)
    q_tree, R, shift, unit = base_frame_state(gravity, q, v)
    aba_state(tree, no_gravity, q_tree, v, tau, None, ws.free, ws.aba)
    if given is None:
        articulated_task_inverse(tree, frames, q_tree, ws.full, ws.articulated)
    else:
        forward_kinematics(tree, q_tree, ws.articulated.X_world, ws.articulated.S_world)
        ws.full[:, :] = given
    contact_kinematics(tree, frames, spatial, v, ws)
    # the kinematic q̈ of v̇_free = free + shift is free + [Rᵀ g; 0]: shift less e(v)
    gravity_base = R.T @ gravity
    base_error = error.copy()
    rotate_blocks(R, base_error, True)
    m, n = rows.shape[0], v.shape[0]
    for r in range(m):
        row = rows[r]
        acceleration, velocity = ws.drift[row], 0.0
        for j in range(n):
            acceleration += ws.J[row, j] * ws.free[j]
            velocity += ws.J[row, j] * v[j]
        for j in range(3):
            acceleration += ws.J[row, j] * gravity_base[j]
        ws.rhs[r] = -kd * velocity - kp * base_error[r] - acceleration
        for c in range(m):
            ws.delassus[r, c] = ws.full[row, rows[c]]
    largest = 0.0
    for r in range(m):
        largest = max(largest, ws.delassus[r, r])
    independent = cholesky(ws.delassus, 0.0, ws.factor)
    for r in range(m):  # the factor keeps 1 / √pivot on its diagonal
        independent = independent and 1.0 / ws.factor[r, r] ** 2 > DEPENDENT_CONTACTS * largest
    if not (unit and independent):
        vdot[:] = np.nan
        forces[:] = np.nan
        return
    cholesky_solve(ws.factor, ws.rhs)
    for j in range(n):
        total = 0.0
        for r in range(m):
            total += ws.J[rows[r], j] * ws.rhs[r]
        ws.generalised[j] = total
    aba_state(tree, no_gravity, q_tree, np.zeros(n), ws.generalised, None, ws.response, ws.aba)
    for j in range(n):
        vdot[j] = ws.free[j] + shift[j] + ws.response[j]
    forces[:] = ws.rhs
    rotate_blocks(R, forces, False)


@kernel
def constrained_forward_dynamics(tree, gravity, frames, rows, spatial, gains, q, v, tau, error,
                                 given, vdot, forces):
    """v̇ and the contact forces for a state or a batch (module doc).

    Args:
        tree, gravity: the floating model (dynamics.floating_base) and gravity in the world.
        frames: (F, FRAME_WIDTH) the contact frames' rows.
        rows: (m,) int64, the held rows 6 k + axis of the 6F task, whole 3-row blocks.
        spatial: (F,) bool, frames held whole ("6d": γ is their spatial acceleration).
        gains: (kp, kd), the Baumgarte gains.
        q, v, tau: (..., n + 1), (..., n), (..., n) the states and generalised forces.
        error: (..., m) the placement errors in world axes.
        given: None, or (..., 6F, 6F) Λ⁻¹ of the frames in base axes by another route.
        vdot, forces: out, (..., n) and (..., m), the forces in world axes.
    """
    Q, V, TAU, ERROR = np.atleast_2d(q), np.atleast_2d(v), np.atleast_2d(tau), np.atleast_2d(error)
    B, n = V.shape
    m = rows.shape[0]
    VDOT, FORCES = vdot.reshape((B, n)), forces.reshape((B, m))
    ws = constraint_workspace(n, frames.shape[0], m)
    if given is None:
        for b in range(B):
            held(tree, gravity, frames, rows, spatial, gains, Q[b], V[b], TAU[b], ERROR[b], None,
                 VDOT[b], FORCES[b], ws)
    else:
        GIVEN = given.reshape((B, 6 * frames.shape[0], 6 * frames.shape[0]))
        for b in range(B):
            held(tree, gravity, frames, rows, spatial, gains, Q[b], V[b], TAU[b], ERROR[b],
                 GIVEN[b], VDOT[b], FORCES[b], ws)
