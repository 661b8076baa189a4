"""joint_states as robot_state_publisher and ros2_control take them, over real DDS: from a
best-effort (sensor data) publisher as from a reliable one, with QoS overrides; partial
messages merged by joint name across publishers, refused with the joints not heard once one
falls silent beyond joint_states_max_age; locked_joints as a node parameter. Every answer is
checked against Pinocchio."""

from __future__ import annotations

import time

import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState

from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.nodes import Peer, dynamics_peer, wait_for
from helpers.robots import PANDA, PANDA_JOINTS

TOLERANCE = 1e-10  # relative to the largest entry: the node's Robot against Pinocchio
Q = np.array([0.3, -0.4, 0.2, -2.1, 0.1, 1.6, 0.7])
GRIPPER = ["panda_finger_joint1", "panda_finger_joint2"]  # not in the bundled arm: extra


def answered_at(peer: Peer, q: np.ndarray, send, timeout: float = 30.0):
    """send() every 50 ms until an answer at q arrives; that answer (None on time-out).

    Answers of another joint set (sent before a parameter change) may still be arriving."""
    def at_q(m) -> bool:
        return len(m.position) == len(q) and np.allclose(m.position, q)

    def found():
        send()
        time.sleep(0.05)
        return next((m for m in reversed(peer.answers[-20:]) if at_q(m)), None)

    wait_for(lambda: found() is not None, timeout)
    return found()


def assert_pinocchio_mass_matrix(answer, q: np.ndarray, locked=None) -> None:
    names = list(answer.joint_names)
    reference = PinocchioOracle(PANDA, names, locked_joints=locked, is_string=True)
    expected = reference.mass_matrix(q)
    n = len(names)
    np.testing.assert_allclose(np.reshape(answer.mass_matrix, (n, n)), expected, rtol=0,
                               atol=TOLERANCE * np.abs(expected).max())


def publisher(peer: Peer, qos: QoSProfile):
    """A joint_states publisher of the test node with `qos`, once the node hears it."""
    out = peer.peer.create_publisher(JointState, "joint_states", qos)
    assert wait_for(lambda: out.get_subscription_count() > 0)
    return out


@pytest.fixture
def dynamics(ros):
    peer = dynamics_peer(ros, Parameter("quantities", value=["mass_matrix"]),
                         Parameter("joint_states_max_age", value=0.3))
    yield peer
    peer.close()


@pytest.mark.parametrize("qos", [qos_profile_sensor_data, QoSProfile(depth=10)],
                         ids=["best-effort", "reliable"])
def test_best_effort_and_reliable_publishers_are_both_answered(dynamics, qos) -> None:
    out = publisher(dynamics, qos)
    message = JointState(name=PANDA_JOINTS, position=Q.tolist())
    answer = answered_at(dynamics, Q, lambda: out.publish(message))
    assert answer is not None, "no answer to a joint state of this QoS"
    assert_pinocchio_mass_matrix(answer, Q)


def test_qos_overrides_are_parameters(ros) -> None:
    """robot_state_publisher's qos_overrides parameters: a subscription made reliable by one
    is taken at start (and not refused as an unknown parameter)."""
    peer = dynamics_peer(ros, Parameter(
        "qos_overrides./joint_states.subscription.reliability", value="reliable"))
    try:
        subscription = peer.node._intake.subscription
        assert subscription.qos_profile.reliability == ReliabilityPolicy.RELIABLE
        best_effort = peer.node.get_parameter(
            "qos_overrides./joint_states.subscription.reliability")
        assert best_effort.value == "reliable"
    finally:
        peer.close()


def test_partial_messages_are_merged_across_publishers(dynamics) -> None:
    """The arm in two messages from two publishers (joints 1-4 with a gripper's, joints 5-7):
    answered at the merged state; then one falls silent and, past joint_states_max_age, the
    state is refused naming its joints, and nothing is computed."""
    first = publisher(dynamics, qos_profile_sensor_data)
    second = dynamics.peer.create_publisher(JointState, "joint_states", 10)  # reliable
    head = JointState(name=[*GRIPPER, *PANDA_JOINTS[:4]], position=[0.02, 0.02, *Q[:4]])
    tail = JointState(name=PANDA_JOINTS[4:], position=Q[4:].tolist(),
                      velocity=[0.0, 0.0, 0.0])

    def both() -> None:
        first.publish(head)
        second.publish(tail)

    answer = answered_at(dynamics, Q, both)
    assert answer is not None, "no answer at the merged state"
    assert_pinocchio_mass_matrix(answer, Q)

    since = len(dynamics.statuses)
    assert wait_for(lambda: (first.publish(head), time.sleep(0.05)) and dynamics.reported(
        "no state of joint(s) panda_joint5 (heard", since=since)), \
        [s.message for s in dynamics.statuses[since:]]
    count = len(dynamics.answers)
    for _ in range(10):
        first.publish(head)
        time.sleep(0.02)
    time.sleep(0.2)
    assert len(dynamics.answers) == count, "an incomplete state was answered"
    answer = answered_at(dynamics, Q, both)  # the silent publisher is back: served again
    assert answer is not None, "no answer once the state was complete again"
    assert_pinocchio_mass_matrix(answer, Q)


def test_locked_joints_is_a_node_parameter(ros) -> None:
    """locked_joints at start and changed at run time: the robot without those joints, as
    Pinocchio's with them locked at the positions given; an unknown joint is refused."""
    peer = dynamics_peer(ros, Parameter("quantities", value=["mass_matrix"]),
                         Parameter("locked_joints", value="{panda_joint7: 0.5}"))
    try:
        out = publisher(peer, QoSProfile(depth=10))
        message = JointState(name=PANDA_JOINTS, position=Q.tolist())
        answer = answered_at(peer, Q[:6], lambda: out.publish(message))
        assert answer is not None and list(answer.joint_names) == PANDA_JOINTS[:6]
        assert_pinocchio_mass_matrix(answer, Q[:6], {"panda_joint7": 0.5})

        locked = "{panda_joint6: 1.0, panda_joint7: -0.3}"
        assert peer.node.set_parameters([Parameter("locked_joints", value=locked)])[0].successful
        answer = answered_at(peer, Q[:5], lambda: out.publish(message))
        assert answer is not None and list(answer.joint_names) == PANDA_JOINTS[:5]
        assert_pinocchio_mass_matrix(answer, Q[:5], {"panda_joint6": 1.0, "panda_joint7": -0.3})

        refused = peer.node.set_parameters([Parameter("locked_joints", value="{elbow: 0.1}")])[0]
        assert not refused.successful and "elbow" in refused.reason
        refused = peer.node.set_parameters([Parameter("locked_joints", value="[1, 2]")])[0]
        assert not refused.successful and "locked_joints" in refused.reason
    finally:
        peer.close()


def test_the_controller_merges_partial_joint_states(ros) -> None:
    """controller_node answers a state merged from two publishers with gravity compensation:
    the efforts are Pinocchio's g(q)."""
    node = ControllerNode(parameter_overrides=[Parameter("robot_description", value=PANDA)])
    peer = Peer(ros, node)
    efforts = []
    from std_msgs.msg import Float64MultiArray
    peer.peer.create_subscription(Float64MultiArray, "effort_commands", efforts.append, 100)
    try:
        first = publisher(peer, qos_profile_sensor_data)
        second = peer.peer.create_publisher(JointState, "joint_states", 10)
        head = JointState(name=PANDA_JOINTS[:3], position=Q[:3].tolist())
        tail = JointState(name=PANDA_JOINTS[3:], position=Q[3:].tolist())
        expected = PinocchioOracle(PANDA, PANDA_JOINTS, is_string=True).gravity_torques(Q)

        def matched() -> bool:
            first.publish(head)
            second.publish(tail)
            time.sleep(0.05)
            return any(np.allclose(m.data, expected, rtol=0, atol=1e-9) for m in efforts[-10:])

        assert wait_for(matched), efforts[-1:] if efforts else "no efforts"
    finally:
        peer.close()
