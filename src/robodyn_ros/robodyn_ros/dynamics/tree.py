"""The kinematic tree as the kernels take it: one float64 row per joint.

Every call from Python pays for each array argument, so the Model's arrays travel as one:

    PARENT       parent joint index, -1 for the root body
    PLACEMENT    joint frame in the parent body at q = 0, as a pose (12 numbers, below)
    SUBSPACE     motion subspace S in the joint frame, [linear; angular] (6)
    INERTIA      mass, centre of mass (3), rotational inertia about the centre of mass
                 (3x3 row-major), in body coordinates (BODY_SIZE = 13)
    ARMATURE     the joint's armature, added to M's diagonal (1)
    AXIS         k where the joint is a rotation about ±e_k of its frame (0, 1, 2 for x, y,
                 z), the usual URDF axes; −1 for any other joint of one degree of freedom;
                 FREE_FLYER, PLANAR or CONTINUED for the rows of a multi-DOF joint (below) (1)
    Q_INDEX      the index of the joint's configuration in q (Pinocchio's idx_q) (1)
    JOINT_START  the joint's first row (1)

A joint of several degrees of freedom (a free flyer, 6; planar, 3) takes one row per velocity
coordinate, all in its joint frame: the first (AXIS FREE_FLYER or PLANAR) carries the joint's
placement and its motion M(q) from the joint's whole configuration q[Q_INDEX:]; the others
(CONTINUED) sit at the identity in the row before, their bodies massless but for the last,
which carries the child body. Their subspaces are the unit motions of the joint's velocity in
the joint frame, Pinocchio's local velocity: free flyer [v; ω], planar (vx, vy, ω_z). A joint
of one row has JOINT_START its own row and q[Q_INDEX] its position.

A pose is 12 numbers: rotation R row-major (9) then translation p (3); it maps child
coordinates to parent coordinates, x_parent = R x_child + p. Frames travel the same way: a
row per frame of FRAME_BODY (the body index, -1 for the root) and its pose in that body.
"""

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.model import Model
from robodyn_ros.model.model import MULTI_DOF_JOINTS

PARENT = 0
PLACEMENT = 1
SUBSPACE = 13
INERTIA = 19
COM = INERTIA + 1
BODY_SIZE = 13
ARMATURE = INERTIA + BODY_SIZE
AXIS = ARMATURE + 1
Q_INDEX = AXIS + 1
JOINT_START = Q_INDEX + 1
WIDTH = JOINT_START + 1

# AXIS of the rows of a multi-DOF joint (module doc)
FREE_FLYER = -2
PLANAR = -3
CONTINUED = -4
MULTI_DOF_AXES = {"floating": FREE_FLYER, "planar": PLANAR}
FREE_FLYER_NQ, PLANAR_NQ = MULTI_DOF_JOINTS["floating"].nq, MULTI_DOF_JOINTS["planar"].nq
UNIT_TOLERANCE = 1e-6
"""How far from 1 the norm of a configuration's rotation (a free flyer's quaternion, a planar
joint's [cos θ, sin θ]) may be."""

FRAME_BODY = 0
FRAME_PLACEMENT = 1
FRAME_WIDTH = 13

POSE = 12


def pose_of(transform: np.ndarray) -> np.ndarray:
    """(..., 4, 4) homogeneous transforms → (..., 12) poses."""
    return np.concatenate(
        [transform[..., :3, :3].reshape(*transform.shape[:-2], 9), transform[..., :3, 3]], axis=-1
    )


def inertia_rows(spatial_inertia: np.ndarray) -> np.ndarray:
    """(n, 6, 6) spatial inertias about body origins → (n, 13) mass, com, inertia about com."""
    mass = spatial_inertia[:, 0, 0]
    safe_mass = np.where(mass > 0.0, mass, 1.0)[:, None, None]
    skew_com = spatial_inertia[:, 3:, :3] / safe_mass  # the m[c]× block over m
    com = np.stack([skew_com[:, 2, 1], skew_com[:, 0, 2], skew_com[:, 1, 0]], axis=1)
    # about the origin I_o = I_c − m [c]×[c]×, so I_c = I_o + m [c]×[c]×
    inertia_com = spatial_inertia[:, 3:, 3:] + mass[:, None, None] * (skew_com @ skew_com)
    return np.concatenate([mass[:, None], com, inertia_com.reshape(-1, 9)], axis=1)


def pack_tree(model: Model) -> PackedTree:
    """The (n, WIDTH) array of a Model's joints and bodies.

    The kernels need the joints in depth-first order (each subtree a contiguous index range):
    every joint's parent is the joint before it or one of that joint's ancestors.
    """
    check_depth_first(model.parent)
    tree = np.empty((model.nv, WIDTH))
    tree[:, PARENT] = model.parent
    tree[:, PLACEMENT:SUBSPACE] = pose_of(model.joint_placement)
    tree[:, SUBSPACE:INERTIA] = model.motion_subspace
    tree[:, INERTIA:ARMATURE] = inertia_rows(model.spatial_inertia)
    tree[:, ARMATURE] = model.armature
    tree[:, AXIS] = frame_axes(model.motion_subspace)
    for joint in model.configuration_joints:
        tree[joint.v, Q_INDEX] = joint.q.start
        tree[joint.v, JOINT_START] = joint.v.start
        if joint.kind in MULTI_DOF_AXES:
            tree[joint.v, AXIS] = CONTINUED
            tree[joint.v.start, AXIS] = MULTI_DOF_AXES[joint.kind]
    return tree


def frame_axes(motion_subspace: np.ndarray) -> np.ndarray:
    """k for each (n, 6) motion subspace that is a rotation about ±e_k of its frame, −1 for
    the others (prismatic joints, revolute joints about any other axis, fixed joints)."""
    about = motion_subspace[:, 3:] != 0.0
    single_axis = np.all(motion_subspace[:, :3] == 0.0, axis=1) & (about.sum(axis=1) == 1)
    return np.where(single_axis, np.argmax(about, axis=1), -1)


def check_depth_first(parent: np.ndarray) -> None:
    """Raise ValueError unless the parent array lists the joints in depth-first order."""
    path: list[int] = []  # the joints from the root to the previous joint
    for i, p in enumerate(parent):
        while path and path[-1] != p:
            path.pop()
        if p >= 0 and not path:
            raise ValueError(f"joints are not in depth-first order: joint {i} (parent {p})")
        path.append(i)


def pack_frames(model: Model) -> FloatArray:
    """The (F, FRAME_WIDTH) array of a Model's frames."""
    frames = np.empty((len(model.frame_names), FRAME_WIDTH))
    frames[:, FRAME_BODY] = model.frame_body
    frames[:, FRAME_PLACEMENT:] = pose_of(model.frame_placement)
    return frames


@kernel_helper
def parent_of(tree: PackedTree, i: int) -> int:
    """Parent joint of joint i, -1 for the root body."""
    return int(tree[i, PARENT])


@kernel_helper
def parent_indices(tree):
    """Each joint's parent joint (−1 for the root body's) as integers, for the loops that walk
    paths to the root."""
    parent = np.empty(tree.shape[0], dtype=np.int64)
    for i in range(tree.shape[0]):
        parent[i] = parent_of(tree, i)
    return parent


@kernel_helper
def is_chain(tree):
    """Whether the parent of every joint i is joint i − 1 (a serial chain)."""
    for i in range(tree.shape[0]):
        if parent_of(tree, i) != i - 1:
            return False
    return True


@kernel_helper
def subspace(tree, i):
    """Motion subspace S of joint i in its joint frame."""
    return (
        tree[i, SUBSPACE], tree[i, SUBSPACE + 1], tree[i, SUBSPACE + 2],
        tree[i, SUBSPACE + 3], tree[i, SUBSPACE + 4], tree[i, SUBSPACE + 5],
    )


@kernel_helper
def frame_axis(tree, i):
    """k where joint i is a rotation about ±e_k of its frame, −1 for any other joint of one
    degree of freedom, FREE_FLYER, PLANAR or CONTINUED for the rows of a multi-DOF joint."""
    return int(tree[i, AXIS])


@kernel_helper
def configuration_index(tree: PackedTree, i: int) -> int:
    """Where row i's joint configuration starts in q (Pinocchio's idx_q)."""
    return int(tree[i, Q_INDEX])


@kernel_helper
def joint_start(tree, i):
    """The first row of row i's joint: i for a joint of one degree of freedom."""
    return int(tree[i, JOINT_START])


@kernel_helper
def configuration_size(tree):
    """nq: the length of a configuration of the tree, from its last joint."""
    start = joint_start(tree, tree.shape[0] - 1)
    axis = frame_axis(tree, start)
    width = FREE_FLYER_NQ if axis == FREE_FLYER else (PLANAR_NQ if axis == PLANAR else 1)
    return configuration_index(tree, start) + width


@kernel_helper
def rotations_are_unit(tree, q, tolerance):
    """Whether every free flyer's quaternion and planar joint's (cos θ, sin θ) in q has a norm
    within `tolerance` of 1 (true for a tree without them)."""
    for i in range(tree.shape[0]):
        axis, k = frame_axis(tree, i), configuration_index(tree, i)
        if axis == FREE_FLYER:
            norm = np.sqrt(q[k + 3] ** 2 + q[k + 4] ** 2 + q[k + 5] ** 2 + q[k + 6] ** 2)
        elif axis == PLANAR:
            norm = np.sqrt(q[k + 2] ** 2 + q[k + 3] ** 2)
        else:
            continue
        if not abs(norm - 1.0) <= tolerance:
            return False
    return True


@kernel_helper
def body_inertia(tree, i):
    """Mass, centre of mass (3) and rotational inertia about it (9) of body i."""
    return (
        tree[i, INERTIA], tree[i, COM], tree[i, COM + 1], tree[i, COM + 2],
        tree[i, COM + 3], tree[i, COM + 4], tree[i, COM + 5], tree[i, COM + 6],
        tree[i, COM + 7], tree[i, COM + 8], tree[i, COM + 9], tree[i, COM + 10],
        tree[i, COM + 11],
    )


@kernel_helper
def armature(tree, i):
    """Armature of joint i, its term on M's diagonal."""
    return tree[i, ARMATURE]


@kernel_helper
def subtree_ends(tree, end):
    """end[i] = one past the last joint of joint i's subtree; joints are in depth-first order,
    so the subtree of i is the index range i .. end[i] − 1."""
    n = end.shape[0]
    for i in range(n):
        end[i] = i + 1
    for i in range(n - 1, -1, -1):
        parent = parent_of(tree, i)
        if parent >= 0 and end[i] > end[parent]:
            end[parent] = end[i]
