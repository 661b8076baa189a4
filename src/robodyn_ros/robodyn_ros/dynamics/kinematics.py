"""Forward kinematics of every body and frame, frame Jacobians and their time variation."""

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.spatial import (
    add3,
    add6,
    compose,
    cross,
    joint_pose_and_subspace,
    motion_cross_motion,
    pose_at,
    rotate,
    scale6,
    store,
    vector6,
)
from robodyn_ros.dynamics.tree import (
    FRAME_BODY,
    FRAME_PLACEMENT,
    PLACEMENT,
    POSE,
    configuration_index,
    frame_axis,
    joint_start,
    parent_of,
    subspace,
)


@kernel_helper
def forward_kinematics(tree: PackedTree, q: FloatArray, X_world: FloatArray,
                       S_world: FloatArray) -> None:
    """Forward pass: pose X_world[i] of every body in the world (n x 12), and its joint's
    motion subspace in world axes about the world origin, S_world[i] (n x 6), from the
    configuration q (nq)."""
    for i in range(tree.shape[0]):
        body_kinematics(tree, i, q, X_world, S_world)


@kernel_helper
def body_kinematics(tree, i, q, X_world, S_world):
    """Body i's step of forward_kinematics, its parent's pose already in X_world: stores and
    returns its pose X and its joint's world motion subspace S."""
    parent = parent_of(tree, i)
    placement = pose_at(tree, i, PLACEMENT)
    if parent >= 0:
        placement = compose(pose_at(X_world, parent, 0), placement)
    X, S = joint_pose_and_subspace(placement, subspace(tree, i), frame_axis(tree, i), q,
                                   configuration_index(tree, i))
    store(X_world, i, X)
    store(S_world, i, S)
    return X, S


@kernel_helper
def joint_velocity_less_before(tree, i, qd, S_world, v):
    """v less what row i's joint's earlier rows add, Σ S_j q̇_j (world axes about the world
    origin): from the velocity of row i (or of the row before it), the velocity whose product
    with the row's S_i q̇_i is its share of a multi-DOF joint's velocity product v_λ × S q̇
    (tree.py); v itself on a joint of one row."""
    for j in range(joint_start(tree, i), i):
        v = add6(v, scale6(-qd[j], vector6(S_world, j)))
    return v


@kernel_helper
def frame_pose_into(X_world: FloatArray, frame: FloatArray, out: FloatArray) -> None:
    """out (4x4) = pose of the frame's body in the world · pose of the frame in its body."""
    body = int(frame[FRAME_BODY])
    X = pose_at(frame[np.newaxis], 0, FRAME_PLACEMENT)  # a view made inline, unlike reshape
    if body >= 0:
        X = compose(pose_at(X_world, body, 0), X)
    for r in range(3):
        out[r, 0], out[r, 1], out[r, 2], out[r, 3] = X[3 * r], X[3 * r + 1], X[3 * r + 2], X[9 + r]
        out[3, r] = 0.0
    out[3, 3] = 1.0


@kernel_helper
def frame_origin(X_world, frame):
    """The frame origin in the world, p_body + R_body t (t its offset in the body)."""
    start = FRAME_PLACEMENT + 9
    t = (frame[start], frame[start + 1], frame[start + 2])
    body = int(frame[FRAME_BODY])
    if body < 0:
        return t
    X = pose_at(X_world, body, 0)
    return add3(rotate(X, t), (X[9], X[10], X[11]))


@kernel_helper
def frame_jacobian_into(tree: PackedTree, S_world: FloatArray, body: int,
                        origin: FloatArray | tuple[float, float, float], J: FloatArray) -> None:
    """Jacobian (6 x n) of a frame on `body` with its origin at `origin`, world-aligned axes.

    Column j, for each joint on the path to the root, is the joint's world motion [v_O; ω]
    moved from the world origin to the frame origin: [v_O + ω × origin; ω].
    """
    J[:, :] = 0.0
    j = body
    while j >= 0:
        m = vector6(S_world, j)
        J[0, j] = m[0] + m[4] * origin[2] - m[5] * origin[1]
        J[1, j] = m[1] + m[5] * origin[0] - m[3] * origin[2]
        J[2, j] = m[2] + m[3] * origin[1] - m[4] * origin[0]
        J[3, j], J[4, j], J[5, j] = m[3], m[4], m[5]
        j = parent_of(tree, j)


@kernel_helper
def frames_jacobian_into(tree: PackedTree, X_world: FloatArray, S_world: FloatArray,
                         frames: FloatArray, J: FloatArray) -> None:
    """J (6F x n): the F frames' Jacobians (frame_jacobian_into) stacked, frame k in rows
    6k .. 6k + 5."""
    for k in range(frames.shape[0]):
        frame_jacobian_into(tree, S_world, int(frames[k, FRAME_BODY]),
                            frame_origin(X_world, frames[k]), J[6 * k : 6 * k + 6])


@kernel_helper
def path_kinematics(tree, q, body, X_world, S_world, path):
    """forward_kinematics of the bodies from the root to `body` only, root first: all a frame
    on `body` needs (the other rows of X_world and S_world are left as they were); path (n,)
    int64 is a workspace."""
    count, j = 0, body
    while j >= 0:
        path[count] = j
        count, j = count + 1, parent_of(tree, j)
    for k in range(count - 1, -1, -1):
        body_kinematics(tree, path[k], q, X_world, S_world)


@kernel_helper
def frame_jacobian_of(tree, frame, q, X_world, S_world, pose, path, J):
    """J (6 x n) of one frame (a 13-row) at one state, from the kinematics of its body's path
    alone; X_world, S_world, pose (4x4) and path (n,) int64 are workspaces."""
    body = int(frame[FRAME_BODY])
    path_kinematics(tree, q, body, X_world, S_world, path)
    frame_pose_into(X_world, frame, pose)
    frame_jacobian_into(tree, S_world, body, pose[:3, 3], J)


@kernel_helper
def joint_body_row(tree, i):
    """The last row of row i's joint, its body's (i itself for a joint of one row)."""
    last, n = i, tree.shape[0]
    while last + 1 < n and joint_start(tree, last + 1) == joint_start(tree, i):
        last += 1
    return last


@kernel_helper
def frame_jacobian_rate_into(tree, S_world, v, body, origin, J_dot):
    """J̇ (6 x n), the time derivative of the world-aligned Jacobian of a frame on `body` with
    its origin p at `origin`, from the bodies' velocities v (n x 6, world axes about the world
    origin). Column j of J is [v_j + ω_j × p; ω_j] for S_j = [v_j; ω_j]; with Ṡ_j = v_b × S_j
    (b the body of j's joint, whose frame S_j turns with) and ṗ = v_O + ω × p of the frame's
    body, column j of J̇ is [Ṡ_v + Ṡ_ω × p + ω_j × ṗ; Ṡ_ω]."""
    J_dot[:, :] = 0.0
    if body < 0:
        return
    omega = (v[body, 3], v[body, 4], v[body, 5])
    p_dot = add3((v[body, 0], v[body, 1], v[body, 2]), cross(omega, origin))
    j = body
    while j >= 0:
        S = vector6(S_world, j)
        S_dot = motion_cross_motion(vector6(v, joint_body_row(tree, j)), S)
        turn, sweep = cross(S_dot[3:6], origin), cross(S[3:6], p_dot)
        for r in range(3):
            J_dot[r, j] = S_dot[r] + turn[r] + sweep[r]
            J_dot[3 + r, j] = S_dot[3 + r]
        j = parent_of(tree, j)


@kernel
def frame_jacobian_time_variation(tree: PackedTree, frame: FloatArray, q: FloatArray,
                                  qd: FloatArray, out: FloatArray) -> None:
    """J̇ of one frame (a 13-row) for a state (nq,), (n,) or a batch (B, ...); out (..., 6, n)."""
    Q, QD = np.atleast_2d(q), np.atleast_2d(qd)
    B, n = Q.shape[0], tree.shape[0]
    OUT = out.reshape((B, 6, n))
    X_world, S_world, v, pose = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6)), \
        np.empty((4, 4))
    body = int(frame[FRAME_BODY])
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        for i in range(n):
            parent = parent_of(tree, i)
            for r in range(6):
                v[i, r] = S_world[i, r] * QD[b, i] + (v[parent, r] if parent >= 0 else 0.0)
        frame_pose_into(X_world, frame, pose)
        frame_jacobian_rate_into(tree, S_world, v, body, (pose[0, 3], pose[1, 3], pose[2, 3]),
                                 OUT[b])


@kernel
def frame_poses(tree: PackedTree, frames: FloatArray, q: FloatArray, out: FloatArray) -> None:
    """Poses (4x4) of the given frames (F x 13 rows) for a state (n,) or a batch (B, n);
    out is (..., F, 4, 4)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    F = frames.shape[0]
    OUT = out.reshape((B, F, 4, 4))
    X_world, S_world = np.empty((n, POSE)), np.empty((n, 6))
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        for k in range(F):
            frame_pose_into(X_world, frames[k], OUT[b, k])


@kernel
def frame_jacobian(tree: PackedTree, frame: FloatArray, q: FloatArray, out: FloatArray) -> None:
    """Jacobian of one frame (a 13-row) for a state (nq,) or a batch (B, nq); out (..., 6, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    OUT = out.reshape((B, 6, n))
    X_world, S_world, pose = np.empty((n, POSE)), np.empty((n, 6)), np.empty((4, 4))
    path = np.empty(n, dtype=np.int64)
    for b in range(B):
        frame_jacobian_of(tree, frame, Q[b], X_world, S_world, pose, path, OUT[b])
