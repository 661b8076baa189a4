"""robodyn_interfaces over real DDS: messages published by another process arrive whole, and
the compute service's request and response cross processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
import rclpy
from robodyn_interfaces.msg import JointSpaceDynamics
from robodyn_interfaces.srv import ComputeDynamics

PEER = textwrap.dedent(
    """
    import sys, time
    import rclpy
    from robodyn_interfaces.msg import JointSpaceDynamics, OperationalSpaceDynamics
    from robodyn_interfaces.srv import ComputeDynamics

    def serve(request, response):
        response.success = True
        response.message = ",".join(request.frames)
        response.joint_space.joint_names = list(request.state.name)
        response.joint_space.position = [2.0 * x for x in request.state.position]
        response.operational_space = [
            OperationalSpaceDynamics(frame=frame) for frame in request.frames
        ]
        return response

    rclpy.init()
    node = rclpy.create_node("interfaces_peer")
    node.create_service(ComputeDynamics, "compute_dynamics", serve)
    publisher = node.create_publisher(JointSpaceDynamics, "dynamics", 10)
    message = JointSpaceDynamics(joint_names=["a", "b"], mass_matrix=[1.0, 0.5, 0.5, 2.0])
    message.header.frame_id = "base"
    deadline = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < deadline:
        publisher.publish(message)
        rclpy.spin_once(node, timeout_sec=0.05)
    rclpy.shutdown()
    """
)


@pytest.fixture(scope="module")
def ros_node(ros):
    """An rclpy node in this process and a peer process that publishes and serves."""
    peer = subprocess.Popen([sys.executable, "-c", PEER, "30"], env=os.environ.copy())
    node = rclpy.create_node("interfaces_test")
    try:
        yield node
    finally:
        node.destroy_node()
        peer.terminate()
        peer.wait(timeout=10)


def spin_until(node, done, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)


def test_joint_space_dynamics_arrive_from_another_process(ros_node) -> None:
    received: list[JointSpaceDynamics] = []
    subscription = ros_node.create_subscription(
        JointSpaceDynamics, "dynamics", received.append, 10
    )
    spin_until(ros_node, lambda: bool(received))
    ros_node.destroy_subscription(subscription)
    assert received, "no JointSpaceDynamics message within 20 s"
    message = received[0]
    assert message.header.frame_id == "base"
    assert list(message.joint_names) == ["a", "b"]
    assert list(message.mass_matrix) == [1.0, 0.5, 0.5, 2.0]


def test_compute_service_crosses_processes(ros_node) -> None:
    client = ros_node.create_client(ComputeDynamics, "compute_dynamics")
    assert client.wait_for_service(timeout_sec=20.0), "compute_dynamics not served within 20 s"
    request = ComputeDynamics.Request(frames=["tool", "base"])
    request.state.name = ["j1", "j2"]
    request.state.position = [0.25, -1.0]
    future = client.call_async(request)
    spin_until(ros_node, future.done)
    response = future.result()
    assert response is not None and response.success
    assert response.message == "tool,base"
    assert list(response.joint_space.joint_names) == ["j1", "j2"]
    assert list(response.joint_space.position) == [0.5, -2.0]
    assert [o.frame for o in response.operational_space] == ["tool", "base"]
    ros_node.destroy_client(client)
