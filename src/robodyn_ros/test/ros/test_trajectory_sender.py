"""`robodyn send-trajectory` against controller_node in a process of its own, over real DDS:
a trajectory file is taken (the node's own count confirms it) and the command says so; one the
node refuses (a position beyond its joint's limit) fails with the node's reason; a file that
is not a trajectory, and a controller that never appears, fail naming what is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from robodyn_ros.ros.trajectory_sender import TrajectoryError, trajectory_from_yaml

from helpers.node_process import NodeProcess, node_env, params_file
from helpers.robots import PANDA, PANDA_JOINTS, Q0

ROBODYN = os.path.join(os.path.dirname(sys.executable), "robodyn")


def trajectory_file(path: Path, last: list[float]) -> Path:
    points = [{"positions": list(Q0), "time_from_start": {"sec": 0, "nanosec": 0}},
              {"positions": last, "time_from_start": {"sec": 2, "nanosec": 0}}]
    path.write_text(yaml.safe_dump({"joint_names": list(PANDA_JOINTS), "points": points}))
    return path


def send(tmp_path: Path, file: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([ROBODYN, "send-trajectory", str(file), *options],
                          env=node_env(tmp_path), capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def controller(ros, tmp_path_factory):
    folder = tmp_path_factory.mktemp("controller")
    node = NodeProcess(ros, "controller_node", params_file(
        folder / "params.yaml", PANDA, diagnostic_period=0.2, controller="joint_impedance",
        **{"controller_parameters.stiffness": 50.0, "controller_parameters.damping": 5.0}),
        folder)
    assert node.serving(), "controller_node never served"
    yield node
    node.close()


def test_a_trajectory_taken_is_confirmed(controller, tmp_path) -> None:
    file = trajectory_file(tmp_path / "wave.yaml", [q + 0.1 for q in Q0])
    done = send(tmp_path, file)
    assert done.returncode == 0, done.stderr
    assert f"controller_node took the trajectory of {file}" in done.stdout, done.stdout


def test_a_trajectory_refused_fails_with_the_nodes_reason(controller, tmp_path) -> None:
    file = trajectory_file(tmp_path / "far.yaml", [q + 20.0 for q in Q0])
    done = send(tmp_path, file)
    assert done.returncode == 1, done.stdout
    assert "controller_node refused it" in done.stderr and "limit" in done.stderr, done.stderr


def test_a_file_that_is_not_a_trajectory_is_named(tmp_path) -> None:
    file = tmp_path / "notes.yaml"
    file.write_text("just: words\n")
    done = send(tmp_path, file)
    assert done.returncode == 1
    assert f"{file}: not a JointTrajectory" in done.stderr, done.stderr


@pytest.mark.parametrize("text", [
    "joint_names: [a]\npoints: [1, 2]\n",                                  # points not mappings
    "joint_names: [a]\npoints: [{positions: [0.1]}]\n",                    # no time_from_start
    "joint_names: [a]\npoints: [{positions: [x], time_from_start: {}}]\n",  # not a number
    "joint_names: [a]\npoints: [{positions: [0.1], time_from_start: 2}]\n",  # not sec, nanosec
    "joint_names: 3\npoints: []\n",                                          # names not a list
    "points: [\n",                                                              # not YAML
])
def test_a_malformed_trajectory_file_is_named(tmp_path, text) -> None:
    file = tmp_path / "broken.yaml"
    file.write_text(text)
    with pytest.raises(TrajectoryError, match=f"^{file}: "):
        trajectory_from_yaml(file)


def test_a_topic_that_is_not_a_name_is_refused(tmp_path) -> None:
    file = trajectory_file(tmp_path / "wave.yaml", list(Q0))
    done = send(tmp_path, file, "--topic", "bad name")
    assert done.returncode == 1
    assert "topic 'bad name': not a topic name" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_no_controller_is_said_after_the_patience(tmp_path) -> None:
    file = trajectory_file(tmp_path / "wave.yaml", list(Q0))
    done = send(tmp_path, file, "--topic", "nobody/joint_trajectory", "--patience", "1")
    assert done.returncode == 1
    assert "no subscriber of /nobody/joint_trajectory" in done.stderr, done.stderr
