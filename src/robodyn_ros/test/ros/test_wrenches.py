"""External wrenches over real DDS: compute_dynamics answers q̈ with the request's wrenches and
their Σ Jᵀ w (against Robot.forward_dynamics and jacobian, which test_external_wrenches holds
to Pinocchio), on a fixed and a floating base; sim_node applies the WrenchStamped it hears,
holds it until replaced and releases it at zero; a wrench on an unknown frame or with a NaN
is refused naming the field, and the nodes keep serving."""

from __future__ import annotations

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from hypothesis import given, settings
from hypothesis import strategies as st
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.frames import robot_frame as robot_frame_of
from robodyn_ros.ros.guard import RefusedError
from robodyn_ros.ros.odometry import odometry_message
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.ros.wrenches import wrench_of
from robodyn_ros.testing import example_robot_urdf

from helpers.nodes import PANDA_JOINTS, Q0, TIP, Peer, call, dynamics_peer, panda_state, wait_for

SOLO = example_robot_urdf("solo12").read_text()
PUSH = [3.0, -2.0, 5.0, 0.2, -0.4, 0.1]  # N and N·m, world-aligned at the frame's origin
TOLERANCE = 1e-12  # the node calls the same Robot: only float formatting could differ


def wrench(frame: str, values=PUSH) -> WrenchStamped:
    message = WrenchStamped()
    message.header.frame_id = frame
    f, t = message.wrench.force, message.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = values
    return message


def close(published, expected) -> None:
    np.testing.assert_allclose(published, expected, rtol=0,
                               atol=TOLERANCE * max(1.0, np.abs(expected).max()))


@pytest.fixture
def panda_peer(ros):
    peer = dynamics_peer(ros)
    yield peer
    peer.close()


def test_compute_dynamics_pushes_the_acceleration(panda_peer) -> None:
    robot = Robot.from_urdf(bundled_urdf("panda"))
    q, effort = np.array(Q0), np.linspace(-1.0, 1.0, 7)
    request = ComputeDynamics.Request(
        state=panda_state(q, effort=effort),
        external_wrenches=[wrench(TIP), wrench("panda_link4"), wrench(TIP, [0.0, 1.0] + [0] * 4)])
    response = call(panda_peer, ComputeDynamics, "compute_dynamics", request)
    assert response.success, response.message
    pushes = {TIP: np.add(PUSH, [0.0, 1.0, 0, 0, 0, 0]), "panda_link4": np.array(PUSH)}
    close(response.joint_space.acceleration,
          robot.forward_dynamics(q, np.zeros(7), effort, external_wrenches=pushes))
    close(response.external_forces, sum(robot.jacobian(q, frame).T @ w
                                        for frame, w in pushes.items()))
    plain = call(panda_peer, ComputeDynamics, "compute_dynamics",
                 ComputeDynamics.Request(state=request.state))
    assert len(plain.external_forces) == 0
    close(plain.joint_space.acceleration, robot.forward_dynamics(q, np.zeros(7), effort))


@pytest.mark.parametrize(("bad", "reason"), [
    (wrench("wrist_cam"), "external_wrenches[1]: header.frame_id 'wrist_cam' is not a frame"),
    (wrench(TIP, [0.0, np.nan, 0, 0, 0, 0]), "external_wrenches[1]: wrench is not finite"),
])
def test_a_bad_wrench_is_refused_naming_it(panda_peer, bad, reason) -> None:
    request = ComputeDynamics.Request(state=panda_state(Q0), external_wrenches=[wrench(TIP), bad])
    response = call(panda_peer, ComputeDynamics, "compute_dynamics", request)
    assert not response.success and reason in response.message
    good = call(panda_peer, ComputeDynamics, "compute_dynamics",
                ComputeDynamics.Request(state=panda_state(Q0)))
    assert good.success, good.message


def test_compute_dynamics_pushes_a_floating_base(ros) -> None:
    """On a floating base the wrench is in the world's axes and moves the base rows too."""
    solo = Robot.from_urdf_string(SOLO, floating_base=True)
    peer = Peer(ros, DynamicsNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True)]))
    try:
        base = np.array([0.1, 0.0, 0.3, 0.0, 0.0, np.sin(0.3), np.cos(0.3)])
        joints = np.linspace(-0.5, 0.5, 12)
        q = np.concatenate([base, joints])
        peer.publish(Odometry, "odometry",
                     odometry_message(q, np.zeros(18), "odom", "base_link"))
        assert wait_for(lambda: peer.node._odometry.newest is not None)
        state = JointState(name=list(solo.joint_names[6:]), position=list(joints),
                           velocity=[0.0] * 12, effort=[0.5] * 12)
        response = call(peer, ComputeDynamics, "compute_dynamics", ComputeDynamics.Request(
            state=state, external_wrenches=[wrench("FL_FOOT")]))
        assert response.success, response.message
        tau = np.concatenate([np.zeros(6), [0.5] * 12])
        pushes = {"FL_FOOT": np.array(PUSH)}
        close(response.joint_space.acceleration,
              solo.forward_dynamics(q, np.zeros(18), tau, external_wrenches=pushes))
        close(response.external_forces, solo.jacobian(q, "FL_FOOT").T @ PUSH)
    finally:
        peer.close()


def test_sim_node_holds_a_push_until_released(ros) -> None:
    node = SimNode(parameter_overrides=[Parameter("robot_description",
                                                  value=bundled_urdf("panda").read_text())])
    peer = Peer(ros, node)
    try:
        assert wait_for(lambda: node.sim is not None)
        peer.publish(WrenchStamped, "external_wrenches", wrench(TIP))
        assert wait_for(lambda: TIP in node.sim.external_wrenches)
        np.testing.assert_array_equal(node.sim.external_wrenches[TIP], PUSH)
        peer.publish(WrenchStamped, "external_wrenches", wrench("nowhere"))
        assert wait_for(lambda: peer.reported(
            "external_wrenches: header.frame_id 'nowhere' is not a frame"))
        peer.publish(WrenchStamped, "external_wrenches", wrench(TIP, [0.0] * 6))
        assert wait_for(lambda: not node.sim.external_wrenches)
        assert list(PANDA_JOINTS) == list(node.sim.robot.joint_names)  # still simulating it
    finally:
        node.stop()
        peer.close()


@settings(max_examples=200, deadline=None)
@given(frame=st.sampled_from([TIP, "panda_link4", "", "nowhere", "left/panda_link4"]),
       values=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=6,
                       max_size=6))
def test_any_wrench_is_read_or_refused_naming_the_field(frame, values) -> None:
    """wrench_of takes a frame of the robot (with or without the prefix) and six finite
    numbers, and refuses anything else naming the field."""
    robot = Robot.from_urdf(bundled_urdf("panda"))

    def robot_frame(name: str) -> str:
        return robot_frame_of(robot, "left/", name)

    try:
        named, read = wrench_of(wrench(frame, values), robot_frame, "pushes[3]")
    except RefusedError as error:
        assert str(error).startswith("pushes[3]: ")
        return
    assert named in robot.frame_names and frame.endswith(named)
    np.testing.assert_array_equal(read, values)
