"""Gravity as a vector in the base frame (an arm on a wall or a ceiling): every function that
gravity enters, the simulated robot and the preview's rollout follow Pinocchio with
``model.gravity`` set; a gravity that is not three finite numbers is refused. Every node takes
it as a parameter, changeable at run time, and dynamics_node's g and q̈ follow over DDS."""

from __future__ import annotations

import numpy as np
import pytest
from rclpy.parameter import Parameter
from test_armature_nodes import new_state, panda_node, published_answer
from test_node_faults import dynamics_peer

from robodyn_ros import Robot
from robodyn_ros.model import ModelError
from robodyn_ros.model.generate import random_tree_urdf
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import TorqueProfile
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

RTOL = 1e-9  # relative to the largest entry of the reference
WALL = (9.81, 0.0, 0.0)  # base z horizontal: the arm hangs off a wall
SLANTED = (1.2, -3.4, 8.9)
PANDA = bundled_urdf("panda").read_text()
TREE = random_tree_urdf(12, seed=3)


def close(ours, reference) -> None:
    reference = np.asarray(reference)
    np.testing.assert_allclose(ours, reference, rtol=0,
                               atol=RTOL * max(np.abs(reference).max(), 1.0))


@pytest.mark.parametrize("urdf", [PANDA, TREE], ids=["panda", "tree12"])
@pytest.mark.parametrize("gravity", [WALL, SLANTED], ids=["wall", "slanted"])
def test_every_function_gravity_enters_matches_pinocchio(urdf, gravity) -> None:
    robot = Robot.from_urdf_string(urdf, gravity=gravity)
    oracle = PinocchioOracle(urdf, robot.joint_names, gravity=gravity, is_string=True)
    rng = np.random.default_rng(7)
    Q, QD, X = rng.uniform(-1.0, 1.0, (3, 4, robot.nv))
    for q, qd, x in zip(Q, QD, X, strict=True):
        close(robot.gravity_torques(q), oracle.gravity_torques(q))
        close(robot.bias_forces(q, qd), oracle.bias_forces(q, qd))
        close(robot.inverse_dynamics(q, qd, x), oracle.rnea(q, qd, x))
        for method in ("aba", "cholesky"):
            close(robot.forward_dynamics(q, qd, x, method=method), oracle.aba(q, qd, x))
        close(robot.potential_energy(q), oracle.potential_energy(q))
    close(robot.gravity_torques(Q), [oracle.gravity_torques(q) for q in Q])  # a batch
    close(robot.forward_dynamics(Q, QD, X), [oracle.aba(*state) for state in zip(Q, QD, X,
                                                                              strict=True)])


def test_with_gravity_is_the_robot_loaded_with_it() -> None:
    loaded = Robot.from_urdf_string(PANDA, gravity=WALL)
    changed = Robot.from_urdf_string(PANDA).with_gravity(WALL)
    np.testing.assert_array_equal(changed.model.gravity, WALL)
    q = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_array_equal(changed.gravity_torques(q), loaded.gravity_torques(q))
    np.testing.assert_array_equal(Robot.from_urdf_string(PANDA).model.gravity, (0, 0, -9.81))


@pytest.mark.parametrize("gravity", [(0.0, -9.81), (0.0, 0.0, float("nan")), "down", None,
                                     (0.0, 0.0, float("inf")), [[0.0, 0.0, -9.81]]])
def test_a_gravity_that_is_not_three_finite_numbers_is_refused(gravity) -> None:
    robot = Robot.from_urdf_string(PANDA)
    if gravity is None:  # None means the default, not "no gravity"
        assert robot.with_gravity((0.0, 0.0, 0.0)).gravity_torques(np.zeros(7)).max() == 0.0
        return
    with pytest.raises(ModelError, match="robot 'panda': gravity must be 3 finite numbers"):
        robot.with_gravity(gravity)


def test_the_simulated_robot_and_the_rollout_fall_along_the_wall_gravity() -> None:
    robot = Robot.from_urdf_string(PANDA, gravity=WALL)
    expect_idle_fall(robot, PinocchioOracle(PANDA, robot.joint_names, gravity=WALL,
                                            is_string=True))


def expect_idle_fall(robot: Robot, oracle: PinocchioOracle) -> None:
    """The panda under zero effort, stepped by SimulatedRobot and by the preview's kernel
    (semi-implicit Euler), against the same steps over Pinocchio's ABA, to 1e-9 rad."""
    model, dt = robot.model, 1e-3
    q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
    idle = TorqueProfile("idle", "panda_hand_tcp", np.zeros(1), np.zeros((1, 7)))
    settings = PreviewSettings(horizon=0.02, dt=dt, integrator="semi_implicit_euler")
    (result,) = preview(robot, [idle], settings, q0)
    simulated = SimulatedRobot(robot, "semi_implicit_euler", dt, q=q0)
    q, qd = q0.copy(), np.zeros(7)
    for k in range(settings.steps):
        simulated.step(np.zeros(7))
        friction = model.friction * np.tanh(qd / settings.friction_velocity)
        qd = qd + dt * oracle.aba(q, qd, -model.damping * qd - friction)
        q = q + dt * qd
        np.testing.assert_allclose(simulated.q, q, rtol=0, atol=1e-9)
        np.testing.assert_allclose(result.q[k + 1], q, rtol=0, atol=1e-9)
    assert np.abs(q - q0).max() > 1e-4  # it moved


def expect_node_follows(peer, gravity) -> None:
    """dynamics_node's published g and q̈ at a new state are Pinocchio's under `gravity`."""
    q, effort = new_state(), np.linspace(-2.0, 2.0, 7)
    answer = published_answer(peer, q, effort)
    oracle = PinocchioOracle(PANDA, [f"panda_joint{k}" for k in range(1, 8)], gravity=gravity,
                             is_string=True)
    close(answer.gravity_torques, oracle.gravity_torques(q))
    close(answer.acceleration, oracle.aba(q, np.zeros(7), effort))


def test_dynamics_node_publishes_g_and_qdd_under_the_gravity_parameter(ros) -> None:
    peer = dynamics_peer(ros, Parameter("gravity", value=list(WALL)),
                         Parameter("quantities", value=["gravity_torques", "acceleration"]))
    node = peer.node
    try:
        expect_node_follows(peer, WALL)
        assert node.set_parameters([Parameter("gravity", value=list(SLANTED))])[0].successful
        expect_node_follows(peer, SLANTED)
        for value in ([0.0, float("nan"), 0.0], [1.0, 2.0]):
            refused = node.set_parameters([Parameter("gravity", value=value)])[0]
            assert not refused.successful and "gravity must be 3 finite numbers" in \
                refused.reason, refused.reason
        expect_node_follows(peer, SLANTED)  # as it was
    finally:
        peer.close()


@pytest.mark.parametrize("kind", [SimNode, ControllerNode, PreviewNode])
def test_every_node_takes_the_gravity_parameter(ros, kind) -> None:
    """The simulated robot, the controller's and the preview's robot are under the gravity,
    and a change at run time reaches them."""
    with panda_node(kind, Parameter("gravity", value=list(WALL))) as (node, robot):
        np.testing.assert_array_equal(robot().model.gravity, WALL)
        assert node.set_parameters([Parameter("gravity", value=list(SLANTED))])[0].successful
        np.testing.assert_array_equal(robot().model.gravity, SLANTED)
