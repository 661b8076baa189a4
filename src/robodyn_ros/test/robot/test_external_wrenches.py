"""External wrenches on frames (robot.external_wrenches), against Pinocchio's rnea and aba
with fext: each wrench [force; torque] at a frame's origin in world-aligned axes becomes the
force on its joint's body in that joint's frame (testing.pinocchio_twin.external_forces), a path
independent of ours (τ − Σ Jᵀ w). On a fixed arm, robots with a free flyer and a planar joint in the
tree, and a robot loaded with floating_base=True; one state and a batch. Tolerance:
helpers.tolerances.
"""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros.model.generate import random_tree_urdf, with_joint_kinds, with_root_joint
from robodyn_ros.robot import Robot
from robodyn_ros.testing.example_robots import example_robot_urdf
from robodyn_ros.testing.floating_pinocchio_oracle import FloatingPinocchioOracle
from robodyn_ros.testing.pinocchio_twin import Twin, external_forces, twin_of

from helpers.tolerances import assert_close

CASES = {
    "ur5": lambda: example_robot_urdf("ur5").read_text(),
    "solo12_floating": lambda: with_root_joint(example_robot_urdf("solo12").read_text(),
                                               "floating", xyz="0 0 0.3"),
    "tree_inner_joints": lambda: with_joint_kinds(random_tree_urdf(9, seed=3), {
        "joint_0": "floating", "joint_4": "planar"}),
}


@cache
def twin(name: str) -> Twin:
    return twin_of(CASES[name]())


def wrenches_on(frames: list[str], seed: int, batch: tuple[int, ...] = ()) -> dict:
    rng = np.random.default_rng(seed)
    return {frame: rng.uniform(-20.0, 20.0, (*batch, 6)) for frame in frames}


def pushed_frames(robot) -> list[str]:
    """The last moving link and one in the middle: a push and a tool force."""
    moving = [name for name, body in zip(robot.frame_names, robot.model.frame_body, strict=True)
              if body >= 0]
    return [moving[-1], moving[len(moving) // 2]]


@pytest.mark.parametrize("name", list(CASES))
def test_wrenches_match_pinocchio_fext(name: str) -> None:
    case = twin(name)
    robot, data = case.robot, case.model.createData()
    frames = [f for f in pushed_frames(robot) if case.model.existFrame(f, pin.BODY)]
    rng = np.random.default_rng(1)
    step, v_pin, a_pin, tau_pin = rng.uniform(-1.0, 1.0, (4, case.model.nv))
    q_pin = pin.integrate(case.model, pin.neutral(case.model), step)
    q, v, a, tau = (case.q_ours(q_pin), case.v_ours(v_pin), case.v_ours(a_pin),
                    case.v_ours(tau_pin))
    wrenches = wrenches_on(frames, seed=2)
    fext = external_forces(case.model, data, q_pin, wrenches)
    assert_close(robot.inverse_dynamics(q, v, a, external_wrenches=wrenches),
                 case.v_ours(pin.rnea(case.model, data, q_pin, v_pin, a_pin, fext)), "τ")
    expected = case.v_ours(pin.aba(case.model, data, q_pin, v_pin, tau_pin, fext))
    for method in ("aba", "cholesky"):
        assert_close(robot.forward_dynamics(q, v, tau, method=method, external_wrenches=wrenches),
                     expected, f"q̈ ({method})")


@pytest.mark.parametrize("name", ["ur5", "tree_inner_joints"])
def test_a_batch_takes_a_wrench_per_state_or_one_for_all(name: str) -> None:
    robot = twin(name).robot
    rng = np.random.default_rng(3)
    q = robot.integrate(robot.neutral(), rng.uniform(-1.0, 1.0, (3, robot.nv)))
    v, a = rng.uniform(-1.0, 1.0, (2, 3, robot.nv))
    frames = pushed_frames(robot)
    per_state = wrenches_on(frames, seed=4, batch=(3,))
    batch = robot.inverse_dynamics(q, v, a, external_wrenches=per_state)
    for b in range(3):
        one = {frame: wrench[b] for frame, wrench in per_state.items()}
        assert_close(batch[b], robot.inverse_dynamics(q[b], v[b], a[b], external_wrenches=one),
                     f"τ of state {b}", rtol=1e-13)
    shared = wrenches_on(frames, seed=5)
    qdd = robot.forward_dynamics(q, v, batch, external_wrenches=shared)
    for b in range(3):
        assert_close(qdd[b], robot.forward_dynamics(q[b], v[b], batch[b],
                                                    external_wrenches=shared),
                     f"q̈ of state {b}", rtol=1e-13)


def test_floating_base_robot_takes_wrenches() -> None:
    """A robot loaded with floating_base=True (the free flyer 'free_flyer' at the root,
    against FloatingPinocchioOracle): a push on a foot and on the base."""
    path = example_robot_urdf("solo12")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = Robot.from_urdf(path, floating_base=True)
    oracle = FloatingPinocchioOracle(path, robot.joint_names)
    rng = np.random.default_rng(6)
    q = robot.integrate(robot.neutral(), rng.uniform(-1.0, 1.0, robot.nv))
    v, a, tau = rng.uniform(-1.0, 1.0, (3, robot.nv))
    wrenches = wrenches_on(["FL_FOOT", "base_link"], seed=7)
    fext = external_forces(oracle.model, oracle.data, oracle.q(q), wrenches)
    assert_close(robot.inverse_dynamics(q, v, a, external_wrenches=wrenches),
                 oracle.to_ours(pin.rnea(oracle.model, oracle.data, oracle.q(q), oracle.v(v),
                                         oracle.v(a), fext)), "τ")
    assert_close(robot.forward_dynamics(q, v, tau, external_wrenches=wrenches),
                 oracle.to_ours(pin.aba(oracle.model, oracle.data, oracle.q(q), oracle.v(v),
                                        oracle.v(tau), fext)), "v̇")


def test_a_wrench_of_the_wrong_shape_or_frame_is_refused_naming_it() -> None:
    robot = twin("ur5").robot
    q = np.zeros(robot.nv)
    with pytest.raises(ValueError, match=r"external_wrenches\['tool0'\] must be .*\(4,\)"):
        robot.inverse_dynamics(q, q, q, external_wrenches={"tool0": np.zeros(4)})
    with pytest.raises(ValueError, match=r"unknown frame 'no_such_link'"):
        robot.forward_dynamics(q, q, q, external_wrenches={"no_such_link": np.zeros(6)})
