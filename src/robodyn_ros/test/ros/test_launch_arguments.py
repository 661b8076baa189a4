"""`robodyn launch`: the launch files' nodes, one process each, over real DDS, with the launch
files' arguments; stopped together by a signal or when one exits; bad arguments refused before
anything starts."""

from __future__ import annotations

import io
import signal
import sys

import numpy as np
import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.cli import main
from robodyn_ros.model import read_robot_description
from robodyn_ros.resources import bundled_urdf, share_directory
from robodyn_ros.ros.launch_arguments import DYNAMICS, argument_values, node_commands
from robodyn_ros.ros.supervisor import Command, supervise

from helpers.launched import STARTED, Launched, Listener, alive, dynamics_answer
from helpers.node_process import executable
from helpers.nodes import wait_for
from helpers.robots import Q0

START_PATIENCE = 600.0  # s for the nodes to serve (they load their kernels; a cold cache compiles)
SIM_NODES = ("sim_node", "dynamics_node", "controller_node", "preview_node")


def test_dynamics_launch_serves_the_remapped_joint_states_in_its_namespace(ros, tmp_path
                                                                           ) -> None:
    """joint_states:= remaps the node's subscription, namespace:= puts its topics under
    /left, frame_prefix:= names its frames; M is Robot's at the published state; SIGINT ends
    the command (status 0) and its node."""
    launched = Launched(["dynamics", "joint_states:=/arm/joint_states", "namespace:=left",
                         "frame_prefix:=left_"], tmp_path)
    listener = Listener(ros)
    try:
        q = np.array(Q0) + 0.1
        answer = dynamics_answer(listener, "/arm/joint_states", "/left/dynamics/joint_space",
                                 q, START_PATIENCE)
        assert answer is not None, launched.output
        expected = Robot.from_urdf(bundled_urdf("panda")).mass_matrix(q)
        np.testing.assert_allclose(np.reshape(answer.mass_matrix, expected.shape), expected,
                                   rtol=0, atol=1e-10 * np.abs(expected).max())
        assert answer.header.frame_id == "left_panda_link0"
        assert "[dynamics_node] " in launched.output  # the node's own lines, prefixed
        pids = launched.node_pids()
        assert list(pids) == ["dynamics_node"], launched.output
        assert launched.stop(signal.SIGINT) == 0, launched.output
        assert not any(alive(pid) for pid in pids.values()), launched.output
    finally:
        listener.close()
        launched.close()


def test_sim_launch_brings_up_four_nodes_in_its_namespace(ros, tmp_path) -> None:
    """Every node serves under /robot1 with frame_prefix robot1_ (their diagnostics say so),
    and sim_node's joint_states flow under the namespace; SIGTERM ends the command (status 0)
    and every node."""
    launched = Launched(["sim", "namespace:=robot1", "frame_prefix:=robot1_"], tmp_path)
    listener = Listener(ros)
    try:
        diagnostics = listener.heard(DiagnosticArray, "/diagnostics")
        states = listener.heard(JointState, "/robot1/joint_states")

        def serving(node: str) -> bool:
            return any(
                status.name.startswith(f"robot1/{node}: ")
                and status.level <= DiagnosticStatus.WARN
                and status.message not in ("inactive", "unconfigured")
                and array.header.frame_id == "robot1_panda_link0"
                for array in list(diagnostics) for status in array.status
            )

        assert wait_for(lambda: all(serving(node) for node in SIM_NODES), START_PATIENCE), \
            launched.output
        heard = len(states)
        assert wait_for(lambda: len(states) >= heard + 20), "joint_states do not flow"
        assert states[-1].header.frame_id == "robot1_panda_link0"
        pids = launched.node_pids()
        assert sorted(pids) == sorted(SIM_NODES), launched.output
        assert launched.stop(signal.SIGTERM) == 0, launched.output
        assert not any(alive(pid) for pid in pids.values()), launched.output
    finally:
        listener.close()
        launched.close()


def test_a_node_that_exits_ends_the_launch_with_its_status(tmp_path) -> None:
    """A params file naming a parameter the node lacks stops it at start: the command says
    which node exited with what status, and exits non-zero."""
    params = tmp_path / "params.yaml"
    params.write_text("/**/dynamics_node:\n  ros__parameters:\n    no_such_parameter: 1\n")
    launched = Launched(["dynamics", f"params_file:={params}"], tmp_path)
    try:
        assert launched.ended(START_PATIENCE) == 1, launched.output
        assert "[launch] dynamics_node exited on its own with status 1" in launched.output
        assert "no_such_parameter" in launched.output
    finally:
        launched.close()


XACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm">
  <xacro:arg name="prefix" default=""/>
  <link name="$(arg prefix)base"/>
</robot>
"""


def test_a_node_is_given_every_argument(tmp_path) -> None:
    """The node's executable beside this Python; --ros-args with the log level, namespace,
    remap and params_file; the description, expanded with xacro_args, in a params file after
    it; then use_sim_time, and frame_prefix as a string whatever it looks like."""
    description = tmp_path / "arm.urdf.xacro"
    description.write_text(XACRO)
    values = argument_values(DYNAMICS, [
        f"description_file:={description}", "xacro_args:=prefix:=left_", "namespace:=left",
        "joint_states:=/arm/joint_states", "log_level:=DEBUG", "frame_prefix:=1"])
    robot_params = tmp_path / "robot.yaml"
    (command,) = node_commands(DYNAMICS, values, robot_params)
    assert command == Command("dynamics_node", [
        executable("dynamics_node"), "--ros-args", "--log-level", "debug", "-r", "__ns:=/left",
        "-r", "joint_states:=/arm/joint_states",
        "--params-file", str(share_directory() / "config" / "dynamics.yaml"),
        "--params-file", str(robot_params), "-p", "use_sim_time:=false",
        "-p", 'frame_prefix:="1"'])
    urdf = yaml.safe_load(robot_params.read_text())["/**"]["ros__parameters"]["robot_description"]
    assert urdf == read_robot_description(description, {"prefix": "left_"})
    assert '<link name="left_base"/>' in urdf


def supervised(grace: float, **codes: str) -> tuple[int, str]:
    """`supervise` of one Python process per code (by its name): its status and output."""
    output = io.StringIO()
    status = supervise([Command(name, [sys.executable, "-c", code])
                        for name, code in codes.items()], output, grace)
    return status, output.getvalue()


SLEEPER = "import time; print('up', flush=True); time.sleep(600)"
STUBBORN = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); " + SLEEPER


def test_a_process_that_exits_stops_the_others() -> None:
    status, printed = supervised(30.0, sleeper=SLEEPER,
                                 quitter="import time; time.sleep(1); exit(3)")
    assert status == 1
    assert "[launch] quitter exited on its own with status 3; stopping the others" in printed
    assert not alive(int(dict(STARTED.findall(printed))["sleeper"])), printed
    assert "SIGTERM" not in printed  # the sleeper ended at SIGINT
    assert "[sleeper] up" in printed


def test_a_process_that_ignores_sigint_gets_sigterm_after_the_grace() -> None:
    status, printed = supervised(1.0, stubborn=STUBBORN, quitter="import time; time.sleep(1)")
    assert status == 1
    assert "[launch] quitter exited on its own with status 0" in printed
    assert "stubborn still running 1 s after the last signal: SIGTERM" in printed
    assert "[launch] stubborn ended with signal SIGTERM" in printed


@pytest.mark.parametrize(("arguments", "named"), [
    (["dynamics", "joint_states"], "'joint_states' is not NAME:=VALUE"),
    (["dynamics", "no_such:=1"], "no argument 'no_such'"),
    (["sim", "joint_states:=/arm/joint_states"], "no argument 'joint_states'"),
    (["sim", "description_file:=no/such/robot.urdf"], "description_file 'no/such/robot.urdf'"),
    (["sim", "params_file:=no/such/params.yaml"], "params_file 'no/such/params.yaml'"),
    (["dynamics", "log_level:=loud"], "log_level 'loud'"),
    (["dynamics", "use_sim_time:=yes"], "use_sim_time 'yes'"),
    (["dynamics", "namespace:=2arms"], "namespace '2arms'"),
    (["dynamics", "joint_states:=arm joint states"], "joint_states 'arm joint states'"),
    (["dynamics", "xacro_args:=prefix"], "xacro_args 'prefix'"),
    (["dynamics", "start_robot_state_publisher:=true"], "robot_state_publisher cannot be"),
])
def test_bad_arguments_are_refused_before_anything_starts(capsys, arguments, named) -> None:
    assert main(["launch", *arguments]) == 1
    printed = capsys.readouterr()
    assert "[launch]" not in printed.out  # nothing started
    (line,) = printed.err.splitlines()
    assert line.startswith(f"robodyn launch {arguments[0]}: ") and named in line, line
