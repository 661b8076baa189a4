"""dynamics_node over real DDS: published matrices equal Robot's, the compute service answers
for the state it is sent, with the dynamics' derivatives when asked, another process receives
the messages, and bad input gives a diagnostic and a log line while the node keeps serving;
the operational-space method a request names is the one compute_dynamics answers by."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from robodyn_interfaces.msg import JointSpaceDynamics, OperationalSpaceDynamics
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from robodyn_ros import Robot
from robodyn_ros.ros.conversions import operational_space_dynamics
from robodyn_ros.ros.dynamics_node import DynamicsNode

from helpers.nodes import Spinning

PANDA = Path(__file__).resolve().parents[2] / "urdf" / "panda.urdf"
TIP = "panda_hand_tcp"
TOLERANCE = 1e-12  # the node calls the same Robot: only float formatting could differ
COMPILE_PATIENCE = 600.0  # s: a request whose method's kernels compile first (empty cache)


class Harness:
    """A DynamicsNode and a test node spun by one MultiThreadedExecutor in a thread."""

    def __init__(self, ros, **parameters) -> None:
        overrides = [Parameter(name, value=value) for name, value in parameters.items()]
        self.node = DynamicsNode(parameter_overrides=overrides)
        self.peer = ros.create_node("dynamics_node_test")
        self.joint_space: list[JointSpaceDynamics] = []
        self.operational_space: list[OperationalSpaceDynamics] = []
        self.diagnostics: list[DiagnosticStatus] = []
        self.peer.create_subscription(
            JointSpaceDynamics, "dynamics/joint_space", self.joint_space.append, 50
        )
        self.peer.create_subscription(
            OperationalSpaceDynamics,
            "dynamics/operational_space",
            self.operational_space.append,
            50,
        )
        self.peer.create_subscription(
            DiagnosticArray, "/diagnostics", lambda m: self.diagnostics.extend(m.status), 50
        )
        self.joint_states = self.peer.create_publisher(JointState, "joint_states", 10)
        executor = MultiThreadedExecutor(num_threads=2)
        executor.add_node(self.node)
        executor.add_node(self.peer)
        self.spinning = Spinning(executor)

    def close(self) -> None:
        self.spinning.stop()
        self.node.destroy_node()
        self.peer.destroy_node()

    def publish_until(self, message: JointState, done: Callable[[], bool], timeout=20.0) -> bool:
        """Publish `message` every 50 ms until done() (discovery takes a moment)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.joint_states.publish(message)
            time.sleep(0.05)
            if done():
                return True
        return False


def wait_for(done: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)
    return done()


@pytest.fixture(scope="module")
def robot() -> Robot:
    """The panda, with the kernels the node calls loaded (on a clean machine, compiled: that
    would otherwise happen in the node's first callback, past the tests' timeouts)."""
    robot = Robot.from_urdf(PANDA)
    q = np.zeros(robot.nv)
    robot.mass_matrix(q), robot.bias_forces(q, q), robot.forward_dynamics(q, q, q)
    robot.operational_space(q, q, TIP)
    robot.inverse_dynamics_derivatives(q, q, q), robot.forward_dynamics_derivatives(q, q, q)
    return robot


@pytest.fixture
def harness(ros, robot):
    h = Harness(
        ros, robot_description=PANDA.read_text(), frames=[TIP], diagnostic_period=0.2
    )
    yield h
    h.close()


def joint_state(robot: Robot, q, qd, effort=None) -> JointState:
    """A JointState with the robot's joints reversed and an extra joint, as a real driver may."""
    message = JointState()
    message.name = ["gripper_joint", *reversed(robot.joint_names)]
    message.position = [0.04, *reversed(q.tolist())]
    message.velocity = [0.0, *reversed(qd.tolist())]
    if effort is not None:
        message.effort = [0.0, *reversed(effort.tolist())]
    return message


def state(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n), rng.uniform(-5.0, 5.0, n)


def test_published_dynamics_equal_robot(harness, robot) -> None:
    q, qd, tau = state(1, robot.nv)
    assert harness.publish_until(
        joint_state(robot, q, qd, tau),
        lambda: harness.joint_space and harness.operational_space,
    ), "no dynamics published within 20 s"
    message = harness.joint_space[-1]
    n = robot.nv
    assert list(message.joint_names) == list(robot.joint_names)
    assert message.header.frame_id == robot.model.root_link
    np.testing.assert_allclose(message.position, q, atol=0)
    np.testing.assert_allclose(
        np.reshape(message.mass_matrix, (n, n)), robot.mass_matrix(q), rtol=TOLERANCE, atol=0
    )
    np.testing.assert_allclose(message.bias_forces, robot.bias_forces(q, qd), rtol=TOLERANCE)
    np.testing.assert_allclose(message.gravity_torques, robot.gravity_torques(q), rtol=TOLERANCE)
    np.testing.assert_allclose(
        message.acceleration, robot.forward_dynamics(q, qd, tau), rtol=TOLERANCE
    )
    frame = harness.operational_space[-1]
    assert frame.frame == TIP and not frame.singular and frame.rank == 6
    task = robot.operational_space(q, qd, TIP, singular_threshold=frame.singular_threshold)
    published = operational_space_dynamics(frame)
    for name in ("J", "Lambda", "Lambda_inv", "Jbar", "mu", "p", "Jdot_qd", "condition"):
        np.testing.assert_allclose(
            getattr(published, name), getattr(task, name), rtol=TOLERANCE, err_msg=name
        )
    J = robot.jacobian(q, TIP)
    np.testing.assert_allclose(np.reshape(frame.jacobian, (6, n)), J, rtol=TOLERANCE)
    twist = frame.twist
    np.testing.assert_allclose(
        [twist.linear.x, twist.linear.y, twist.linear.z, twist.angular.x, twist.angular.y,
         twist.angular.z],
        J @ qd,
        rtol=1e-10,
    )
    np.testing.assert_allclose(
        [frame.pose.position.x, frame.pose.position.y, frame.pose.position.z],
        robot.frame_pose(q, TIP)[:3, 3],
        rtol=TOLERANCE,
    )


def test_compute_service_answers_for_the_state_sent(harness, robot) -> None:
    client = harness.peer.create_client(ComputeDynamics, "compute_dynamics")
    assert client.wait_for_service(timeout_sec=20.0)
    q, qd, _ = state(2, robot.nv)
    request = ComputeDynamics.Request(frames=[TIP, "panda_link4"], state=joint_state(robot, q, qd))
    response = client.call(request, timeout_sec=COMPILE_PATIENCE)
    assert response is not None and response.success, response and response.message
    n = robot.nv
    np.testing.assert_allclose(
        np.reshape(response.joint_space.mass_matrix, (n, n)), robot.mass_matrix(q), rtol=TOLERANCE
    )
    assert list(response.joint_space.acceleration) == []  # no effort sent, none computed
    assert [m.frame for m in response.operational_space] == [TIP, "panda_link4"]
    # four joints above panda_link4: J has rank 4, Λ⁻¹ too; Λ is damped, finite
    link4 = response.operational_space[1]
    assert link4.singular and link4.rank == 4 and np.all(np.isfinite(link4.inertia))

    # methods asked in the request win over the node's parameters
    request.mass_matrix_method, request.forward_dynamics_method = "gdahj", "cholesky"
    request.state.effort = [0.0, *reversed(np.linspace(-1.0, 1.0, n).tolist())]
    asked = client.call(request, timeout_sec=COMPILE_PATIENCE).joint_space
    assert (asked.mass_matrix_method, asked.forward_dynamics_method) == ("gdahj", "cholesky")
    np.testing.assert_allclose(
        np.reshape(asked.mass_matrix, (n, n)), robot.mass_matrix(q, method="gdahj"), rtol=1e-12
    )
    tau = np.linspace(-1.0, 1.0, n)
    np.testing.assert_allclose(
        asked.acceleration, robot.forward_dynamics(q, qd, tau, method="cholesky"), rtol=1e-12
    )
    request.state.effort = []
    request.mass_matrix_method = request.forward_dynamics_method = ""

    bad = client.call(ComputeDynamics.Request(frames=["wrist_cam"], state=request.state), 20.0)
    assert not bad.success and "wrist_cam" in bad.message
    request.state.position[3] = float("nan")
    bad = client.call(ComputeDynamics.Request(state=request.state), 20.0)
    assert not bad.success and "non-finite" in bad.message
    harness.peer.destroy_client(client)


DERIVATIVES = ("dtau_dq", "dtau_dv", "dvdot_dq", "dvdot_dv")


def assert_matrix(published, expected: np.ndarray, name: str) -> None:
    """A row-major n x n field equal to `expected` to TOLERANCE relative to its largest entry."""
    np.testing.assert_allclose(np.reshape(published, expected.shape), expected, rtol=0,
                               atol=TOLERANCE * np.abs(expected).max(), err_msg=name)


def test_compute_service_answers_the_derivatives(harness, robot) -> None:
    """derivatives: ∂τ/∂q and ∂τ/∂q̇ at the answer's q̈, ∂q̈/∂q and ∂q̈/∂q̇ at the effort sent,
    as Robot's; without an effort ∂τ at q̈ = 0 and no ∂q̈; none unless asked; refused with
    external wrenches, naming both fields, and the next request is answered."""
    client = harness.peer.create_client(ComputeDynamics, "compute_dynamics")
    assert client.wait_for_service(timeout_sec=20.0)
    q, qd, tau = state(8, robot.nv)
    request = ComputeDynamics.Request(state=joint_state(robot, q, qd, tau), derivatives=True)
    response = client.call(request, timeout_sec=COMPILE_PATIENCE)
    assert response.success, response.message
    inverse = robot.inverse_dynamics_derivatives(q, qd, np.array(response.joint_space.acceleration))
    forward = robot.forward_dynamics_derivatives(q, qd, tau)
    for name, expected in zip(DERIVATIVES, (*inverse[:2], *forward[:2]), strict=True):
        assert_matrix(getattr(response, name), expected, name)

    request.state.effort = []
    without_effort = client.call(request, timeout_sec=20.0)
    assert without_effort.success, without_effort.message
    inverse = robot.inverse_dynamics_derivatives(q, qd, np.zeros(robot.nv))
    assert_matrix(without_effort.dtau_dq, inverse.dtau_dq, "dtau_dq at q̈ = 0")
    assert_matrix(without_effort.dtau_dv, inverse.dtau_dv, "dtau_dv at q̈ = 0")
    assert not (without_effort.dvdot_dq or without_effort.dvdot_dv)

    request.derivatives = False
    plain = client.call(request, timeout_sec=20.0)
    assert plain.success and not any(getattr(plain, name) for name in DERIVATIVES)

    request.derivatives = True
    push = WrenchStamped()
    push.header.frame_id, push.wrench.force.x = TIP, 5.0
    request.external_wrenches = [push]
    refused = client.call(request, timeout_sec=20.0)
    assert not refused.success
    assert "derivatives" in refused.message and "external_wrenches" in refused.message
    request.external_wrenches = []
    assert client.call(request, timeout_sec=20.0).success
    harness.peer.destroy_client(client)


def test_quantities_choose_what_is_published(ros, robot) -> None:
    """quantities: only M here, then everything again, changed at run time."""
    h = Harness(
        ros, robot_description=PANDA.read_text(), frames=[TIP], quantities=["mass_matrix"]
    )
    try:
        q, qd, tau = state(4, robot.nv)
        assert h.publish_until(joint_state(robot, q, qd, tau), lambda: len(h.joint_space) > 2)
        message = h.joint_space[-1]
        assert len(message.mass_matrix) == robot.nv**2
        assert not (message.bias_forces or message.gravity_torques or message.acceleration)
        assert not h.operational_space
        refused = h.node.set_parameters([Parameter("quantities", value=["jerk"])])[0]
        assert not refused.successful and "jerk" in refused.reason
        h.node.set_parameters([Parameter("quantities", value=["bias_forces", "operational_space"])])
        assert h.publish_until(joint_state(robot, q, qd, tau), lambda: h.operational_space)
        message = h.joint_space[-1]
        assert not message.mass_matrix and len(message.bias_forces) == robot.nv
    finally:
        h.close()


@pytest.mark.parametrize(
    ("corrupt", "expected"),
    [
        (lambda m: m.position.__setitem__(2, float("nan")), "non-finite"),
        (lambda m: m.velocity.pop(), "velocity has 7 entries for 8 names"),
        (lambda m: setattr(m, "name", ["a", *m.name[2:], "b"]),
         "no state of joint(s) panda_joint7 (never heard)"),
    ],
    ids=["nan", "wrong-length", "unknown-names"],
)
def test_bad_joint_states_give_a_diagnostic_and_the_node_keeps_serving(
    harness, robot, corrupt, expected
) -> None:
    q, qd, _ = state(3, robot.nv)
    bad = joint_state(robot, q, qd)
    corrupt(bad)
    assert harness.publish_until(
        bad,
        lambda: any(
            s.level == DiagnosticStatus.WARN and expected in s.message for s in harness.diagnostics
        ),
    ), f"no WARN diagnostic with '{expected}': {[s.message for s in harness.diagnostics]}"
    assert not harness.joint_space, "a bad joint state was published as dynamics"
    assert harness.publish_until(joint_state(robot, q, qd), lambda: bool(harness.joint_space))


def test_robot_description_from_the_topic_and_a_bad_one_is_refused(ros, robot) -> None:
    harness = Harness(ros, diagnostic_period=0.2)
    try:
        assert wait_for(
            lambda: any(s.level == DiagnosticStatus.ERROR for s in harness.diagnostics)
        ), "no ERROR diagnostic without a robot description"
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        description = harness.peer.create_publisher(String, "robot_description", latched)
        description.publish(String(data=PANDA.read_text()))
        q, qd, _ = state(4, robot.nv)
        assert harness.publish_until(joint_state(robot, q, qd), lambda: bool(harness.joint_space))
        result = harness.node.set_parameters(
            [Parameter("robot_description", value="<robot name='broken'><link/></robot>")]
        )[0]
        assert not result.successful and "does not load" in result.reason
        result = harness.node.set_parameters([Parameter("frames", value=["nowhere"])])[0]
        assert not result.successful and "nowhere" in result.reason
        result = harness.node.set_parameters([Parameter("mass_matrix_method", value="x")])[0]
        assert not result.successful
        assert harness.node.robot is not None and harness.node.robot.nv == robot.nv
    finally:
        harness.close()


LISTENER = textwrap.dedent(
    """
    import sys, time
    import rclpy
    from robodyn_interfaces.msg import JointSpaceDynamics

    rclpy.init()
    node = rclpy.create_node("dynamics_listener")
    received = []
    node.create_subscription(JointSpaceDynamics, "dynamics/joint_space", received.append, 10)
    deadline = time.monotonic() + 30.0
    while len(received) < 3 and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
    print(len(received), len(received[-1].mass_matrix) if received else 0, flush=True)
    rclpy.shutdown()
    """
)


def test_another_process_receives_the_dynamics(harness, robot) -> None:
    listener = subprocess.Popen(
        [sys.executable, "-c", LISTENER], env=os.environ.copy(), stdout=subprocess.PIPE, text=True
    )
    q, qd, _ = state(5, robot.nv)
    message = joint_state(robot, q, qd)
    harness.publish_until(message, lambda: listener.poll() is not None, timeout=40.0)
    output, _ = listener.communicate(timeout=10)
    count, entries = (int(x) for x in output.split())
    assert count >= 3 and entries == robot.nv**2


def test_pose_orientation_matches_the_rotation() -> None:
    """quaternion_from_rotation against scipy on random rotations, every branch included."""
    from scipy.spatial.transform import Rotation

    from robodyn_ros.ros.conversions import quaternion_from_rotation

    rotations = Rotation.random(200, random_state=0)
    half_turns = Rotation.from_rotvec(np.pi * np.eye(3))  # trace −1: the other branches
    for rotation in [*rotations, *half_turns]:
        expected = rotation.as_quat()
        expected = expected if expected[3] >= 0 else -expected
        got = quaternion_from_rotation(rotation.as_matrix().tolist())
        assert np.allclose(got, expected, atol=1e-12) or np.allclose(got, -expected, atol=1e-12)


def test_dynamics_node_serves_each_method(ros, load_robot) -> None:
    """dynamics_node over real DDS with operational_space_method "recursive": compute_dynamics
    answers as Robot.operational_space by the method the request names, frame by frame;
    "schur" is refused, with the reason, for a frame on the fixed base, as a request and as a
    parameter."""
    robot: Robot = load_robot("bundled_panda")
    harness = Harness(ros, robot_description=PANDA.read_text(), frames=[TIP],
                      operational_space_method="recursive")
    try:
        client = harness.peer.create_client(ComputeDynamics, "compute_dynamics")
        assert client.wait_for_service(timeout_sec=20.0)
        q, qd, _ = state(7, robot.nv)
        request = ComputeDynamics.Request(frames=[TIP], state=joint_state(robot, q, qd))
        for method in ("", "schur"):
            request.operational_space_method = method
            response = client.call(request, timeout_sec=COMPILE_PATIENCE)
            assert response.success, response.message
            served = operational_space_dynamics(response.operational_space[0])
            expected = robot.operational_space(q, qd, TIP, method or "recursive",
                                               singular_threshold=1e-4)
            for name in ("Lambda_inv", "Lambda", "Jbar", "mu"):
                np.testing.assert_allclose(getattr(served, name), getattr(expected, name),
                                           rtol=1e-12, err_msg=f"{method} {name}")
        request.frames = [TIP, "panda_link0"]
        response = client.call(request, timeout_sec=COMPILE_PATIENCE)
        assert not response.success and "panda_link0" in response.message
        harness.node.set_parameters([Parameter("frames", value=[TIP, "panda_link0"])])
        result = harness.node.set_parameters(
            [Parameter("operational_space_method", value="schur")]
        )[0]
        assert not result.successful and "frame 'panda_link0'" in result.reason
        harness.peer.destroy_client(client)
    finally:
        harness.close()
