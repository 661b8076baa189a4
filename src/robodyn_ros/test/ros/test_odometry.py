"""Floating-base robots over real DDS: dynamics_node on a floating Solo12 answers each joint
state at the base pose and twist of the newest nav_msgs/Odometry, as the Robot answers it;
a bad odometry or none is refused with the reason while the node keeps serving; the other
nodes refuse a floating robot and keep theirs. And the odometry checks on their own."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import JointSpaceDynamics, OperationalSpaceDynamics
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.model.generate import with_root_joint
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.conversions import RobotState
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.guard import RefusedError
from robodyn_ros.ros.odometry import OdometryFrames, base_state, odometry_for
from robodyn_ros.testing import example_robot_urdf

from helpers.nodes import Peer, panda_node, wait_for

SOLO = example_robot_urdf("solo12").read_text()
FOOT = "FL_FOOT"
TOLERANCE = 1e-12  # the node calls the same Robot: only float formatting could differ
ROLL_PITCH_YAW = (0.2, -0.3, 1.1)  # a turned base
TWIST = [0.2, -0.1, 0.05, 0.3, 0.1, -0.2]  # linear; angular, in the base frame


def quaternion(roll: float, pitch: float, yaw: float) -> list[float]:
    """(x, y, z, w) of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return [sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy]


def odometry(pose: list[float], twist: list[float] = TWIST, frame_id: str = "odom",
             child_frame_id: str = "base_link") -> Odometry:
    """An Odometry of the base pose [x y z, qx qy qz qw] and twist [linear; angular]."""
    message = Odometry(child_frame_id=child_frame_id)
    message.header.frame_id = frame_id
    p, o = message.pose.pose.position, message.pose.pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = pose
    t = message.twist.twist
    t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = twist
    return message


@pytest.fixture(scope="module")
def solo() -> Robot:
    return Robot.from_urdf_string(SOLO, floating_base=True)


@pytest.fixture
def peer(ros) -> Iterator[Peer]:
    """A dynamics_node on the floating Solo12 with the operational space of a foot; the Peer
    collects its answers in `answers` and `frames`."""
    node = DynamicsNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True),
        Parameter("frames", value=[FOOT]), Parameter("diagnostic_period", value=0.2)])
    peer = Peer(ros, node)
    peer.answers, peer.frames = [], []
    peer.peer.create_subscription(JointSpaceDynamics, "dynamics/joint_space",
                                  peer.answers.append, 100)
    peer.peer.create_subscription(OperationalSpaceDynamics, "dynamics/operational_space",
                                  peer.frames.append, 100)
    yield peer
    peer.close()


def joint_state(solo: Robot, q, qd, effort=None) -> JointState:
    """The joints' state, after the free flyer's six rows."""
    message = JointState(name=list(solo.joint_names[6:]), position=list(q), velocity=list(qd))
    if effort is not None:
        message.effort = list(effort)
    return message


def answer(peer: Peer, base: Odometry, state: JointState, q: np.ndarray) -> JointSpaceDynamics:
    """The JointSpaceDynamics published at q, sending the odometry and the joint state every
    50 ms until it arrives."""
    def found() -> JointSpaceDynamics | None:
        return next((m for m in peer.answers if np.array_equal(m.position, q)), None)

    def sent_and_answered() -> bool:
        peer.publish(Odometry, "odometry", base)
        peer.publish(JointState, "joint_states", state)
        return wait_for(lambda: found() is not None, 0.05)

    assert wait_for(sent_and_answered)
    message = found()
    assert message is not None
    return message


def close(published, expected) -> None:
    np.testing.assert_allclose(np.reshape(published, np.shape(expected)), expected, rtol=0,
                               atol=TOLERANCE * max(1.0, np.abs(expected).max()))


def test_dynamics_at_the_odometry_base_equal_the_robot(peer, solo) -> None:
    """q = [pose, joints], v = [twist, joints], τ = [0, efforts]: M, b, g, v̇ and a foot's
    operational space as the Robot answers them, nv names, in the world frame."""
    rng = np.random.default_rng(1)
    joints, rates, efforts = rng.uniform(-1, 1, (3, 12))
    pose = [0.1, -0.2, 0.3, *quaternion(*ROLL_PITCH_YAW)]
    q = np.concatenate([pose, joints])
    v = np.concatenate([TWIST, rates])
    tau = np.concatenate([np.zeros(6), efforts])
    message = answer(peer, odometry(pose), joint_state(solo, joints, rates, efforts), q)
    assert list(message.joint_names) == list(solo.joint_names)
    assert message.header.frame_id == "odom"
    close(message.velocity, v)
    close(message.effort, tau)
    close(message.mass_matrix, solo.mass_matrix(q))
    close(message.bias_forces, solo.bias_forces(q, v))
    close(message.gravity_torques, solo.gravity_torques(q))
    close(message.acceleration, solo.forward_dynamics(q, v, tau))
    assert not message.coriolis_matrix  # not among the default quantities
    assert wait_for(lambda: any(m.header.stamp == message.header.stamp for m in peer.frames))
    foot = next(m for m in peer.frames if m.header.stamp == message.header.stamp)
    task = solo.operational_space(q, v, FOOT)
    assert foot.header.frame_id == "odom" and list(foot.joint_names) == list(solo.joint_names)
    close(foot.jacobian, task.J)
    close(foot.inertia, task.Lambda)
    close([foot.pose.position.x, foot.pose.position.y, foot.pose.position.z],
          solo.frame_pose(q, FOOT)[:3, 3])


def test_an_odometry_in_another_frame_is_refused_and_the_node_keeps_serving(peer, solo) -> None:
    pose = [0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0]
    assert peer.until_reported(lambda: peer.publish(Odometry, "odometry",
                                                    odometry(pose, frame_id="map")),
                               "header.frame_id is 'map'")
    joints = np.full(12, 0.1)
    q = np.concatenate([pose, joints])
    answer(peer, odometry(pose), joint_state(solo, joints, np.zeros(12)), q)


def test_joint_states_without_odometry_are_refused(peer, solo) -> None:
    state = joint_state(solo, np.zeros(12), np.zeros(12))
    assert peer.until_reported(lambda: peer.publish(JointState, "joint_states", state),
                               "no odometry yet")
    assert not peer.answers
    status = peer.node.status()  # the node, still up, reports its robot
    assert status.hardware_id == solo.model.name


REFUSALS = {  # why each node refuses the floating Solo12 as it is configured
    ControllerNode: "controller 'gravity_compensation' does not control a floating base",
}


@pytest.mark.parametrize("kind", list(REFUSALS))
def test_the_other_nodes_refuse_a_floating_robot_and_keep_theirs(ros, kind) -> None:
    with panda_node(kind) as (node, robot):
        before = robot()
        result = node.set_parameters_atomically([Parameter("robot_description", value=SOLO),
                                                 Parameter("floating_base", value=True)])
        assert not result.successful
        assert REFUSALS[kind] in result.reason
        assert robot() is before
        assert REFUSALS[kind] in node.status().message


@pytest.mark.parametrize(("change", "field"), [
    ({"frame_id": "map"}, "header.frame_id is 'map'"),
    ({"child_frame_id": "trunk"}, "child_frame_id is 'trunk'"),
    ({"pose": [0.0, np.nan, 0.0, 0.0, 0.0, 0.0, 1.0]}, "pose.pose.position is not finite"),
    ({"pose": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.9]}, "not a unit quaternion: norm 0.9"),
    ({"twist": [0.0, 0.0, 0.0, np.inf, 0.0, 0.0]}, "twist.twist.angular is not finite"),
])
def test_odometry_checks_name_the_field_and_the_value(change, field) -> None:
    message = odometry(**{"pose": [0.0] * 6 + [1.0], **change})
    with pytest.raises(RefusedError, match=field.replace("(", r"\(")):
        base_state(message, OdometryFrames("odom", "base_link"), 0)


def test_odometry_with_frame_prefix_gives_the_base_state() -> None:
    pose = [0.1, 0.2, 0.3, *quaternion(*ROLL_PITCH_YAW)]
    message = odometry(pose, frame_id="left/odom", child_frame_id="left/base_link")
    state = base_state(message, OdometryFrames("left/odom", "left/base_link"), time.time_ns())
    np.testing.assert_array_equal(state.pose, pose)
    np.testing.assert_array_equal(state.twist, TWIST)


def test_the_odometry_kept_is_forgotten_when_its_frames_change() -> None:
    """A node keeps its newest odometry across a change that names the same frames, and
    forgets it when the frames change (a fixed base keeps none)."""
    frames = OdometryFrames("odom", "base_link")
    kept = odometry_for(frames, None)
    kept.take(odometry([0.0] * 6 + [1.0]), time.time_ns())
    assert odometry_for(OdometryFrames("odom", "base_link"), kept) is kept
    assert kept.newest is not None
    moved = odometry_for(OdometryFrames("map", "base_link"), kept)
    assert moved.frames.world == "map" and moved.newest is None
    assert odometry_for(None, kept) is None


def test_an_odometry_older_than_max_age_is_refused_never_joined() -> None:
    """The base joins the joints' state while its odometry is within max_age (the base's
    effort zero), and is refused, naming the age, once it is older."""
    kept = odometry_for(OdometryFrames("odom", "base_link"), None)
    pose = [0.1, 0.2, 0.3, *quaternion(*ROLL_PITCH_YAW)]
    kept.take(odometry(pose), 0)
    joints = RobotState(np.ones(12), np.full(12, 2.0), np.full(12, 3.0))
    state = kept.robot_state(joints, 50_000_000, max_age=0.1)
    np.testing.assert_array_equal(state.q, [*pose, *joints.q])
    np.testing.assert_array_equal(state.qd, [*TWIST, *joints.qd])
    np.testing.assert_array_equal(state.effort, [0.0] * 6 + [3.0] * 12)
    with pytest.raises(RefusedError, match="not within joint_states_max_age"):
        kept.robot_state(joints, 200_000_000, max_age=0.1)


def test_a_planar_joint_is_refused_and_the_node_keeps_its_robot(ros) -> None:
    """A JointState carries one number per joint: a robot with a planar joint is refused,
    naming it, and the floating Solo12 stays in service."""
    node = DynamicsNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True)])
    try:
        before = node.robot
        result = node.set_parameters_atomically([
            Parameter("floating_base", value=False),
            Parameter("robot_description", value=with_root_joint(SOLO, "planar"))])
        assert not result.successful
        assert "'root_joint'" in result.reason
        assert "planar or floating inside the tree" in result.reason
        assert node.robot is before
    finally:
        node.destroy_node()


@pytest.mark.parametrize("kind", list(REFUSALS))
def test_a_refused_floating_base_leaves_the_node_reporting_the_robot_in_service(ros, kind) -> None:
    """floating_base:=true refused by a node that takes fixed bases: the refusal is reported
    once (ERROR, and the log), then the diagnostics report the panda running, with the
    refusal as their last error."""
    with panda_node(kind) as (node, robot):
        result = node.set_parameters([Parameter("floating_base", value=True)])[0]
        assert not result.successful and "a floating base" in result.reason
        refused = node.status()
        assert refused.level == DiagnosticStatus.ERROR
        assert "a floating base" in refused.message
        now = node.status()  # the next report: what runs now
        assert now.level < DiagnosticStatus.ERROR, now.message
        assert now.hardware_id == "panda" and robot().model.name == "panda"
        last_error = {kv.key: kv.value for kv in now.values}["last error"]
        assert "a floating base" in last_error


def test_compute_dynamics_answers_at_the_newest_odometry(peer, solo) -> None:
    """A floating base's request carries its joints: the answer is at the newest odometry's
    base (M, C v + g, q̈, the derivatives in the tangent space and a foot's Λ as the Robot's
    there); before any odometry, refused."""
    client = peer.peer.create_client(ComputeDynamics, "compute_dynamics")
    assert client.wait_for_service(timeout_sec=20.0)
    rng = np.random.default_rng(2)
    joints, rates, efforts = rng.uniform(-1, 1, (3, 12))
    request = ComputeDynamics.Request(frames=[FOOT], derivatives=True,
                                      state=joint_state(solo, joints, rates, efforts))
    refused = client.call(request, timeout_sec=30.0)
    assert refused is not None and not refused.success and "no odometry" in refused.message
    pose = [0.2, 0.1, 0.3, *quaternion(*ROLL_PITCH_YAW)]
    q = np.concatenate([pose, joints])
    v = np.concatenate([TWIST, rates])
    tau = np.concatenate([np.zeros(6), efforts])
    answer(peer, odometry(pose), joint_state(solo, joints, rates), q)  # the node took it
    response = client.call(request, timeout_sec=30.0)
    assert response is not None and response.success, response and response.message
    space = response.joint_space
    close(space.position, q)
    close(space.mass_matrix, solo.mass_matrix(q))
    close(space.bias_forces, solo.bias_forces(q, v))
    close(space.acceleration, solo.forward_dynamics(q, v, tau))
    close(space.coriolis_matrix, solo.coriolis_matrix(q, v))
    close(response.operational_space[0].inertia, solo.operational_space(q, v, FOOT).Lambda)
    inverse = solo.inverse_dynamics_derivatives(q, v, np.array(space.acceleration))
    forward = solo.forward_dynamics_derivatives(q, v, tau)
    for published, expected in ((response.dtau_dq, inverse.dtau_dq),
                                (response.dtau_dv, inverse.dtau_dv),
                                (response.dvdot_dq, forward.dvdot_dq),
                                (response.dvdot_dv, forward.dvdot_dv)):
        close(published, expected)
