"""The immutable kinematic tree a URDF becomes: flat arrays a numba kernel can take."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from robodyn_ros.model.mimic import Mimic
    from robodyn_ros.model.payload import Payload

JOINT_KINDS = ("revolute", "continuous", "prismatic")

FREE_FLYER_JOINTS = ("free_flyer_x", "free_flyer_y", "free_flyer_z",
                     "free_flyer_rx", "free_flyer_ry", "free_flyer_rz")
"""The joints a floating base adds before the URDF's: along then about the base frame's x, y,
z axes, their velocities the base velocity [linear; angular] in the base frame."""
FREE_FLYER_DOF = len(FREE_FLYER_JOINTS)

FRICTION_VELOCITY = 0.05
"""ε (rad/s, or m/s for a prismatic joint) of a joint's smoothed Coulomb friction f·tanh(q̇/ε),
f its URDF ``<dynamics friction>``: the speed under which friction acts as a viscous damper of
f/ε. The simulation and the regressor share it."""


class ModelError(ValueError):
    """A robot description that cannot become a Model; the message names the file, link or joint."""


@dataclass(frozen=True, eq=False)
class Model:
    """A kinematic tree with one degree of freedom per joint, fixed to the world or floating.

    Joints are numbered so that ``parent[i] < i``; body ``i`` is the child link of joint ``i``
    together with every link attached to it by fixed joints. All 6-D quantities are
    ``[linear; angular]``; all placements are 4x4 homogeneous transforms.

    Attributes:
        name: robot name from the URDF.
        root_link: the URDF root link: the fixed base (world for the dynamics), or with
            floating_base the body of the last free-flyer joint.
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
        floating_base: the first FREE_FLYER_DOF joints are FREE_FLYER_JOINTS, each placed at
            the identity in the one before; a Robot of this model keeps them at q = 0 and takes
            the base pose from its configuration (robodyn_ros.floating_base_robot).
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
    floating_base: bool = False

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
        """Number of joints (= velocity dimension = configuration dimension)."""
        return len(self.joint_names)

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
