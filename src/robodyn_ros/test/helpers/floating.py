"""The floating-base robots of the tests, each with its Pinocchio oracle (built once), and
random floating-base states."""

from __future__ import annotations

import warnings
import zlib
from functools import cache

import numpy as np

from robodyn_ros import Robot
from robodyn_ros.model import URDFWarning
from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.floating_pinocchio_oracle import FloatingPinocchioOracle

BASE_INERTIAL = """<link name="base_link"><inertial><mass value="3.0"/>
  <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial></link>"""


def with_base_mass(urdf: str) -> str:
    """A generated robot's URDF with a mass on its base_link, which has none: floating, a
    massless base moves with its one joint below (tested in test_robot_floating_base.py)."""
    return urdf.replace('<link name="base_link" />', BASE_INERTIAL)


def _source(name: str) -> tuple[str, bool]:
    """(URDF path or text, whether it is text)."""
    if name == "chain7":
        return with_base_mass(random_chain_urdf(7, seed=3)), True
    if name.startswith("tree"):
        size, seed = name.removeprefix("tree").split("_seed")
        return random_tree_urdf(int(size), seed=int(seed)), True
    return str(example_robot_urdf(name)), False


@cache
def robot_and_oracle(name: str) -> tuple[Robot, FloatingPinocchioOracle]:
    source, is_string = _source(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)  # singular inertias of sensor links
        if is_string:
            robot = Robot.from_urdf_string(source, floating_base=True)
        else:
            robot = Robot.from_urdf(source, floating_base=True)
    return robot, FloatingPinocchioOracle(source, robot.joint_names, is_string=is_string)


def random_states(robot: Robot, count: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """count random (q, v, vdot, tau): the base anywhere within 2 m, turned any way, moving at
    up to 1 m/s and 1 rad/s; the joints inside their limits (cut to ±π)."""
    rng = np.random.default_rng([zlib.crc32(robot.model.name.encode()), seed])
    lower, upper = (robot.per_coordinate(limit)[6:]
                    for limit in (robot.model.lower, robot.model.upper))
    q = np.empty((count, robot.nq))
    q[:, :3] = rng.uniform(-2.0, 2.0, (count, 3))
    quaternion = rng.normal(size=(count, 4))
    q[:, 3:7] = quaternion / np.linalg.norm(quaternion, axis=1, keepdims=True)
    q[:, 7:] = rng.uniform(np.maximum(lower, -np.pi), np.minimum(upper, np.pi),
                           (count, robot.nv - 6))
    v, vdot, tau = rng.uniform(-1.0, 1.0, (3, count, robot.nv))
    return q, v, vdot, tau
