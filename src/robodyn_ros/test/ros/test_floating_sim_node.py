"""sim_node with a floating base over real DDS: a quadruped held on its four feet publishes
its joints on joint_states and its base's ground truth on odometry (REP 105), the feet stay
where they started, and a dynamics_node fed by those two topics publishes the robot's
dynamics at the simulated state."""

from __future__ import annotations

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import JointSpaceDynamics
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.testing import example_robot_urdf

from helpers.nodes import Peer, wait_for

SOLO = example_robot_urdf("solo12").read_text()
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
STANDING = [0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6]  # FL FR HL HR


@pytest.fixture(scope="module")
def solo() -> Robot:
    return Robot.from_urdf_string(SOLO, floating_base=True)


@pytest.fixture
def simulation(ros):
    """A sim_node on the floating Solo12 standing on its four held feet, and a Peer that
    keeps its joint_states and odometry."""
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True),
        Parameter("initial_positions", value=STANDING),
        Parameter("contacts", value=[f"{foot}:3d" for foot in FEET]),
        Parameter("real_time_factor", value=0.0)])
    peer = Peer(ros, node)
    peer.states, peer.odometry = [], []
    peer.peer.create_subscription(JointState, "joint_states", peer.states.append, 1000)
    peer.peer.create_subscription(Odometry, "odometry", peer.odometry.append, 1000)
    yield peer
    node.stop()
    peer.close()


def configuration(state: JointState, odometry: Odometry) -> np.ndarray:
    """q = [base pose, joints] of one published state."""
    p, o = odometry.pose.pose.position, odometry.pose.pose.orientation
    return np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w, *state.position])


def test_a_held_quadruped_publishes_its_joints_and_its_base(simulation, solo) -> None:
    assert wait_for(lambda: len(simulation.odometry) >= 20 and len(simulation.states) >= 20)
    state, odometry = simulation.states[0], simulation.odometry[0]
    assert list(state.name) == list(solo.joint_names[6:])  # the joints, not the base
    assert odometry.header.frame_id == "odom" and odometry.child_frame_id == "base_link"
    np.testing.assert_allclose(state.position, STANDING, atol=0.05)  # as it starts to sag
    feet = {foot: solo.frame_pose(configuration(state, odometry), foot)[:3, 3] for foot in FEET}
    stamps = {(m.header.stamp.sec, m.header.stamp.nanosec): m for m in simulation.odometry}
    checked = 0
    for state in list(simulation.states)[1:]:
        base = stamps.get((state.header.stamp.sec, state.header.stamp.nanosec))
        if base is None:
            continue
        q = configuration(state, base)
        assert np.linalg.norm(q[3:7]) == pytest.approx(1.0, abs=1e-9)
        for foot, start in feet.items():
            assert np.abs(solo.frame_pose(q, foot)[:3, 3] - start).max() < 1e-5
        checked += 1
    assert checked >= 10
    assert simulation.odometry[-1].pose.pose.position.z < odometry.pose.pose.position.z  # sags


def test_dynamics_node_computes_at_the_simulated_state(ros, solo) -> None:
    """sim_node's joint_states and odometry feed a dynamics_node: its M at each answered
    state is the Robot's at [odometry pose, joints]."""
    sim = SimNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True),
        Parameter("initial_positions", value=STANDING)])
    dynamics = DynamicsNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True)])
    peer = Peer(ros, dynamics)
    peer.executor.add_node(sim)
    answers: list[JointSpaceDynamics] = []
    peer.peer.create_subscription(JointSpaceDynamics, "dynamics/joint_space", answers.append,
                                  100)
    try:
        assert wait_for(lambda: len(answers) >= 3)
        message = answers[-1]
        q = np.array(message.position)
        assert list(message.joint_names) == list(solo.joint_names)
        M = np.reshape(message.mass_matrix, (solo.nv, solo.nv))
        np.testing.assert_allclose(M, solo.mass_matrix(q), rtol=0, atol=1e-12)
    finally:
        sim.stop()
        peer.executor.remove_node(sim)
        sim.destroy_node()
        peer.close()
