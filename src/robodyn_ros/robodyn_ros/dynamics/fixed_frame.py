"""The Newton–Euler recursions with every vector and tensor projected in ONE fixed frame (world
axes about the world origin), shared by the iterative and Schur forward-dynamics methods: a body
passes its motions and forces to its neighbours without any transform, so once the projections
are made (one forward-kinematics pass) each recursion costs O(n) with no rotations (Fijany &
Scheid, "Efficient conjugate gradient algorithms for computation of the manipulator forward
dynamics", §III.3, with the world frame in place of their end-effector frame).
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.kinematics import joint_velocity_less_before
from robodyn_ros.dynamics.spatial import (
    add6,
    dot6,
    force_to_parent,
    inertia_at,
    inertia_times,
    inertia_to_world,
    motion_cross_force,
    motion_cross_motion,
    pose_at,
    scale6,
    store,
    vector6,
)
from robodyn_ros.dynamics.tree import armature, body_inertia, parent_of

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

# Fijany & Scheid eqs. 38–46, world frame: each body's acceleration a_i and net force f_i, then
# the force f_i joint i transmits to its subtree.
NewtonEulerWorkspace = namedtuple("NewtonEulerWorkspace", (
    "a",  # (n, 6) each body's acceleration
    "f",  # (n, 6) each body's net force, then the force its joint transmits
))


@kernel_helper
def newton_euler_workspace(n):
    """A NewtonEulerWorkspace of n bodies."""
    return NewtonEulerWorkspace(np.empty((n, 6)), np.empty((n, 6)))


@kernel_helper
def gravity_acceleration(gravity):
    """The base's acceleration upwards at g: every body feels gravity."""
    return -gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0


@kernel_helper
def world_inertias(tree: PackedTree, X_world: FloatArray, inertia: FloatArray) -> None:
    """inertia[i] (n x 10) = body i's rigid-body inertia (M, h, I_O) in world coordinates."""
    for i in range(X_world.shape[0]):
        store(inertia, i, inertia_to_world(pose_at(X_world, i, 0), body_inertia(tree, i)))


@kernel_helper
def velocity_terms(tree, qd, f_ext, X_world, S_world, inertia, v, c, bias):
    """Forward pass: velocities v, velocity-product accelerations c_i = v_i × S_i q̇_i (on a
    multi-DOF joint's rows, kinematics.joint_velocity_less_before) and bias forces
    v_i ×* I_i v_i − f_ext,i (f_ext None or (n, 6) body-frame wrenches), world frame."""
    for i in range(qd.shape[0]):
        parent = parent_of(tree, i)
        vJ = scale6(qd[i], vector6(S_world, i))
        v_i = add6(vector6(v, parent), vJ) if parent >= 0 else vJ
        bias_i = motion_cross_force(v_i, inertia_times(inertia_at(inertia, i), v_i))
        if f_ext is not None:
            bias_i = add6(bias_i, scale6(-1.0, force_to_parent(pose_at(X_world, i, 0),
                                                               vector6(f_ext, i))))
        store(v, i, v_i)
        store(c, i, motion_cross_motion(
            joint_velocity_less_before(tree, i, qd, S_world, v_i), vJ))
        store(bias, i, bias_i)


@kernel_helper
def newton_euler(tree, S_world, inertia, qdd, a_root, c, bias, tau, workspace):
    """τ = M q̈ + b in the fixed frame, written into tau (Fijany & Scheid eqs. 38–46, their g1);
    with c and bias None and a_root zero it is τ = M q̈ (eqs. 28–32, their g3), the product of
    the conjugate-gradient iterations. M includes the armature: τ_i += a_i q̈_i. workspace: a
    NewtonEulerWorkspace, its arrays read where they are used (inverse_dynamics.rnea says
    why); afterwards its f[i] is the spatial force joint i transmits to its subtree."""
    n = qdd.shape[0]
    # forward pass: accelerations and each body's net force
    for i in range(n):
        parent = parent_of(tree, i)
        a_parent = vector6(workspace.a, parent) if parent >= 0 else a_root
        a_i = add6(a_parent, scale6(qdd[i], vector6(S_world, i)))
        if c is not None:
            a_i = add6(a_i, vector6(c, i))
        f_i = inertia_times(inertia_at(inertia, i), a_i)
        if bias is not None:
            f_i = add6(f_i, vector6(bias, i))
        store(workspace.a, i, a_i)
        store(workspace.f, i, f_i)
    joint_forces(tree, S_world, workspace.f, tau)
    for i in range(n):
        tau[i] += armature(tree, i) * qdd[i]


@kernel_helper
def joint_forces(tree, S_world, f, tau):
    """Backward pass: each body's net force f[i] (n x 6, world frame) becomes the force its
    joint transmits, carried by the parent without a transform, and τ_i = S_iᵀ f_i."""
    for i in range(tau.shape[0] - 1, -1, -1):
        f_i = vector6(f, i)
        tau[i] = dot6(vector6(S_world, i), f_i)
        parent = parent_of(tree, i)
        if parent >= 0:
            store(f, parent, add6(vector6(f, parent), f_i))


@kernel_helper
def world_bias_forces(tree: PackedTree, gravity: FloatArray, S_world: FloatArray,
                      inertias: FloatArray, v: FloatArray, a: FloatArray, f: FloatArray,
                      b: FloatArray) -> None:
    """b = C q̇ + g by RNEA (RBDA Table 5.1) in world axes about the world origin, from the
    bodies' world inertias (n x 10, world_inertias), the velocities v and the accelerations
    at q̈ = 0 a (n x 6, velocity_product_accelerations): f_i = I_i (a_i − a_g) + v_i ×* I_i
    v_i, each body's f added to its parent's without a transform, b_i = S_iᵀ f_i (the
    fixed-frame Newton–Euler's backward pass). f (n x 6) is a workspace."""
    for i in range(b.shape[0]):
        inertia = inertia_at(inertias, i)
        v_i = vector6(v, i)
        a_i = (a[i, 0] - gravity[0], a[i, 1] - gravity[1], a[i, 2] - gravity[2], a[i, 3],
               a[i, 4], a[i, 5])  # the base accelerating upwards at g
        store(f, i, add6(inertia_times(inertia, a_i),
                         motion_cross_force(v_i, inertia_times(inertia, v_i))))
    joint_forces(tree, S_world, f, b)
