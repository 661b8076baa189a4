"""What an operational-space controller differentiates: J̇ (frame_jacobian_time_variation)
against Pinocchio's getFrameJacobianTimeVariation (LOCAL_WORLD_ALIGNED) and central differences
of the Jacobian along q̇, and the rate of Λ⁻¹ along a direction
(operational_space_inertia_inverse_rate) against central differences of Λ⁻¹, on a fixed arm, a
free flyer, generated trees with inner free flyers and planar joints, and a mimic robot.

Tolerances: Pinocchio to 1e-12 relative (the same sums in another order); central differences
of step 1e-6 to 1e-6 relative (their truncation error, ~1e-12 of the scale over the step², and
their rounding, ~1e-16 / 1e-6, are far below).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.model.generate import random_tree_urdf, with_joint_kinds, with_root_joint
from robodyn_ros.testing.example_robots import example_robot_urdf
from robodyn_ros.testing.pinocchio_twin import Twin, twin_of

from helpers.robots import PANDA, TIP, with_mimic
from helpers.tolerances import assert_close

STEP = 1e-6
CASES = {
    "panda": (lambda: PANDA, TIP),
    "solo12_floating": (lambda: with_root_joint(example_robot_urdf("solo12").read_text(),
                                                "floating", xyz="0.1 -0.2 0.3",
                                                rpy="0.3 -0.2 0.1"), "FL_FOOT"),
    "tree_inner_joints": (lambda: with_joint_kinds(
        random_tree_urdf(9, seed=3), {"joint_0": "floating", "joint_4": "planar",
                                      "joint_6": "floating"}), "link_8"),
}


def along(robot: Robot, function, q: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """The central difference of function(q) along a tangent direction."""
    return (function(robot.integrate(q, STEP * direction))
            - function(robot.integrate(q, -STEP * direction))) / (2 * STEP)


def assert_jacobian_rate(case: Twin, frame: str, seed: int) -> None:
    robot, data = case.robot, case.data()
    q_pin, v, _, _ = case.state(seed)
    q, qd = case.q_ours(q_pin), case.v_ours(v)
    J_dot = robot.frame_jacobian_time_variation(q, qd, frame)
    pin.computeJointJacobiansTimeVariation(case.model, data, q_pin, v)
    pin.updateFramePlacements(case.model, data)
    theirs = pin.getFrameJacobianTimeVariation(case.model, data, case.model.getFrameId(frame),
                                               pin.LOCAL_WORLD_ALIGNED)
    assert_close(J_dot, theirs[:, np.argsort(case.v_order)], "J̇", 1e-12)
    assert_close(J_dot, along(robot, lambda x: robot.jacobian(x, frame), q, qd),
                 "J̇ against differences", 1e-6)
    assert_close(J_dot @ qd, robot.classical_acceleration(q, qd, frame), "J̇ q̇", 1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_the_jacobians_rate_matches_pinocchio_and_differences(name: str) -> None:
    make, frame = CASES[name]
    assert_jacobian_rate(twin_of(make()), frame, 0)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(2, 12), seed=st.integers(0, 10_000),
       kinds=st.lists(st.sampled_from(["as generated", "floating", "planar"]), min_size=12,
                      max_size=12))
def test_the_jacobians_rate_on_generated_trees(size: int, seed: int, kinds: list[str]) -> None:
    """Property: the last link's J̇ on any generated tree with any joints made free flyers or
    planar matches Pinocchio and the differences."""
    urdf = with_joint_kinds(random_tree_urdf(size, seed=seed),
                            {f"joint_{k}": kinds[k] for k in range(size)
                             if kinds[k] != "as generated"})
    assert_jacobian_rate(twin_of(urdf), f"link_{size - 1}", seed)


@pytest.mark.parametrize("urdf, frames, axes", [
    pytest.param(PANDA, TIP, None, id="panda"),
    pytest.param(CASES["solo12_floating"][0](), ["FL_FOOT", "HR_FOOT"], "xyz", id="solo12"),
    pytest.param(with_mimic(PANDA, "panda_joint6", "panda_joint4", -0.7, 0.2), TIP, None,
                 id="mimic"),
])
def test_the_rate_of_the_inverse_task_inertia_is_its_difference(urdf: str, frames, axes
                                                                ) -> None:
    robot = Robot.from_urdf_string(urdf)
    rng = np.random.default_rng(4)
    q = robot.integrate(robot.neutral(), rng.uniform(-0.7, 0.7, robot.nv))
    direction = rng.uniform(-1.0, 1.0, robot.nv)
    rate = robot.operational_space_inertia_inverse_rate(q, direction, frames, axes=axes)
    expected = along(robot, lambda x: robot.operational_space_inertia(
        x, frames, inverse=True, axes=axes), q, direction)
    assert_close(rate, expected, "dΛ⁻¹", 1e-6)
    batch = robot.operational_space_inertia_inverse_rate(np.stack([q, q]),
                                                         np.stack([direction, -direction]),
                                                         frames, axes=axes)
    assert_close(batch[0], rate, "a batch's first state", 1e-12)
    assert_close(batch[1], -rate, "a batch's second state: linear in the direction", 1e-12)
