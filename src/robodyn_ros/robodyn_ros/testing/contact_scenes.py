"""Scenes of robots in contact with the world, for the tests and benchmarks of the contact
simulation: a floating robot's URDF, where it starts and the planes it touches.

- a box, or a ball, of uniform density (one link, its collision the solid itself) on or
  above the ground, or on an incline;
- Solo12 (example-robot-data, its collision meshes) crouched just above the ground, to be
  dropped with its joints limp.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from robodyn_ros.contact import CollisionShape, World, collision_shapes, contact_points, world_of
from robodyn_ros.model import URDFWarning
from robodyn_ros.model.inertia import rotation_from_rpy
from robodyn_ros.robot import Robot
from robodyn_ros.robot.free_flyer import quaternion_of
from robodyn_ros.testing.example_robots import example_robot_urdf

GROUND_FRICTION = 0.8
BOX_SIZE = (0.2, 0.2, 0.1)  # m
BODY_MASS = 2.0  # kg, of the box and the ball
SOLO12_CROUCH = (0.8, -1.6)  # rad: a front leg's hip flexion and knee; the hind legs mirrored
SOLO12_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


@dataclass(frozen=True, eq=False)
class Scene:
    """A floating robot at rest at `q` in `world`.

    Attributes:
        urdf: the robot's URDF text.
        q: (nq,) its configuration at the start.
        world: the planes it can touch.
        base_folder, package_folders: where its meshes are (collision_shapes' arguments).
    """

    urdf: str
    q: np.ndarray
    world: World
    base_folder: str | os.PathLike[str] | None = None
    package_folders: Sequence[str | os.PathLike[str]] = field(default_factory=tuple)

    def robot(self) -> Robot:
        """The Robot of the URDF, floating; URDFWarnings silenced (Solo12's sensor links have
        no inertia, which the tree takes)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", URDFWarning)
            return Robot.from_urdf_string(self.urdf, floating_base=True)

    def shapes(self) -> tuple[CollisionShape, ...]:
        """The robot's collision shapes."""
        return collision_shapes(self.urdf, self.base_folder, self.package_folders)


def ground(friction: float = GROUND_FRICTION) -> World:
    """The plane z = 0, its normal +z."""
    return world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0],
                                 "friction": friction}]})


def solid_urdf(kind: str, size: Sequence[float], mass: float = BODY_MASS) -> str:
    """The URDF of a solid of uniform density, one link whose collision is the solid itself:
    a box (kind "box", size its x, y, z side lengths, m; the link "box") or a ball (kind
    "sphere", size (radius,); the link "ball").

    Raises:
        ValueError: a kind other than box or sphere.
    """
    if kind == "box":
        x, y, z = size
        moments = [mass / 12.0 * (a * a + b * b) for a, b in ((y, z), (x, z), (x, y))]
        geometry = f'<box size="{x} {y} {z}"/>'
    elif kind == "sphere":
        moments = [0.4 * mass * size[0] ** 2] * 3
        geometry = f'<sphere radius="{size[0]}"/>'
    else:
        raise ValueError(f"solid_urdf: kind must be 'box' or 'sphere', not {kind!r}")
    ixx, iyy, izz = moments
    name = "ball" if kind == "sphere" else kind
    return f"""<robot name="{name}"><link name="{name}">
  <inertial><mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0"
    izz="{izz}"/></inertial>
  <collision><geometry>{geometry}</geometry></collision></link></robot>"""


def box_on_ground(friction: float = GROUND_FRICTION) -> Scene:
    """The box (BOX_SIZE, BODY_MASS) resting on the ground, its faces level."""
    q = np.array([0.0, 0.0, BOX_SIZE[2] / 2.0, 0.0, 0.0, 0.0, 1.0])
    return Scene(solid_urdf("box", BOX_SIZE), q, ground(friction))


def ball_above_ground(radius: float, height: float) -> Scene:
    """A ball of `radius` (m, BODY_MASS) at rest, its centre `height` (m) over the ground."""
    q = np.array([0.0, 0.0, height, 0.0, 0.0, 0.0, 1.0])
    return Scene(solid_urdf("sphere", (radius,)), q, ground())


def box_on_incline(angle: float, friction: float) -> Scene:
    """The box resting on an incline through the origin, turned `angle` (rad) about x, its
    face on the plane: down the slope is (0, −cos θ, −sin θ)."""
    rotation = rotation_from_rpy((angle, 0.0, 0.0))
    normal = rotation[:, 2]
    q = np.concatenate([normal * BOX_SIZE[2] / 2.0, quaternion_of(rotation)])
    world = world_of({"planes": [{"normal": normal.tolist(), "point": [0, 0, 0],
                                  "friction": friction}]})
    return Scene(solid_urdf("box", BOX_SIZE), q, world)


def solo12_crouched(drop: float, friction: float = GROUND_FRICTION) -> Scene:
    """Solo12 (example-robot-data, its collision meshes), level, its legs crouched
    (SOLO12_CROUCH, the hind legs mirrored), its lowest point `drop` (m) over the ground.

    Raises:
        FileNotFoundError: example-robot-data is not installed.
    """
    path = example_robot_urdf("solo12")
    scene = Scene(path.read_text(), np.zeros(0), ground(friction), path.parent,
                  (path.parents[4],))
    robot = scene.robot()
    q, rows = robot.default_positions(), {joint.name: joint.q for joint in
                                          robot.configuration_joints}
    hip, knee = SOLO12_CROUCH
    for leg, sign in (("FL", 1.0), ("FR", 1.0), ("HL", -1.0), ("HR", -1.0)):
        q[rows[f"{leg}_HFE"]], q[rows[f"{leg}_KFE"]] = sign * hip, sign * knee
    plane = scene.world.planes[0]
    lowest = min(contact_points(shape, robot.frame_pose(q, shape.link), plane).heights.min()
                 for shape in scene.shapes())
    q[2] += drop - lowest
    return Scene(scene.urdf, q, scene.world, scene.base_folder, scene.package_folders)


__all__ = ["BODY_MASS", "BOX_SIZE", "GROUND_FRICTION", "SOLO12_CROUCH", "SOLO12_FEET", "Scene",
           "ball_above_ground", "box_on_ground", "box_on_incline", "ground", "solid_urdf",
           "solo12_crouched"]
