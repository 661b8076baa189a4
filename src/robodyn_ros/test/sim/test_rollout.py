"""The compiled rollout (sim.rollout) of robots with free flyer and planar joints against the
same group integrators stepped in Python (sim.lie_integrators): a free Solo12 and
generated trees with a planar root and a free flyer inside, both integrators, to rounding
(RTOL over the run; the two sum the same terms in another order)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.model import URDFWarning
from robodyn_ros.model.generate import random_tree_urdf, with_joint_kinds, with_root_joint
from robodyn_ros.sim.lie_integrators import LIE_INTEGRATORS
from robodyn_ros.sim.preview import PreviewSettings
from robodyn_ros.sim.scenario_rollout import rollout_trajectory
from robodyn_ros.sim.scenarios import TorqueProfile
from robodyn_ros.testing import example_robot_urdf

from helpers.tolerances import assert_close

STEPS = 200


def undamped(robot: Robot) -> Robot:
    """The robot without joint damping and friction, which the rollout applies and the
    integrators on the forward dynamics alone leave out."""
    zeros = np.zeros(robot.model.nv)
    return Robot(dataclasses.replace(robot.model, damping=zeros, friction=zeros))


def robots() -> dict[str, Robot]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        solo = Robot.from_urdf(example_robot_urdf("solo12"), floating_base=True)
        tree = Robot.from_urdf_string(with_root_joint(
            with_joint_kinds(random_tree_urdf(8, seed=4), {"joint_3": "floating"}), "planar",
            xyz="0.1 0.2 0.0", rpy="0.0 0.0 0.4"))
    return {"solo12": solo, "planar_tree": tree}


ROBOTS = robots()


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit_euler"])
@pytest.mark.parametrize("name", list(ROBOTS))
def test_the_rollout_steps_as_the_python_simulation(name: str, integrator: str) -> None:
    robot = undamped(ROBOTS[name])
    rng = np.random.default_rng(3)
    q = robot.integrate(robot.neutral(), rng.uniform(-0.5, 0.5, robot.nv))
    v = rng.uniform(-1.0, 1.0, robot.nv)
    tau = rng.uniform(-0.2, 0.2, robot.nv)
    settings = PreviewSettings(horizon=STEPS * 1e-3, dt=1e-3, integrator=integrator)
    times = settings.dt * np.arange(settings.steps + 1)
    profile = TorqueProfile("push", robot.frame_names[-1], np.array([0.0]), tau[None])
    trajectory, _ = rollout_trajectory(robot, settings, q, v, profile, times,
                                       stop_at_limits=False)
    states = [(q, v)]
    for _ in range(STEPS):
        states.append(LIE_INTEGRATORS[integrator](
            states[-1], 1e-3, lambda q, v: robot.forward_dynamics(q, v, tau), robot))
    assert_close(trajectory.q, np.array([state[0] for state in states]), "q")
    assert_close(trajectory.qd, np.array([state[1] for state in states]), "v")
    assert np.isfinite(trajectory.q).all()
    for joint in robot.configuration_joints:  # rotations stay of unit norm
        if joint.kind == "floating":
            assert np.allclose(np.linalg.norm(trajectory.q[:, joint.q][:, 3:], axis=1), 1.0)
        elif joint.kind == "planar":
            assert np.allclose(np.linalg.norm(trajectory.q[:, joint.q][:, 2:], axis=1), 1.0)
