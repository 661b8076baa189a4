"""The node commands docs/ros.md shows ("Starting a node on its own"), run as written from the
repository's root: each node serves the robot of its robot_description_file. A file that
cannot be found, or a package the ament index lacks, is an ERROR naming it, and the node
keeps running. And its `robodyn launch dynamics` command ("Launch files") serves the topic it
names."""

from __future__ import annotations

import shlex
import signal

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus

from helpers.docs import ROOT, page_commands
from helpers.launched import Launched, Listener, dynamics_answer
from helpers.node_process import NodeProcess
from helpers.nodes import wait_for
from helpers.robots import Q0

VENV_BIN = ".venv/bin/"
ROS_MD = page_commands(ROOT / "docs" / "ros.md")
COMMANDS = [words for words in ROS_MD
            if words[0].startswith(VENV_BIN) and words[0].endswith("_node")]
REMAPPED = "joint_states:=/arm/joint_states"


def test_ros_md_shows_how_to_start_each_node() -> None:
    assert sorted(words[0].removeprefix(VENV_BIN) for words in COMMANDS) == [
        "controller_node", "dynamics_node", "preview_node", "sim_node"]


@pytest.mark.parametrize("words", COMMANDS, ids=lambda words: words[0].removeprefix(VENV_BIN))
def test_a_documented_node_command_serves_its_robot(ros, tmp_path, words) -> None:
    assert words[1] == "--ros-args", words
    node = NodeProcess(ros, words[0].removeprefix(VENV_BIN), words[2:], tmp_path, cwd=ROOT)
    try:
        assert node.serving(), f"`{shlex.join(words)}` never served"
        assert not node.reported("", DiagnosticStatus.ERROR)
    finally:
        node.close()


@pytest.mark.parametrize(("location", "reason"), [
    ("no/such/robot.urdf", "'no/such/robot.urdf' does not load (FileNotFoundError"),
    ("package://no_such_package/urdf/robot.urdf", "package 'no_such_package'"),
    ("package://robodyn_ros", "a package URI is package://<package>/<path in its share"),
])
def test_a_description_file_that_cannot_be_read_is_named(ros, tmp_path, location, reason) -> None:
    node = NodeProcess(ros, "dynamics_node", ["-p", f"robot_description_file:={location}"],
                       tmp_path, cwd=ROOT)
    try:
        assert wait_for(lambda: node.reported(reason, DiagnosticStatus.ERROR), 120.0), \
            [s.message for s in node.statuses[-3:]]
        assert node.process.poll() is None, "the node stopped"
    finally:
        node.close()


def test_the_documented_dynamics_launch_serves_the_topic_it_names(ros, tmp_path) -> None:
    (words,) = [words for words in ROS_MD
                if words[:3] == [f"{VENV_BIN}robodyn", "launch", "dynamics"] and REMAPPED in words]
    launched = Launched(words[2:], tmp_path, cwd=ROOT)
    listener = Listener(ros)
    try:
        answer = dynamics_answer(listener, "/arm/joint_states", "/dynamics/joint_space",
                                 np.array(Q0), 600.0)
        assert answer is not None, f"`{shlex.join(words)}` never answered:\n{launched.output}"
        assert launched.stop(signal.SIGINT) == 0, launched.output
    finally:
        listener.close()
        launched.close()
