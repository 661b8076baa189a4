"""Robots shared by the dynamics and property tests, each built once per session.

A *case* is a robodyn ``Robot`` and a Pinocchio oracle of the same URDF (in robodyn's joint
order), plus a tip frame for Jacobians and operational-space inertia and a state generator.
Pinocchio's ``createData`` grows steeply with the joint count, so each case is built at most
once and kept for the session (the largest, 256 joints, costs ≈1.2 GB).
"""

from __future__ import annotations

import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robodyn_ros import Robot
from robodyn_ros.model import URDFWarning
from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf
from robodyn_ros.testing import PANDA_FINGERS, example_robot_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

BUNDLED_PANDA = Path(__file__).resolve().parents[2] / "urdf" / "panda.urdf"
CHAIN_SIZES = (7, 32, 64, 128, 256)
TREE_SIZES = (12, 40)
TREE_SEEDS = (1, 2)

# Tip frame of each real robot: its Jacobian has full row rank 6 away from singularities.
REAL_TIPS = {
    "panda": "panda_hand",
    "ur5": "tool0",
    "xarm7": "link_eef",
    "kinova": "j2s6s200_end_effector",
    "talos": "arm_left_7_link",  # torso (2) + left arm (7)
    "bundled_panda": "panda_hand",
}

CASE_IDS = (
    *REAL_TIPS,
    *(f"chain{n}" for n in CHAIN_SIZES),
    *(f"tree{n}_seed{seed}" for n in TREE_SIZES for seed in TREE_SEEDS),
)


@dataclass(frozen=True, eq=False)
class Case:
    """A robot, its Pinocchio oracle and what the tests need to question both."""

    name: str
    robot: Robot
    oracle: PinocchioOracle
    tip: str  # a frame on the deepest moving body (the last link of a chain)
    tip_depth: int  # joints between the root and the tip's body

    @property
    def tip_has_full_rank(self) -> bool:
        """Whether the tip's 6×n Jacobian can have rank 6 (six or more joints above it)."""
        return self.tip_depth >= 6

    def states(self, count: int, seed: int = 0) -> tuple[np.ndarray, ...]:
        """`count` random states (q, qd, qdd, f_ext) of shapes (count, n) and (count, n, 6).

        Positions are uniform inside the joint limits, cut to [-π, π] (also where a limit is
        infinite); velocities and accelerations uniform in [-1, 1]; wrenches in [-5, 5] N, N·m.
        The stream depends only on the case name and `seed`.
        """
        model = self.robot.model
        rng = np.random.default_rng([zlib.crc32(self.name.encode()), seed])
        n = self.robot.nv
        low = np.maximum(model.lower, -np.pi)
        high = np.minimum(model.upper, np.pi)
        q = rng.uniform(low, high, size=(count, n))
        qd = rng.uniform(-1.0, 1.0, size=(count, n))
        qdd = rng.uniform(-1.0, 1.0, size=(count, n))
        f_ext = rng.uniform(-5.0, 5.0, size=(count, n, 6))
        return q, qd, qdd, f_ext


def _robot_source(name: str) -> tuple[str | Path, bool, dict[str, float] | None]:
    """(URDF path or text, whether it is text, locked joints) of a case name."""
    if name == "panda":
        return example_robot_urdf("panda"), False, dict.fromkeys(PANDA_FINGERS, 0.0)
    if name == "bundled_panda":
        return BUNDLED_PANDA, False, None
    if name in REAL_TIPS:
        return example_robot_urdf(name), False, None
    if name.startswith("chain"):
        return random_chain_urdf(int(name.removeprefix("chain")), seed=0), True, None
    size, seed = name.removeprefix("tree").split("_seed")
    return random_tree_urdf(int(size), seed=int(seed)), True, None


def _load_robot(name: str) -> Robot:
    """The case's robot with every joint free: the kernels' tests run on the whole tree (mimic
    joints as constraints have their own tests, model/test_mimic.py)."""
    source, is_string, locked = _robot_source(name)
    with warnings.catch_warnings():
        if name == "talos":  # mimic joints and singular inertias, reported by design
            warnings.filterwarnings("ignore", category=URDFWarning)
        if is_string:
            return Robot.from_urdf_string(source, locked_joints=locked, mimic=False)
        return Robot.from_urdf(source, locked_joints=locked, mimic=False)


def _depths(parent: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(parent), dtype=np.int64)
    for i, p in enumerate(parent):
        depth[i] = 1 + (depth[p] if p >= 0 else 0)
    return depth


_ROBOTS: dict[str, Robot] = {}
_CASES: dict[str, Case] = {}


def robot_named(name: str) -> Robot:
    """The session's Robot of a case name (no oracle)."""
    if name not in _ROBOTS:
        _ROBOTS[name] = _load_robot(name)
    return _ROBOTS[name]


def case_named(name: str) -> Case:
    """The session's Case of a name in CASE_IDS, built on first use."""
    if name not in _CASES:
        robot = robot_named(name)
        source, is_string, locked = _robot_source(name)
        oracle = PinocchioOracle(
            source, robot.joint_names, locked_joints=locked, is_string=is_string
        )
        model = robot.model
        depth = _depths(model.parent)
        if name in REAL_TIPS:
            tip = REAL_TIPS[name]
        else:  # generated: link_i is the child of joint_i
            tip = f"link_{model.joint_names[int(np.argmax(depth))].removeprefix('joint_')}"
        body = model.frame_body[model.frame_index(tip)]
        tip_depth = int(depth[body]) if body >= 0 else 0
        _CASES[name] = Case(name, robot, oracle, tip, tip_depth)
    return _CASES[name]
