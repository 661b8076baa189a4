"""Hostile traffic over real DDS: every node, sent empty, non-finite, huge, mis-sized and
misnamed input, floods, robot swaps (another robot, a URDF that does not load, a tip that
moves no mass) and bad service requests or action goals, stays alive, says why in its
diagnostics, and answers the next good message."""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import PoseStamped
from rclpy.action import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from robodyn_interfaces.action import Preview
from robodyn_interfaces.msg import PreviewScenario
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robodyn_ros import Robot
from robodyn_ros.model import URDFWarning
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.guard import OK, WARN, NodeHealth
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.sim_node import SimNode

from helpers.nodes import (
    PATIENCE,
    Peer,
    Spinning,
    dynamics_answer,
    dynamics_peer,
    panda_state,
    wait_for,
)
from helpers.robots import CHAIN, MASSLESS, PANDA, Q0, TIP

BROKEN = "<robot name='broken'><link/></robot>"
FLOOD = 2000


def with_field(field: str, index: int, value: float) -> JointState:
    message = panda_state(effort=[0.0] * 7)
    values = list(getattr(message, field))
    values[index] = value
    setattr(message, field, values)
    return message


NAN, INF = float("nan"), float("inf")
# (what is sent, the reason expected in the diagnostics)
HOSTILE_STATES = {
    "empty": (JointState(), "name is empty"),
    "no-names": (JointState(position=Q0), "name is empty"),
    "nan-position": (with_field("position", 2, NAN),
                     "position is non-finite (NaN or inf) for joint(s) panda_joint3"),
    "inf-velocity": (with_field("velocity", 0, INF),
                     "velocity is non-finite (NaN or inf) for joint(s) panda_joint1"),
    "nan-effort": (with_field("effort", 6, NAN),
                   "effort is non-finite (NaN or inf) for joint(s) panda_joint7"),
    "huge-velocity": (with_field("velocity", 1, 1e300), "not finite"),
    "wrong-size": (JointState(name=panda_state().name, position=Q0[:5]),
                   "position has 5 entries for 7 names"),
    "unknown-names": (panda_state(names=[f"j{k}" for k in range(7)]),
                      "no state of joint(s) panda_joint1 ("),
}


# -- dynamics_node ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dynamics(ros):
    peer = dynamics_peer(ros)
    yield peer
    peer.close()


@pytest.mark.parametrize("case", list(HOSTILE_STATES))
def test_dynamics_node_refuses_hostile_joint_states(dynamics, case) -> None:
    message, reason = HOSTILE_STATES[case]
    assert dynamics.until_reported(
        lambda: dynamics.publish(JointState, "joint_states", message), reason
    ), f"no diagnostic with '{reason}': {[s.message for s in dynamics.statuses[-3:]]}"
    assert dynamics_answer(dynamics), "no answer to a good state after the bad ones"
    assert all(np.isfinite(m.bias_forces).all() for m in dynamics.answers)


def test_dynamics_node_answers_the_newest_of_a_flood(dynamics) -> None:
    rng = np.random.default_rng(0)
    since = len(dynamics.statuses)
    for _ in range(FLOOD):
        dynamics.publish(JointState, "joint_states", panda_state(rng.uniform(-1, 1, 7)))
    last = [0.1] * 7
    assert dynamics_answer(dynamics, last)
    assert wait_for(lambda: dynamics.reported("faster than they are answered", since=since))

    def counts_settled() -> bool:  # merged states: each of these full messages is one
        sent, states = dynamics.value("joint_states sent"), dynamics.value("joint_states states")
        handled = dynamics.value("joint_states handled")
        return sent and int(sent) >= FLOOD and int(dynamics.value("joint_states superseded")) \
            == int(states) - int(handled)

    assert wait_for(counts_settled), [kv for kv in dynamics.statuses[-1].values]


@pytest.mark.parametrize(("state", "reason"), [
    (JointState(), "state: name is empty"),
    (with_field("position", 3, NAN), "state: position is non-finite (NaN or inf) for joint(s) "
                                     "panda_joint4"),
    (with_field("velocity", 1, 1e300), "not finite"),
], ids=["empty", "nan", "huge"])
def test_compute_dynamics_refuses_bad_requests(dynamics, state, reason) -> None:
    client = dynamics.peer.create_client(ComputeDynamics, "compute_dynamics")
    try:
        assert client.wait_for_service(timeout_sec=PATIENCE)
        bad = client.call(ComputeDynamics.Request(state=state), timeout_sec=PATIENCE)
        assert not bad.success and reason in bad.message, bad.message
        good = client.call(ComputeDynamics.Request(state=panda_state()), timeout_sec=PATIENCE)
        assert good.success and np.isfinite(good.joint_space.mass_matrix).all()
    finally:
        dynamics.peer.destroy_client(client)


def test_dynamics_node_robot_swaps(ros) -> None:
    """Another robot: the frame it lacks is left out (WARN naming it), its joint space is
    served. A URDF that does not load and a tip that moves no mass: refused (ERROR, the
    reason), the robot in service goes on. With only M, b, g published, the massless tip
    is served."""
    peer = dynamics_peer(ros)
    node = peer.node
    try:
        chain = Robot.from_urdf_string(CHAIN)
        peer.description.publish(String(data=CHAIN))
        assert wait_for(lambda: node.robot is not None and node.robot.nv == chain.nv)
        assert wait_for(lambda: peer.reported(f"frame '{TIP}' is not a frame"))
        assert dynamics_answer(peer, [0.1] * chain.nv, list(chain.joint_names))

        peer.description.publish(String(data=PANDA))
        assert wait_for(lambda: node.robot is not None and node.robot.nv == 7)
        for urdf, reason in ((BROKEN, "does not load"), (MASSLESS, "panda_joint7")):
            peer.description.publish(String(data=urdf))
            assert wait_for(lambda r=reason: peer.reported(r, DiagnosticStatus.ERROR)), reason
            assert dynamics_answer(peer), f"the panda is not served after {reason}"
            assert node.robot.model.name == "panda" and node.robot.mass_matrix(
                np.zeros(7))[6, 6] > 0.0  # still the panda with its hand

        joint_space = ["mass_matrix", "bias_forces", "gravity_torques"]
        assert node.set_parameters([Parameter("quantities", value=joint_space)])[0].successful
        result = node.set_parameters([Parameter("robot_description", value=MASSLESS)])[0]
        assert result.successful, result.reason
        assert dynamics_answer(peer)
        refused = node.set_parameters([Parameter("quantities", value=["acceleration"])])[0]
        assert not refused.successful and "panda_joint7" in refused.reason
    finally:
        peer.close()


# -- sim_node -----------------------------------------------------------------------------------


def test_sim_node_survives_hostile_commands_floods_and_swaps(ros) -> None:
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA), Parameter("initial_positions", value=Q0),
        Parameter("diagnostic_period", value=0.2)])
    peer = Peer(ros, node)
    states: list[JointState] = []
    peer.peer.create_subscription(JointState, "joint_states", states.append, 100)

    def simulating(n: int = 7) -> bool:
        count = len(states)
        return wait_for(lambda: len(states) > count + 5 and len(states[-1].position) == n
                        and np.isfinite(states[-1].position).all())

    def command(values) -> Callable[[], None]:
        return lambda: peer.publish(Float64MultiArray, "effort_commands",
                                    Float64MultiArray(data=values))

    try:
        assert simulating()
        for values, reason in (([], "expected 7 values"), ([0.0] * 6, "expected 7 values"),
                               ([NAN] + [0.0] * 6, "non-finite value (NaN or inf) for "
                                                   "panda_joint1"),
                               ([0.0] * 6 + [INF], "for panda_joint7")):
            assert peer.until_reported(command(values), reason), reason
            assert simulating()
        command([1e300] * 7)()  # finite: clipped to the effort limits
        assert simulating()
        assert np.all(np.abs(states[-1].effort) < 1e3)

        for k in range(FLOOD):
            command([1e-3 * (k % 7)] * 7)()
        assert simulating()
        assert wait_for(lambda: peer.value("effort_commands sent")
                        and int(peer.value("effort_commands sent")) >= FLOOD)

        chain = Robot.from_urdf_string(CHAIN)
        peer.description.publish(String(data=CHAIN))
        assert simulating(chain.nv)
        for urdf, reason in ((BROKEN, "does not load"), (MASSLESS, "panda_joint7")):
            peer.description.publish(String(data=urdf))
            assert wait_for(lambda r=reason: peer.reported(r, DiagnosticStatus.ERROR)), reason
            assert simulating(chain.nv), f"the simulation stopped after {reason}"
    finally:
        node.stop()
        peer.close()


# -- controller_node ----------------------------------------------------------------------------


def test_controller_node_survives_hostile_inputs_floods_and_swaps(ros) -> None:
    node = ControllerNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA),
        Parameter("controller", value="operational_space"),
        Parameter("controller_parameters.frame", value=TIP),
        Parameter("diagnostic_period", value=0.2)])
    peer = Peer(ros, node)
    efforts: list[Float64MultiArray] = []
    peer.peer.create_subscription(Float64MultiArray, "effort_commands", efforts.append, 100)

    def controlling() -> bool:
        def answered() -> bool:
            peer.publish(JointState, "joint_states", panda_state())
            time.sleep(0.05)
            return bool(efforts) and np.isfinite(efforts[-1].data).all()

        efforts.clear()
        return wait_for(answered)

    def bad_pose() -> PoseStamped:
        pose = PoseStamped()
        pose.pose.position.x = NAN
        pose.pose.orientation.w = 1.0
        return pose

    try:
        assert controlling()
        for case in ("empty", "nan-position", "huge-velocity", "wrong-size", "unknown-names"):
            message, reason = HOSTILE_STATES[case]
            assert peer.until_reported(
                lambda m=message: peer.publish(JointState, "joint_states", m), reason), case
            assert controlling(), case
        assert peer.until_reported(
            lambda: peer.publish(PoseStamped, "target_pose", bad_pose()),
            "target_pose: position is not finite")
        assert peer.until_reported(
            lambda: peer.publish(JointState, "target_joints", HOSTILE_STATES["empty"][0]),
            "target_joints: name is empty")
        for _ in range(FLOOD):
            peer.publish(JointState, "joint_states", panda_state())
        assert controlling()
        assert wait_for(lambda: peer.value("joint_states sent")
                        and int(peer.value("joint_states sent")) >= FLOOD)

        for urdf, reason in ((CHAIN, TIP), (BROKEN, "does not load"),
                             (MASSLESS, "panda_joint7")):
            peer.description.publish(String(data=urdf))
            assert wait_for(lambda r=reason: peer.reported(r, DiagnosticStatus.ERROR)), reason
            assert controlling(), f"no efforts for the panda after {reason}"
    finally:
        peer.close()


SILENT_SERVICE = "silent_first_call/compute_dynamics"  # not the module's dynamics node's


class SilentFirstCall:
    """A compute_dynamics service (SILENT_SERVICE) that never answers its first call (an
    answer lost) and answers the others with the panda's joint-space dynamics (from Robot: the
    oracle of the efforts), in an executor of its own that serves a call while the first one
    hangs."""

    def __init__(self, ros) -> None:
        self.robot = Robot.from_urdf_string(PANDA)
        self.calls = 0
        self.release = threading.Event()
        self.node = ros.create_node("silent_first_call_test")
        self.node.create_service(ComputeDynamics, SILENT_SERVICE, self._answer,
                                 callback_group=ReentrantCallbackGroup())
        executor = MultiThreadedExecutor(num_threads=2)
        executor.add_node(self.node)
        self.spinning = Spinning(executor)

    def _answer(self, request, response):
        self.calls += 1
        if self.calls == 1:
            self.release.wait()
        q = np.array(request.state.position)
        response.joint_space.mass_matrix = self.robot.mass_matrix(q).ravel().tolist()
        response.joint_space.gravity_torques = self.robot.gravity_torques(q).tolist()
        response.joint_space.bias_forces = response.joint_space.gravity_torques
        response.success = True
        return response

    def close(self) -> None:
        self.release.set()
        self.spinning.stop()
        self.node.destroy_node()


def test_controller_node_gives_up_a_compute_dynamics_call_never_answered(ros) -> None:
    """dynamics_source service: the first call's answer never comes; after dynamics_timeout
    the call is given up (WARN) and the newest state asked, whose efforts are g at that
    state. Without it, the efforts would wait for the lost answer for good."""
    timeout = 0.2
    server = SilentFirstCall(ros)
    node = ControllerNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA), Parameter("diagnostic_period", value=0.2),
        Parameter("dynamics_source", value="service"),
        Parameter("dynamics_timeout", value=timeout)],
        cli_args=["--ros-args", "-r", f"compute_dynamics:={SILENT_SERVICE}"])
    peer = Peer(ros, node)
    efforts: list[Float64MultiArray] = []
    peer.peer.create_subscription(Float64MultiArray, "effort_commands", efforts.append, 100)
    q = np.array(Q0)
    try:
        assert wait_for(node._dynamics.service_is_ready)
        peer.publish(JointState, "joint_states", panda_state(q))
        assert wait_for(lambda: server.calls == 1)

        def answered() -> bool:
            peer.publish(JointState, "joint_states", panda_state(q))
            time.sleep(0.02)
            return bool(efforts)

        assert wait_for(answered), "no effort while the first call hangs"
        assert np.allclose(efforts[0].data, server.robot.gravity_torques(q), rtol=0, atol=1e-9)
        assert wait_for(lambda: peer.reported("compute_dynamics call unanswered after 0.2 s"))
    finally:
        peer.close()
        server.close()


# -- preview_node -------------------------------------------------------------------------------


def idle(names) -> PreviewScenario:
    trajectory = JointTrajectory(joint_names=list(names), points=[
        JointTrajectoryPoint(effort=[0.0] * len(names))])
    return PreviewScenario(name="idle", kind=PreviewScenario.TORQUE_PROFILE,
                           frame=TIP, trajectory=trajectory)


def test_preview_node_survives_bad_goals_and_swaps(ros) -> None:
    node = PreviewNode(parameter_overrides=[Parameter("robot_description", value=PANDA),
                                            Parameter("diagnostic_period", value=0.2)])
    peer = Peer(ros, node)
    client = ActionClient(peer.peer, Preview, "preview")
    names = panda_state().name

    def run(goal: Preview.Goal):
        future = client.send_goal_async(goal)
        assert wait_for(future.done)
        result = future.result().get_result_async()
        assert wait_for(result.done)
        return result.result()

    def good() -> Preview.Goal:
        return Preview.Goal(scenarios=[idle(names)], start=panda_state(), horizon=0.01,
                            dt=0.001)

    try:
        assert client.wait_for_server(timeout_sec=PATIENCE)
        for change, reason in (
            ({"scenarios": []}, "scenarios must not be empty"),
            ({"start": HOSTILE_STATES["nan-position"][0]}, "start: position is non-finite"),
            ({"start": HOSTILE_STATES["unknown-names"][0]}, "start: name has no entry"),
            ({"start": HOSTILE_STATES["wrong-size"][0]}, "start: position has 5 entries"),
            ({"horizon": NAN}, "horizon must be a number > 0"),
        ):
            goal, since = good(), len(peer.statuses)
            for field, value in change.items():
                setattr(goal, field, value)
            response = run(goal)
            assert response.status == 6 and reason in response.result.message, \
                response.result.message  # ABORTED
            assert wait_for(lambda r=reason, s=since: peer.reported(r, since=s)), reason
            assert run(good()).status == 4  # SUCCEEDED

        for urdf, reason in ((BROKEN, "does not load"), (MASSLESS, "panda_joint7")):
            peer.description.publish(String(data=urdf))
            assert wait_for(lambda r=reason: peer.reported(r, DiagnosticStatus.ERROR)), reason
            assert run(good()).status == 4, f"no preview of the panda after {reason}"
        chain = Robot.from_urdf_string(CHAIN)
        peer.description.publish(String(data=CHAIN))
        assert wait_for(lambda: node.robot is not None and node.robot.nv == chain.nv)
        response = run(good())  # the panda's goal on the chain: refused with the reason
        assert response.status == 6 and response.result.message
    finally:
        client.destroy()
        peer.close()


@pytest.fixture(autouse=True)
def _quiet_massless_warning():
    """The massless tip's URDFWarning is the point of those tests."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=URDFWarning)
        yield


def test_a_condition_held_every_cycle_is_logged_once() -> None:
    """A standing condition set again with the same reason (each cycle, say) is logged when it
    begins, not each time; a new reason is logged (throttled as refusals are)."""
    lines = []

    class Logger:
        def warning(self, text: str) -> None:
            lines.append(text)

        error = warning

    health = NodeHealth(Logger())
    for _ in range(100):
        health.hold_condition("mimic", WARN, "finger off its rule")
    assert lines == ["finger off its rule"]
    health.hold_condition("mimic", WARN, "")
    status = health.status("node: task", "", OK, "computing", {})
    assert status.level == OK and status.message == "computing"
