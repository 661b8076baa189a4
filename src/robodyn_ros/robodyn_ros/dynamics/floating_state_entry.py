"""C entry points of a floating-base robot's single-state kernels, as state_entry's for a
fixed base (the signature and the StateCall that enters them are the same): constants are
gravity in the world (the frame's row for the frame entries), q has n + 1 numbers, and the
kernels run on the base-frame state without gravity (dynamics.floating_base). A quaternion
that is not of unit norm gives NaN, for the general path to say so. Constrained dynamics has
its entry in contact_state_entry.

A module of its own, compiled or loaded on first use (floating_state_entries()), so that a
process that never meets a floating base never compiles these.
"""

import numpy as np
from numba import carray

from robodyn_ros.dynamics.floating_base import base_frame_state, has_unit_quaternion, rotate_rows
from robodyn_ros.dynamics.forward_dynamics import aba_state, aba_workspace
from robodyn_ros.dynamics.inertia_matrix import crba_workspace, floating_crba
from robodyn_ros.dynamics.inverse_dynamics import rnea, rnea_workspace
from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics, frame_jacobian_of, frame_pose_into
from robodyn_ros.dynamics.state_entry import as_tree, entry
from robodyn_ros.dynamics.tree import FRAME_WIDTH, POSE


@kernel_helper
def no_gravity():
    return np.zeros(3)


@entry
def inverse_dynamics_entry(tree, gravity, n, q, v, vdot, tau):
    q_tree, _, shift, unit = base_frame_state(carray(gravity, 3), carray(q, n + 1), carray(v, n))
    out = carray(tau, n)
    rnea(as_tree(tree, n), no_gravity(), q_tree, carray(v, n), carray(vdot, n) - shift, None,
         out, rnea_workspace(n))
    if not unit:
        out[0] = np.nan


@entry
def mass_matrix_entry(tree, gravity, n, q, _x1, _x2, M):
    configuration, packed, out = carray(q, n + 1), as_tree(tree, n), carray(M, (n, n))
    floating_crba(packed, configuration, out, crba_workspace(packed, n))
    if not has_unit_quaternion(configuration):
        out[0, 0] = np.nan


@entry
def forward_dynamics_entry(tree, gravity, n, q, v, tau, vdot):
    q_tree, _, shift, unit = base_frame_state(carray(gravity, 3), carray(q, n + 1), carray(v, n))
    out = carray(vdot, n)
    aba_state(as_tree(tree, n), no_gravity(), q_tree, carray(v, n), carray(tau, n), None, out,
              aba_workspace(n, 1))
    out += shift
    if not unit:
        out[0] = np.nan


@entry
def frame_pose_entry(tree, frame, n, q, _x1, _x2, pose):
    q_tree, R, _, unit = base_frame_state(no_gravity(), carray(q, n + 1), None)
    X_world, S_world, local = np.empty((n, POSE)), np.empty((n, 6)), np.empty((4, 4))
    forward_kinematics(as_tree(tree, n), q_tree, X_world, S_world)
    frame_pose_into(X_world, carray(frame, FRAME_WIDTH), local)
    out, position = carray(pose, (4, 4)), carray(q, 3)
    out[:, :] = local
    rotate_rows(R, out, 0)
    for r in range(3):
        out[r, 3] += position[r]
    if not unit:
        out[0, 0] = np.nan


@entry
def jacobian_entry(tree, frame, n, q, _x1, _x2, J):
    q_tree, R, _, unit = base_frame_state(no_gravity(), carray(q, n + 1), None)
    X_world, S_world, pose = np.empty((n, POSE)), np.empty((n, 6)), np.empty((4, 4))
    out = carray(J, (6, n))
    frame_jacobian_of(as_tree(tree, n), carray(frame, FRAME_WIDTH), q_tree, X_world, S_world,
                      pose, np.empty(n, dtype=np.int64), out)
    rotate_rows(R, out, 0)
    rotate_rows(R, out, 3)
    if not unit:
        out[0, 0] = np.nan


# The functions whose entry writes a symmetric answer whole (StateCall checks half of it).
SYMMETRIC_ANSWERS = frozenset({"mass_matrix"})

# The FloatingBaseRobot function each entry answers → the entry.
ENTRIES = {
    "inverse_dynamics": inverse_dynamics_entry,
    "mass_matrix": mass_matrix_entry,
    "forward_dynamics": forward_dynamics_entry,
    "frame_pose": frame_pose_entry,
    "jacobian": jacobian_entry,
}
