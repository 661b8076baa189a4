"""The harness of the tests over real DDS: a node under test spun with a test node that hears
its diagnostics and publishes what the test sends (`Peer`), dynamics_node on the panda and its
published answers, the other nodes on the panda, service calls, and waiting with a bound."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import Executor, MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from robodyn_interfaces.msg import JointSpaceDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from robodyn_ros import Robot
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.robot_node import spin_until
from robodyn_ros.ros.sim_node import SimNode

from helpers.robots import PANDA, PANDA_JOINTS, Q0, TIP

PATIENCE = 30.0  # s: bounds a failure, not the speed (DDS here pauses for seconds at times)
TOLERANCE = 1e-10  # M and q̈ against Pinocchio, relative to their largest entry


def wait_for(done: Callable[[], bool], timeout: float = PATIENCE) -> bool:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    return bool(done())


class Spinning:
    """`executor` spun in a thread of its own until stop(), which joins that thread before it
    shuts the executor down (robot_node.spin_until): a spin under way when the executor is
    shut down would meet its destroyed guard condition."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._stop = threading.Event()
        self._thread = threading.Thread(target=spin_until, args=(executor, self._stop),
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self.executor.shutdown(timeout_sec=5.0)


class Peer:
    """A node under test and a test node, spun by one MultiThreadedExecutor in a thread; the
    test node hears the node's /diagnostics and publishes what the test sends."""

    def __init__(self, ros, node) -> None:
        self.node = node
        self.peer = ros.create_node(f"{node.get_name()}_faults_test")
        self.statuses: list[DiagnosticStatus] = []
        self.peer.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 50)
        self._publishers = {}
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.description = self.peer.create_publisher(String, "robot_description", latched)
        executor = MultiThreadedExecutor(num_threads=2)
        executor.add_node(node)
        executor.add_node(self.peer)
        self.executor = executor  # a test may add a node of its own
        self.spinning = Spinning(executor)

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        name = self.node.get_fully_qualified_name().lstrip("/")
        self.statuses += [s for s in message.status if s.name.split(":")[0] == name]

    def publish(self, kind, topic: str, message) -> None:
        if topic not in self._publishers:
            self._publishers[topic] = self.peer.create_publisher(kind, topic, 100)
            wait_for(lambda: self._publishers[topic].get_subscription_count() > 0)
        self._publishers[topic].publish(message)

    def reported(self, text: str, level=DiagnosticStatus.WARN, since: int = 0) -> bool:
        """Whether a status since index `since` has `level` or worse and `text` in its
        message or values."""
        return any(
            s.level >= level and (text in s.message or any(text in kv.value for kv in s.values))
            for s in self.statuses[since:]
        )

    def until_reported(self, send: Callable[[], None], text: str,
                       level=DiagnosticStatus.WARN) -> bool:
        """send() every 50 ms until a new status reports `text` at `level` or worse."""
        since = len(self.statuses)

        def sent_and_reported() -> bool:
            send()
            time.sleep(0.05)
            return self.reported(text, level, since)

        return wait_for(sent_and_reported)

    def value(self, key: str) -> str:
        """The latest value of `key` in the node's diagnostics."""
        for status in reversed(self.statuses):
            for kv in status.values:
                if kv.key == key:
                    return kv.value
        return ""

    def close(self) -> None:
        self.spinning.stop()
        self.node.destroy_node()
        self.peer.destroy_node()


def panda_state(q=Q0, qd=None, effort=None, names=None) -> JointState:
    names = names or PANDA_JOINTS
    message = JointState(name=names, position=list(q))
    message.velocity = list(qd) if qd is not None else [0.0] * len(q)
    if effort is not None:
        message.effort = list(effort)
    return message


def dynamics_peer(ros, *parameters: Parameter) -> Peer:
    """A DynamicsNode on the panda with `parameters` (default: the tcp frame); the Peer
    collects its joint-space answers in `answers`."""
    node = DynamicsNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA), Parameter("diagnostic_period", value=0.2),
        *(parameters or (Parameter("frames", value=[TIP]),))])
    peer = Peer(ros, node)
    peer.answers = []
    peer.peer.create_subscription(JointSpaceDynamics, "dynamics/joint_space",
                                  peer.answers.append, 100)
    return peer


def dynamics_answer(peer: Peer, q=Q0, names=None) -> bool:
    """A good state is answered (published with its position) after what went before."""
    def answered() -> bool:
        peer.publish(JointState, "joint_states", panda_state(q, names=names))
        time.sleep(0.05)
        return any(len(m.position) == len(q) and np.allclose(m.position, q)
                   for m in peer.answers[-5:])  # an answer for the robot before may be late

    peer.answers.clear()
    return wait_for(answered)


def published_answer(peer: Peer, q: np.ndarray, effort) -> JointSpaceDynamics:
    """The JointSpaceDynamics the node publishes for the state (q, q̇ = 0, effort); q is new
    to the node, so that an answer computed before a change cannot pass for one after it."""
    peer.answers.clear()

    def answer():
        return next((m for m in peer.answers if np.array_equal(m.position, q)), None)

    def answered() -> bool:
        peer.publish(JointState, "joint_states", panda_state(q, effort=effort))
        return wait_for(lambda: answer() is not None, 0.2)

    assert wait_for(answered)
    return answer()


STATES = itertools.count(1)


def new_state() -> np.ndarray:
    """Q0 moved by a step no earlier call made."""
    q = np.array(Q0)
    q[0] += 1e-3 * next(STATES)
    return q


@contextmanager
def panda_node(kind, *parameters: Parameter) -> Iterator[tuple[Node, Callable[[], Robot]]]:
    """A sim_node, controller_node or preview_node on the panda with `parameters`: the node
    and a function giving the robot it uses (the simulated one for sim_node)."""
    overrides = [Parameter("robot_description", value=PANDA), *parameters]
    if kind is ControllerNode:
        overrides.append(Parameter("controller", value="gravity_compensation"))
    node = kind(parameter_overrides=overrides)
    try:
        yield node, (lambda: node.sim.robot if kind is SimNode else node.robot)
    finally:
        if kind is SimNode:
            node.stop()
        node.destroy_node()


def call(peer: Peer, kind, service: str, request):
    client = peer.peer.create_client(kind, service)
    try:
        assert client.wait_for_service(timeout_sec=PATIENCE), service
        future = client.call_async(request)
        assert wait_for(future.done)
        return future.result()
    finally:
        peer.peer.destroy_client(client)


def goal_response(client, goal, feedback=None):
    """(goal handle, the GetResult response) of an action goal once it ends; the response
    None if the goal was not accepted."""
    future = client.send_goal_async(goal, feedback_callback=feedback)
    assert wait_for(future.done), "no goal response"
    handle = future.result()
    if not handle.accepted:
        return handle, None
    result = handle.get_result_async()
    assert wait_for(result.done), "no result"
    return handle, result.result()


def listening(ros, node: SimNode, **topics) -> Peer:
    """A Peer of the node (made with autostart false) keeping each topic's messages (name →
    type) in peer.<name>; the node configured and activated once the Peer hears them all, so
    that it has every message from the first."""
    peer = Peer(ros, node)
    for name, kind in topics.items():
        setattr(peer, name, [])
        peer.peer.create_subscription(kind, name, getattr(peer, name).append, 1000)
    node.trigger_configure()
    assert wait_for(lambda: all(node.count_subscribers(name) > 0 for name in topics))
    node.trigger_activate()
    return peer


def stopped(peer: Peer) -> None:
    """The sim_node of `peer` stopped, the Peer closed."""
    peer.node.stop()
    peer.close()

