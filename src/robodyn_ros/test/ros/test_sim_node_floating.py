"""sim_node with a floating base over real DDS: a quadruped held on its four feet publishes
its joints on joint_states and its base's ground truth on odometry (REP 105), the feet stay
where they started, and a dynamics_node fed by those two topics publishes the robot's
dynamics at the simulated state."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import JointSpaceDynamics
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.ros.controller_node import ControllerNode
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
    keeps its joint_states and odometry: the node activated once the Peer hears both topics,
    so that the Peer has the first state (the robot sags as fast as the simulation runs)."""
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True),
        Parameter("initial_positions", value=STANDING),
        Parameter("contacts", value=[f"{foot}:3d" for foot in FEET]),
        Parameter("real_time_factor", value=0.0), Parameter("autostart", value=False)])
    peer = Peer(ros, node)
    peer.states, peer.odometry = [], []
    peer.peer.create_subscription(JointState, "joint_states", peer.states.append, 1000)
    peer.peer.create_subscription(Odometry, "odometry", peer.odometry.append, 1000)
    node.trigger_configure()
    assert wait_for(lambda: node.count_subscribers("joint_states") > 0
                    and node.count_subscribers("odometry") > 0)
    node.trigger_activate()
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
    assert (state.header.stamp.sec, state.header.stamp.nanosec) == (0, 0)  # the start
    np.testing.assert_allclose(state.position, STANDING, rtol=0, atol=1e-12)
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


def test_controller_node_holds_the_quadruped_up(ros, solo) -> None:
    """controller_node (whole_body on the four feet) and sim_node in lockstep over DDS, on
    one single-threaded executor as ros.simulation runs them: over 1 s of sim time the base
    stays within 1 cm of where it starts and, once the controller holds it (it holds the
    first state it gets, after the steps the simulation takes before the two have met), moves
    less than 1 mm over the last half second; zero effort lets it sag a centimetre in 0.3 s
    (test_whole_body)."""
    q0 = solo.neutral()
    q0[7:] = STANDING
    q0 = solo.standing(FEET, q0)
    feet = [f"{foot}:3d" for foot in FEET]
    controller = ControllerNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True),
        Parameter("controller", value="whole_body"),
        Parameter("controller_parameters.contacts", value=feet),
        Parameter("controller_parameters.frame", value="base_link")])
    sim = SimNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True),
        Parameter("initial_positions", value=q0.tolist()), Parameter("contacts", value=feet),
        Parameter("lockstep", value=True), Parameter("real_time_factor", value=0.0)])
    listener = ros.create_node("odometry_listener")
    odometry: list[Odometry] = []
    listener.create_subscription(Odometry, "odometry", odometry.append, 1000)
    executor = SingleThreadedExecutor()
    for node in (controller, sim, listener):
        executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        assert wait_for(lambda: bool(odometry) and odometry[-1].header.stamp.sec >= 1)
        heights = np.array([message.pose.pose.position.z for message in odometry])
        times = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in odometry])
        assert np.abs(heights - q0[2]).max() < 1e-2
        held = heights[times >= times[-1] - 0.5]
        assert held.max() - held.min() < 1e-3
        status = controller.status()
        assert status.level != DiagnosticStatus.ERROR, status.message
    finally:
        sim.stop()
        executor.shutdown(timeout_sec=5.0)
        spinner.join(timeout=5.0)
        for node in (sim, controller, listener):
            node.destroy_node()
