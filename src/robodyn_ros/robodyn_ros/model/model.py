"""The immutable kinematic tree a URDF becomes: flat arrays a numba kernel can take, with the
records it holds of the joints that mimic another (mimic.py reads them) and of the payloads
on its frames (payload.py checks and adds them)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from robodyn_ros.errors import RobodynError

SINGLE_DOF_KINDS = ("revolute", "continuous", "prismatic")
JOINT_KINDS = (*SINGLE_DOF_KINDS, "floating", "planar")


class JointSize(NamedTuple):
    """The configuration (nq) and velocity (nv) sizes of a joint."""

    nq: int
    nv: int


MULTI_DOF_JOINTS = {"floating": JointSize(7, 6), "planar": JointSize(4, 3)}
"""The joints of several degrees of freedom, as Pinocchio's JointModelFreeFlyer and
JointModelPlanar. A free flyer's configuration is [x y z, qx qy qz qw] and its velocity
[v; ω] in the joint frame; a planar joint's [x, y, cos θ, sin θ] and (vx, vy, ω_z) in the joint
frame. Each takes one row of the Model per velocity coordinate (robodyn_ros.dynamics.tree)."""

MULTI_DOF_SUFFIXES = {"floating": ("x", "y", "z", "rx", "ry", "rz"), "planar": ("x", "y", "rz")}
"""The velocity coordinates of a multi-DOF joint: row names are the joint's name, '_', suffix."""


class ConfigurationJoint(NamedTuple):
    """One joint's place in q and among the rows (v)."""

    name: str  # the joint's name (the URDF's, for a multi-DOF joint)
    kind: str  # JOINT_KINDS
    q: slice  # its configuration in q (Pinocchio's idx_q, nq)
    v: slice  # its rows: its velocity in v (idx_v, nv)


def configuration_joints(joint_names: tuple[str, ...], joint_kinds: tuple[str, ...]
                         ) -> tuple[ConfigurationJoint, ...]:
    """The joints of rows of these names and kinds, in order: a multi-DOF joint is a run of
    its kind's nv rows, named '<joint>_<suffix>' (MULTI_DOF_SUFFIXES); every other row is a
    joint of its own with one coordinate.

    Raises:
        ModelError: the rows end inside a multi-DOF joint.
    """
    joints, row, nq = [], 0, 0
    while row < len(joint_kinds):
        kind = joint_kinds[row]
        size = MULTI_DOF_JOINTS.get(kind, JointSize(1, 1))
        name = joint_names[row] if size.nv == 1 else joint_names[row].rpartition("_")[0]
        joints.append(ConfigurationJoint(name, kind, slice(nq, nq + size.nq),
                                         slice(row, row + size.nv)))
        row, nq = row + size.nv, nq + size.nq
    if row != len(joint_kinds):
        raise ModelError(f"joint kinds end inside a multi-DOF joint: {joint_kinds!r}")
    return tuple(joints)


FREE_FLYER_JOINT = "free_flyer"
"""The free flyer a floating base (floating_base=True) adds at the root, the root link its body."""
FREE_FLYER_JOINTS = tuple(f"{FREE_FLYER_JOINT}_{suffix}"
                          for suffix in MULTI_DOF_SUFFIXES["floating"])
"""Its rows: along then about the base frame's x, y, z axes, their velocities the base velocity
[linear; angular] in the base frame."""
FREE_FLYER_DOF = MULTI_DOF_JOINTS["floating"].nv

FRICTION_VELOCITY = 0.05
"""ε (rad/s, or m/s for a prismatic joint) of a joint's smoothed Coulomb friction f·tanh(q̇/ε),
f its URDF ``<dynamics friction>``: the speed under which friction acts as a viscous damper of
f/ε. The simulation and the regressor share it."""


class ModelError(RobodynError, ValueError):
    """A robot description that cannot become a Model; the message names the file, link or joint."""


@dataclass(frozen=True)
class Mimic:
    """q_joint = multiplier · q_leader + offset, the leader an independent joint.

    Attributes:
        joint: the joint that follows.
        leader: the independent joint it follows (through any chain of mimics).
        multiplier: dimensionless for joints of one kind; m/rad or rad/m across kinds.
        offset: rad or m, of the joint.
    """

    joint: str
    leader: str
    multiplier: float
    offset: float


@dataclass(frozen=True, eq=False)
class Payload:
    """A rigid load fixed to a frame.

    Attributes:
        frame: the frame (URDF link) it is fixed to.
        mass: kg, positive.
        com: (3,) its centre of mass in the frame, m.
        inertia: (3, 3) its rotational inertia about the centre of mass in the frame's axes,
            kg·m²; zeros for a point mass.
    """

    frame: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray


@dataclass(frozen=True, eq=False)
class Model:
    """A kinematic tree, fixed to the world or floating, with one row per degree of freedom.

    Joints are numbered so that ``parent[i] < i``; body ``i`` is the child link of joint ``i``
    together with every link attached to it by fixed joints. All 6-D quantities are
    ``[linear; angular]``; all placements are 4x4 homogeneous transforms.

    Attributes:
        name: robot name from the URDF.
        root_link: the URDF root link: the fixed base (world for the dynamics), or with
            floating_base the body of the free flyer.
        joint_names, joint_kinds: per joint; kinds are ``JOINT_KINDS``.
        body_links: per joint, its URDF child link, which names body i (the links fixed to
            it are frames of the body).
        parent: (n,) int64, parent joint of each joint, -1 for the root body.
        joint_placement: (n, 4, 4) pose of joint i's frame in its parent body's frame at q = 0
            (the URDF joint origin; the joint frame is the child link frame).
        motion_subspace: (n, 6) joint axis as a spatial motion in the joint frame:
            ``[0; axis]`` for revolute and continuous joints, ``[axis; 0]`` for prismatic.
        spatial_inertia: (n, 6, 6) inertia of body i about the joint frame origin, in joint
            frame axes, fixed-attached links and the payloads on their frames merged in.
        lower, upper, velocity_limit, effort_limit: (n,) joint limits, ±inf where the URDF
            has none (continuous joints have no position limits).
        damping, friction: (n,) from the URDF ``<dynamics>`` tag, 0 where absent.
        frame_names: every URDF link, in URDF order.
        frame_body: (F,) int64, the body each frame is attached to, -1 for the root body.
        frame_placement: (F, 4, 4) pose of each frame in its body's frame.
        gravity: (3,) gravitational acceleration in the root frame, m/s².
        armature: (n,) reflected rotor inertia of each joint's motor, added to M's diagonal
            (kg·m² for revolute and continuous joints, kg for prismatic; see
            ``robodyn_ros.model.armature``); zeros when not given.
        payloads: the loads carried on frames (``robodyn_ros.model.payload``), already in
            spatial_inertia; at most one per frame.
        mimic: the joints that follow another (``robodyn_ros.model.mimic``): they are joints
            of the tree like any other, and a Robot of this model takes only the independent
            joints as coordinates.
    """

    name: str
    root_link: str
    joint_names: tuple[str, ...]
    joint_kinds: tuple[str, ...]
    body_links: tuple[str, ...]
    parent: np.ndarray
    joint_placement: np.ndarray
    motion_subspace: np.ndarray
    spatial_inertia: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    frame_names: tuple[str, ...]
    frame_body: np.ndarray
    frame_placement: np.ndarray
    gravity: np.ndarray
    armature: np.ndarray | None = None
    payloads: tuple[Payload, ...] = ()
    mimic: tuple[Mimic, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        armature = np.zeros(n) if self.armature is None else np.array(self.armature, dtype=float)
        if armature.shape != (n,) or not (np.isfinite(armature).all() and (armature >= 0).all()):
            raise ModelError(
                f"robot '{self.name}': armature must be {n} finite numbers ≥ 0, one per joint; "
                f"got {self.armature!r}"
            )
        object.__setattr__(self, "armature", armature)
        object.__setattr__(self, "gravity", checked_gravity(self.gravity, f"robot '{self.name}'"))
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    @property
    def nv(self) -> int:
        """Number of rows: the velocity dimension."""
        return len(self.joint_names)

    @cached_property
    def configuration_joints(self) -> tuple[ConfigurationJoint, ...]:
        """The joints in q order, each with its slices of q and of the rows (v)."""
        return configuration_joints(self.joint_names, self.joint_kinds)

    @property
    def nq(self) -> int:
        """The configuration dimension: nv, plus one for each free flyer and planar joint."""
        return self.configuration_joints[-1].q.stop if self.joint_names else 0

    @property
    def floating_base(self) -> bool:
        """Whether the root body floats: the first joint is a free flyer on the world (loaded
        with floating_base=True, or a URDF floating joint at the root)."""
        return bool(self.joint_kinds) and self.joint_kinds[0] == "floating" \
            and int(self.parent[0]) < 0

    @property
    def inner_rows(self) -> np.ndarray:
        """(nv,) bool: the rows of a multi-DOF joint before its last, which have no link of
        their own: massless by construction, the joint's body being on its last row."""
        inner = np.zeros(self.nv, dtype=bool)
        for joint in self.configuration_joints:
            inner[joint.v.start : joint.v.stop - 1] = True
        return inner

    @property
    def total_mass(self) -> float:
        """Mass of all moving bodies, kg (the fixed base is not counted)."""
        return float(self.spatial_inertia[:, 0, 0].sum())

    def frame_index(self, frame: str) -> int:
        """Index of a frame by link name; a clear error lists near names when it is unknown."""
        try:
            return self.frame_names.index(frame)
        except ValueError:
            raise ModelError(
                f"unknown frame '{frame}' in robot '{self.name}'; frames are: "
                + ", ".join(self.frame_names)
            ) from None


def checked_gravity(values: object, subject: str) -> np.ndarray:
    """A gravity vector: the gravitational acceleration (m/s²) in the base frame.

    Args:
        values: three numbers.
        subject: what the gravity is of (a robot, a parameter), first in the error.

    Returns:
        float64 (3,).

    Raises:
        ModelError: not three finite numbers.
    """
    try:
        gravity = np.asarray(values)
    except (TypeError, ValueError):  # a ragged sequence
        gravity = None
    if gravity is None or gravity.dtype.kind not in "iuf" or gravity.shape != (3,) \
            or not np.isfinite(gravity).all():
        raise ModelError(
            f"{subject}: gravity must be 3 finite numbers (m/s², in the base frame); "
            f"got {values!r}"
        )
    return gravity.astype(float)
