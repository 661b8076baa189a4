"""`robodyn bag replay` over real DDS: a subscriber in this process receives the recorded
joint states in order, unchanged, with /clock at the recorded times; dynamics_node processes a
replayed run live."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import JointSpaceDynamics
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from robodyn_ros.bag import BagError, JointStateSeries, write_joint_states
from robodyn_ros.bag.typestore import typestore
from robodyn_ros.bag.writing import open_writer
from robodyn_ros.ros.bag_replay import BagPlayer
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.testing.trajectories import sine_trajectory

from helpers.cases import BUNDLED_PANDA, robot_named

SAMPLES, PERIOD = 40, 0.01  # a 0.4 s run at 100 Hz
RATE = 2.0
START = 1_700_000_000 * 10**9
NAMES = ["joint_a", "joint_b", "joint_c"]


@pytest.fixture(scope="module")
def bag(tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "run"
    stamps = START + np.arange(SAMPLES) * int(PERIOD * 1e9)
    position = np.linspace(0.0, 1.0, SAMPLES * 3).reshape(SAMPLES, 3)
    write_joint_states(path, "mcap",
                       JointStateSeries(NAMES, stamps, position, -position, 2 * position))
    return path, stamps, position


def play_while_spinning(nodes: list, player_node, bag, received: list, rate: float = 1.0):
    """Spin `nodes` in a thread, play the bag's joint states from `player_node` once a
    subscriber is there, wait (20 s at most) until `received` holds SAMPLES messages, then
    destroy every node."""
    executor = MultiThreadedExecutor(num_threads=2)
    for node in nodes:
        executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        player = BagPlayer(player_node, bag, "/joint_states", rate=rate)
        assert player.wait_for_subscribers(20.0), "no subscriber discovered in 20 s"
        assert player.play() == SAMPLES
        deadline = time.monotonic() + 20.0
        while len(received) < SAMPLES and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        executor.shutdown(timeout_sec=5.0)
        spinner.join(timeout=5.0)
        for node in {*nodes, player_node}:
            node.destroy_node()


def nanoseconds(stamp) -> int:
    return stamp.sec * 10**9 + stamp.nanosec


def test_replay_publishes_the_recorded_messages_in_order(ros, bag) -> None:
    path, stamps, position = bag
    received, clocks = [], []
    listener = ros.create_node("bag_replay_listener")
    listener.create_subscription(JointState, "/joint_states", received.append, 100)
    listener.create_subscription(Clock, "/clock", clocks.append, 100)
    play_while_spinning([listener], ros.create_node("bag_replay_test"), path, received, RATE)
    assert [nanoseconds(m.header.stamp) for m in received] == stamps.tolist()
    np.testing.assert_array_equal([m.position for m in received], position)
    np.testing.assert_array_equal([m.effort for m in received], 2 * position)
    assert all(list(m.name) == NAMES for m in received)
    # /clock at the recorded times (its first ones may go out before /clock is discovered)
    clock = [nanoseconds(c.clock) for c in clocks]
    assert len(clock) > SAMPLES // 2 and clock == stamps.tolist()[SAMPLES - len(clock) :]


def test_replay_names_a_missing_topic(ros, bag) -> None:
    node = ros.create_node("bag_replay_missing")
    try:
        with pytest.raises(BagError, match=r"no topic '/arm/joint_states'.*/joint_states"):
            BagPlayer(node, bag[0], "/arm/joint_states")
        with pytest.raises(ValueError, match="rate must be positive"):
            BagPlayer(node, bag[0], "/joint_states", rate=0.0)
    finally:
        node.destroy_node()


def test_replay_refuses_a_topic_of_several_types(ros, tmp_path) -> None:
    """rosbags gives a topic whose connections have different types no msgtype: a BagError
    naming the topic, not an attempt to publish it."""
    bag, store = tmp_path / "mixed", typestore()
    with open_writer(bag, "mcap") as writer:
        for stamp, (kind, data) in enumerate((("String", "text"), ("Int32", 1)), start=1):
            msgtype = f"std_msgs/msg/{kind}"
            connection = writer.add_connection("/mixed", msgtype, typestore=store)
            message = store.types[msgtype](data=data)
            writer.write(connection, stamp, store.serialize_cdr(message, msgtype))
    node = ros.create_node("bag_replay_mixed")
    try:
        with pytest.raises(BagError, match=r"topic '/mixed' was recorded with messages of "
                                           "different types"):
            BagPlayer(node, bag, "/mixed")
    finally:
        node.destroy_node()


def test_dynamics_node_processes_a_replayed_run(ros, tmp_path) -> None:
    """Efforts recorded as RNEA(q, q̇, q̈) of a known trajectory: the node's q̈ = M⁻¹(τ − b)
    for each replayed joint state gives back the trajectory's q̈, under the joint state's stamp."""
    robot = robot_named("bundled_panda")
    trajectory = sine_trajectory(robot, SAMPLES, 1 / PERIOD)
    effort = robot.inverse_dynamics(trajectory.q, trajectory.qd, trajectory.qdd)
    bag = tmp_path / "run"
    write_joint_states(bag, "sqlite3",
                       JointStateSeries(robot.joint_names, trajectory.stamps, trajectory.q,
                                        trajectory.qd, effort))
    node = DynamicsNode(parameter_overrides=[
        Parameter("robot_description", value=BUNDLED_PANDA.read_text()),
        Parameter("quantities", value=["acceleration"]),
    ])
    peer = ros.create_node("bag_replay_dynamics_peer")
    answers: list[JointSpaceDynamics] = []
    peer.create_subscription(JointSpaceDynamics, "dynamics/joint_space", answers.append, 100)
    play_while_spinning([node, peer], peer, bag, answers)
    # the node takes joint states newest first: a state superseded before its turn (two
    # arrivals in one cycle on a busy machine) is counted, not answered; the rest come in order
    stamps = [nanoseconds(m.header.stamp) for m in answers]
    answered = np.searchsorted(trajectory.stamps, stamps)
    assert stamps == trajectory.stamps[answered].tolist(), "answers under unknown stamps"
    assert np.all(np.diff(answered) > 0), "answers out of order"
    assert answered[-1] == SAMPLES - 1, "the newest state is never superseded"
    np.testing.assert_allclose([m.acceleration for m in answers], trajectory.qdd[answered],
                               atol=1e-9)
