"""`robodyn bag record` in a process of its own over real DDS: what a publisher sends while
it records is in the bag, message for message (the bytes read back with rosbags equal what was
sent), after SIGINT, SIGTERM or its duration; the bag then analyses as a recorded run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.bag import AnalysisOptions, analyze_bag
from robodyn_ros.bag.reading import open_bag
from robodyn_ros.bag.typestore import typestore

from helpers.node_process import node_env
from helpers.nodes import panda_state, wait_for
from helpers.robots import PANDA, Q0

ROBODYN = os.path.join(os.path.dirname(sys.executable), "robodyn")
SENT = 60


def recorder(tmp_path: Path, *options: str) -> subprocess.Popen:
    return subprocess.Popen([ROBODYN, "bag", "record", str(tmp_path / "run"), *options],
                            env=node_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def send_states(ros, process: subprocess.Popen) -> list[np.ndarray]:
    """SENT joint states at 100 Hz (reliable, effort included) once the recorder listens; the
    positions sent."""
    node = ros.create_node("bag_record_test")
    try:
        publisher = node.create_publisher(JointState, "joint_states", QoSProfile(depth=SENT))
        assert wait_for(lambda: publisher.get_subscription_count() > 0, 120.0), \
            process.stderr.read() if process.poll() is not None else "never subscribed"
        sent = []
        for k in range(SENT):
            q = np.array(Q0) + 1e-3 * k
            message = panda_state(q, effort=np.sin(q))
            message.header.stamp.sec, message.header.stamp.nanosec = 100, 10_000_000 * k
            publisher.publish(message)
            sent.append(q)
            time.sleep(0.01)
        time.sleep(0.5)  # the last ones written
        return sent
    finally:
        node.destroy_node()


def recorded_positions(bag: Path) -> list[np.ndarray]:
    store = typestore()
    with open_bag(bag) as reader:
        return [np.array(store.deserialize_cdr(raw, connection.msgtype).position)
                for connection, _, raw in reader.messages()]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_every_message_sent_while_recording_is_in_the_bag(ros, tmp_path, signum) -> None:
    process = recorder(tmp_path, "--topics", "/joint_states", "dynamics/joint_space")
    try:
        sent = send_states(ros, process)
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert f"{SENT} of /joint_states" in out, out
    assert "Traceback" not in err, err
    recorded = recorded_positions(tmp_path / "run")
    assert len(recorded) == SENT
    assert all(np.array_equal(a, b) for a, b in zip(recorded, sent, strict=True))
    robot = Robot.from_urdf_string(PANDA)
    outputs = analyze_bag(tmp_path / "run", robot, AnalysisOptions(
        plots=False, dynamics_bag=False, output=tmp_path / "analysis"))
    assert "joint_states" in outputs.report


def test_recording_ends_after_its_duration(ros, tmp_path) -> None:
    process = recorder(tmp_path, "--duration", "1.0", "--storage", "mcap")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "nothing (no topic was published)" in out, out
    assert recorded_positions(tmp_path / "run") == []


def test_an_existing_folder_is_refused_by_name(tmp_path) -> None:
    (tmp_path / "run").mkdir()
    process = recorder(tmp_path, "--duration", "0.1")
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    assert f"bag {tmp_path / 'run'}: already exists" in err, err


def test_a_name_that_is_not_a_topic_is_refused_by_name(tmp_path) -> None:
    process = recorder(tmp_path, "--topics", "/joint_states", "bad name", "--duration", "5")
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    assert "topic 'bad name': not a topic name" in err, err
    assert not (tmp_path / "run").exists()
