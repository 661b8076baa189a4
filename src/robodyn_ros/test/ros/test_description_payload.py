"""The set_payload service of every node, over real DDS: dynamics_node's published M, g and
q̈ follow Pinocchio with the load added; bad requests are refused with the reason and change
nothing; a new robot carries the loads on the frames it has and names the others; the
simulated arm picks the load up where it is, and the controller's and the preview's robot
carry it."""

from __future__ import annotations

import numpy as np
import pytest
from geometry_msgs.msg import Inertia, Vector3
from rclpy.parameter import Parameter
from robodyn_interfaces.srv import SetPayload
from std_msgs.msg import String

from robodyn_ros import Robot
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.nodes import (
    PATIENCE,
    TOLERANCE,
    Peer,
    dynamics_peer,
    new_state,
    published_answer,
    wait_for,
)
from helpers.robots import CHAIN, PANDA, PANDA_JOINTS, TOOL

HAND = "panda_hand"


def inertia_message(mass: float, com, inertia) -> Inertia:
    (ixx, ixy, ixz), (_, iyy, iyz), (_, _, izz) = np.asarray(inertia, dtype=float)
    return Inertia(m=mass, com=Vector3(x=com[0], y=com[1], z=com[2]), ixx=ixx, ixy=ixy,
                   ixz=ixz, iyy=iyy, iyz=iyz, izz=izz)


def set_payload(peer: Peer, frame: str, mass: float, com=(0.0, 0.0, 0.0),
                inertia=((0.0,) * 3,) * 3) -> SetPayload.Response:
    """Call the node's set_payload service from the test node and wait for the answer."""
    client = peer.peer.create_client(SetPayload, "set_payload")
    try:
        assert client.wait_for_service(timeout_sec=PATIENCE)
        request = SetPayload.Request(frame=frame, inertia=inertia_message(mass, com, inertia))
        future = client.call_async(request)
        assert wait_for(future.done)
        return future.result()
    finally:
        peer.peer.destroy_client(client)


def expect_pinocchio(peer: Peer, payloads: dict) -> None:
    """The node's M, g and q̈ at a new state are Pinocchio's with these loads."""
    q, effort = new_state(), np.linspace(-2.0, 2.0, 7)
    answer = published_answer(peer, q, effort)
    reference = PinocchioOracle(PANDA, PANDA_JOINTS, payloads=payloads, is_string=True)
    for published, expected in (
        (np.reshape(answer.mass_matrix, (7, 7)), reference.mass_matrix(q)),
        (answer.gravity_torques, reference.gravity_torques(q)),
        (answer.acceleration, reference.aba(q, np.zeros(7), effort)),
    ):
        np.testing.assert_allclose(published, expected, rtol=0,
                                   atol=TOLERANCE * np.abs(expected).max())


@pytest.fixture
def dynamics(ros):
    peer = dynamics_peer(ros, Parameter("quantities", value=[
        "mass_matrix", "gravity_torques", "acceleration"]))
    yield peer
    peer.close()


def test_dynamics_node_publishes_m_g_and_qdd_with_the_payload(dynamics) -> None:
    response = set_payload(dynamics, HAND, *TOOL)
    assert response.success and "1.3 kg on frame 'panda_hand'" in response.message
    expect_pinocchio(dynamics, {HAND: TOOL})

    for request, reason in (
        (("gripper", 1.0), "payload on frame 'gripper' of robot 'panda': unknown frame"),
        ((HAND, -2.0), "mass must be a finite number ≥ 0"),
        ((HAND, 1.0, (0, 0, 0), np.diag([1e-3, 1e-3, 5e-3])), "triangle inequality"),
    ):
        refused = set_payload(dynamics, *request)
        assert not refused.success and reason in refused.message, refused.message
    expect_pinocchio(dynamics, {HAND: TOOL})  # as it was

    point = (0.5, (0.0, 0.0, 0.2), np.zeros((3, 3)))
    assert set_payload(dynamics, "panda_link4", *point).success
    expect_pinocchio(dynamics, {HAND: TOOL, "panda_link4": point})
    removed = set_payload(dynamics, HAND, 0.0)
    assert removed.success and "no payload on frame 'panda_hand'" in removed.message
    expect_pinocchio(dynamics, {"panda_link4": point})


def test_a_new_robot_carries_the_loads_on_the_frames_it_has(dynamics) -> None:
    node = dynamics.node
    assert set_payload(dynamics, HAND, *TOOL).success
    chain = Robot.from_urdf_string(CHAIN)
    dynamics.description.publish(String(data=CHAIN))
    assert wait_for(lambda: node.robot is not None and node.robot.nv == chain.nv)
    assert node.robot.model.payloads == ()
    assert wait_for(lambda: dynamics.reported("payload(s) on frame(s) panda_hand left out"))
    dynamics.description.publish(String(data=PANDA))
    assert wait_for(lambda: node.robot is not None and node.robot.nv == 7)
    expect_pinocchio(dynamics, {HAND: TOOL})
    since = len(dynamics.statuses)
    assert wait_for(lambda: len(dynamics.statuses) > since + 1)
    assert not dynamics.reported("left out", since=len(dynamics.statuses) - 1)


def panda_peer(ros, kind) -> Peer:
    overrides = [Parameter("robot_description", value=PANDA)]
    if kind is ControllerNode:
        overrides.append(Parameter("controller", value="gravity_compensation"))
    return Peer(ros, kind(parameter_overrides=overrides))


@pytest.mark.parametrize("kind", [ControllerNode, PreviewNode])
def test_the_controller_and_preview_robots_carry_the_payload(ros, kind) -> None:
    peer = panda_peer(ros, kind)
    try:
        assert wait_for(lambda: peer.node.robot is not None)
        assert set_payload(peer, HAND, *TOOL).success
        (payload,) = peer.node.robot.model.payloads
        assert payload.frame == HAND and payload.mass == TOOL[0]
        refused = set_payload(peer, HAND, float("nan"))
        assert not refused.success and "mass must be a finite number" in refused.message
        assert peer.node.robot.model.payloads == (payload,)
    finally:
        peer.close()


def test_the_simulated_arm_picks_the_load_up_where_it_is(ros) -> None:
    """With no effort the arm falls; loading it mid-fall keeps its state and sim time, and
    from then on it falls as the loaded arm does."""
    peer = panda_peer(ros, SimNode)
    try:
        node = peer.node
        assert wait_for(lambda: node.sim is not None and node.sim.time > 0.2)
        before = node.sim
        assert set_payload(peer, HAND, *TOOL).success
        assert wait_for(lambda: node.sim is not before and node.sim.time > before.time)
        after = node.sim
        assert after.robot.model.payloads[0].frame == HAND
        assert after.time >= 0.2  # carried on: not back at the initial positions and t = 0
        assert np.abs(after.q - before.default_positions()).max() > 1e-3
    finally:
        peer.close()
