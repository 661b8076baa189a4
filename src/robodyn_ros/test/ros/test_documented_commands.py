"""The node commands docs/ros.md shows ("Starting a node on its own"), run as written from the
repository's root: each node serves the robot of its robot_description_file. A file that
cannot be found, or a package the ament index lacks, is an ERROR naming it, and the node
keeps running."""

from __future__ import annotations

import shlex

import pytest
from diagnostic_msgs.msg import DiagnosticStatus

from helpers.docs import ROOT, page_commands
from helpers.node_process import NodeProcess
from helpers.nodes import wait_for

VENV_BIN = ".venv/bin/"
COMMANDS = [words for words in page_commands(ROOT / "docs" / "ros.md")
            if words[0].startswith(VENV_BIN) and words[0].endswith("_node")]


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
