"""Inverse dynamics by the recursive Newton–Euler algorithm (RNEA), and what it gives: bias
forces C(q, q̇)q̇ + g(q) and gravity torques g(q). Featherstone, RBDA, Table 5.1.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.spatial import (
    add6,
    body_inertia_times,
    dot6,
    force_to_parent,
    joint_pose,
    motion_cross_force,
    motion_cross_motion,
    motion_to_child,
    pose_at,
    scale6,
    store,
    vector6,
)
from robodyn_ros.dynamics.tree import (
    PLACEMENT,
    POSE,
    armature,
    body_inertia,
    configuration_index,
    frame_axis,
    joint_start,
    parent_of,
    subspace,
)

# RBDA Table 5.1: v_i = Xup_i v_λ(i) + S_i q̇_i, f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i
RneaWorkspace = namedtuple("RneaWorkspace", "Xup v a f")
RneaWorkspace.__doc__ = """What rnea needs besides the state, each body's in its own frame: its pose
in its parent Xup (n x 12), velocity v, acceleration a and net force f (n x 6)."""


@kernel_helper
def rnea_workspace(n: int) -> RneaWorkspace:
    """An RneaWorkspace for n bodies."""
    return RneaWorkspace(Xup=np.empty((n, POSE)), v=np.empty((n, 6)), a=np.empty((n, 6)),
                         f=np.empty((n, 6)))


@kernel_helper
def joint_velocity_before(tree, i, qd):
    """Σ S_j q̇_j over the rows j of row i's joint before i, in the joint frame: what row i's
    velocity holds of its own joint's motion besides its own; zero for a one-row joint."""
    motion = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for j in range(joint_start(tree, i), i):
        motion = add6(motion, scale6(qd[j], subspace(tree, j)))
    return motion


@kernel_helper
def body_motion(tree, i, q, qd, qdd, v_parent, a_parent):
    """Body i's pose in its parent X_i, and its velocity and acceleration in its own frame from
    its parent's: v_i = X_i v_λ + S_i q̇_i, a_i = X_i a_λ + S_i q̈_i + v_i × S_i q̇_i (RBDA
    Table 5.1); on the rows of a multi-DOF joint, v_i less the joint's earlier rows' motion
    (joint_velocity_before), so that the joint's rows add up to X a_λ + S q̈ + X v_λ × S q̇
    as a multi-DOF joint of RBDA Table 5.1 does."""
    S = subspace(tree, i)
    X_i = joint_pose(pose_at(tree, i, PLACEMENT), S, frame_axis(tree, i), q,
                     configuration_index(tree, i))
    vJ = scale6(qd[i], S)
    v_i = add6(motion_to_child(X_i, v_parent), vJ)
    a_i = add6(motion_to_child(X_i, a_parent), scale6(qdd[i], S))
    if joint_start(tree, i) == i:
        a_i = add6(a_i, motion_cross_motion(v_i, vJ))
    else:
        v_before = add6(v_i, scale6(-1.0, joint_velocity_before(tree, i, qd)))
        a_i = add6(a_i, motion_cross_motion(v_before, vJ))
    return X_i, v_i, a_i


@kernel_helper
def rnea(tree: PackedTree, gravity: FloatArray, q: FloatArray, qd: FloatArray | None,
         qdd: FloatArray | None, f_ext: FloatArray | None, tau: FloatArray,
         workspace: RneaWorkspace) -> None:
    """τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵢᵀ f_ext,i for one state, written into tau; M
    includes the armature (tree.armature).

    Each body's quantities are in its own frame (RBDA Table 5.1). qd and qdd None: at rest,
    τ = g(q) − Σ Jᵢᵀ f_ext,i, without the velocity terms (a build of its own: numba prunes the
    branches on None). f_ext is None or (n, 6): a wrench on each body in the body frame about
    its origin. workspace: an RneaWorkspace
    (rnea_workspace), its arrays read where they are used: bound to names across the passes,
    they would be reference-counted at every call of this inlined helper.
    """
    # the base accelerates upwards at g: every body feels gravity
    a_root = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    v_root = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    # forward pass: velocities, accelerations and the net force on each body
    for i in range(tree.shape[0]):
        body, parent = body_inertia(tree, i), parent_of(tree, i)
        a_parent = vector6(workspace.a, parent) if parent >= 0 else a_root
        if qd is None:  # at rest: a_i = X_i a_λ, f_i = I_i a_i
            X_i = joint_pose(pose_at(tree, i, PLACEMENT), subspace(tree, i), frame_axis(tree, i),
                             q, configuration_index(tree, i))
            a_i = motion_to_child(X_i, a_parent)
            f_i = body_inertia_times(body, a_i)
        else:
            v_parent = vector6(workspace.v, parent) if parent >= 0 else v_root
            X_i, v_i, a_i = body_motion(tree, i, q, qd, qdd, v_parent, a_parent)
            h_i = body_inertia_times(body, v_i)
            f_i = add6(body_inertia_times(body, a_i), motion_cross_force(v_i, h_i))
            store(workspace.v, i, v_i)
        if f_ext is not None:
            f_i = add6(f_i, scale6(-1.0, vector6(f_ext, i)))
        store(workspace.Xup, i, X_i)
        store(workspace.a, i, a_i)
        store(workspace.f, i, f_i)

    # backward pass: joint torques, the rotor's a_i q̈_i added; each body's force is carried
    # by its parent
    for i in range(tree.shape[0] - 1, -1, -1):
        f_i = vector6(workspace.f, i)
        if qdd is None:
            tau[i] = dot6(subspace(tree, i), f_i)
        else:
            tau[i] = dot6(subspace(tree, i), f_i) + armature(tree, i) * qdd[i]
        parent = parent_of(tree, i)
        if parent >= 0:
            f_parent = add6(vector6(workspace.f, parent),
                            force_to_parent(pose_at(workspace.Xup, i, 0), f_i))
            store(workspace.f, parent, f_parent)


@kernel
def inverse_dynamics(tree: PackedTree, gravity: FloatArray, q: FloatArray, qd: FloatArray,
                     qdd: FloatArray, f_ext: FloatArray | None, tau: FloatArray) -> None:
    """RNEA for a state or a batch: q (..., nq), qd and qdd (..., n), f_ext None or
    (..., n, 6); tau like qd."""
    Q, QD, QDD = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(qdd)
    B, n = QD.shape
    TAU = tau.reshape((B, n))
    workspace = rnea_workspace(n)
    if f_ext is None:
        for b in range(B):
            rnea(tree, gravity, Q[b], QD[b], QDD[b], None, TAU[b], workspace)
    else:
        F = f_ext.reshape((B, n, 6))
        for b in range(B):
            rnea(tree, gravity, Q[b], QD[b], QDD[b], F[b], TAU[b], workspace)


@kernel
def bias_forces(tree: PackedTree, gravity: FloatArray, q: FloatArray, qd: FloatArray,
                tau: FloatArray) -> None:
    """C(q, q̇) q̇ + g(q): RNEA with q̈ = 0, for a state or a batch."""
    inverse_dynamics(tree, gravity, q, qd, np.zeros(qd.shape), None, tau)


@kernel
def gravity_torques(tree: PackedTree, gravity: FloatArray, q: FloatArray,
                    tau: FloatArray) -> None:
    """g(q): RNEA at rest, for a state or a batch."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    TAU = tau.reshape((B, n))
    workspace = rnea_workspace(n)
    for b in range(B):
        rnea(tree, gravity, Q[b], None, None, None, TAU[b], workspace)
