"""Lifecycle nodes over real DDS, driven through their change_state and get_state services:
configure loads and warms the robot, activate starts publishing, deactivate stops it (a
simulation pauses and resumes where it was), cleanup drops the robot and its interfaces,
shutdown ends; two nodes of one kind in two namespaces do not collide, on their topics or in
/diagnostics; SIGTERM or SIGINT at any moment, a cold warm-up included, every moment of a
start-up, under use_sim_time with no /clock, and handed to any thread, ends every
executable cleanly."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import JointSpaceDynamics
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.sim_node import SimNode

from helpers.node_process import executable, node_env, params_file
from helpers.nodes import Peer, call, panda_state, wait_for
from helpers.processes import SIGNALS, one_per_signal, signalled_outputs
from helpers.robots import CHAIN, PANDA

Q = [0.3, -0.4, 0.2, -2.1, 0.1, 1.6, 0.7]


def change(peer: Peer, transition: int) -> bool:
    name = peer.node.get_fully_qualified_name()
    request = ChangeState.Request()
    request.transition.id = transition
    return call(peer, ChangeState, f"{name}/change_state", request).success


def state(peer: Peer) -> int:
    name = peer.node.get_fully_qualified_name()
    return call(peer, GetState, f"{name}/get_state", GetState.Request()).current_state.id


def answers_while_publishing(peer: Peer, answers: list, seconds: float = 0.5) -> int:
    """How many answers arrive while joint states are sent for `seconds`."""
    count = len(answers)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        peer.publish(JointState, "joint_states", panda_state(Q))
        time.sleep(0.02)
    time.sleep(0.2)
    return len(answers) - count


def test_dynamics_node_transitions(ros) -> None:
    node = DynamicsNode(parameter_overrides=[Parameter("robot_description", value=PANDA),
                                             Parameter("autostart", value=False),
                                             Parameter("diagnostic_period", value=0.2)])
    peer = Peer(ros, node)
    answers = []
    peer.peer.create_subscription(JointSpaceDynamics, "dynamics/joint_space", answers.append, 100)
    try:
        assert state(peer) == State.PRIMARY_STATE_UNCONFIGURED and node.robot is None
        assert wait_for(lambda: peer.statuses and peer.statuses[-1].message == "unconfigured")

        assert change(peer, Transition.TRANSITION_CONFIGURE)
        assert state(peer) == State.PRIMARY_STATE_INACTIVE and node.robot is not None
        assert answers_while_publishing(peer, answers) == 0  # inactive: nothing computed

        assert change(peer, Transition.TRANSITION_ACTIVATE)
        assert wait_for(lambda: answers_while_publishing(peer, answers) > 0)
        assert np.allclose(answers[-1].position, Q)

        assert change(peer, Transition.TRANSITION_DEACTIVATE)
        assert answers_while_publishing(peer, answers) == 0
        assert wait_for(lambda: peer.statuses[-1].message == "inactive")
        assert change(peer, Transition.TRANSITION_ACTIVATE)
        assert wait_for(lambda: answers_while_publishing(peer, answers) > 0)

        assert change(peer, Transition.TRANSITION_DEACTIVATE)
        assert change(peer, Transition.TRANSITION_CLEANUP)
        assert state(peer) == State.PRIMARY_STATE_UNCONFIGURED and node.robot is None
        assert node.count_subscribers("dynamics/joint_space") >= 1  # the test's, still there
        assert node.count_publishers("dynamics/joint_space") == 0  # the node's, gone

        assert change(peer, Transition.TRANSITION_CONFIGURE)  # configure again
        assert change(peer, Transition.TRANSITION_ACTIVATE)
        assert wait_for(lambda: answers_while_publishing(peer, answers) > 0)
        assert change(peer, Transition.TRANSITION_ACTIVE_SHUTDOWN)
        assert state(peer) == State.PRIMARY_STATE_FINALIZED and node.robot is None
    finally:
        peer.close()


def test_an_inactive_simulation_pauses_and_resumes_where_it_was(ros) -> None:
    node = SimNode(parameter_overrides=[Parameter("robot_description", value=PANDA),
                                        Parameter("real_time_factor", value=0.0)])
    peer = Peer(ros, node)
    try:
        assert wait_for(lambda: node.sim is not None and node.sim.time > 0.05)
        assert change(peer, Transition.TRANSITION_DEACTIVATE)
        time.sleep(0.1)
        paused = node.sim.time
        time.sleep(0.3)
        assert node.sim.time == paused
        assert change(peer, Transition.TRANSITION_ACTIVATE)
        assert wait_for(lambda: node.sim.time > paused + 0.05)
    finally:
        peer.close()


def test_two_namespaced_nodes_do_not_collide(ros) -> None:
    """left/ serves the panda and right/ a chain, each on its own topics; their diagnostics
    are named apart and carry their robot as hardware_id."""
    chain = Robot.from_urdf_string(CHAIN)
    peers = {
        namespace: Peer(ros, DynamicsNode(namespace=namespace, parameter_overrides=[
            Parameter("robot_description", value=urdf),
            Parameter("diagnostic_period", value=0.2)]))
        for namespace, urdf in (("left", PANDA), ("right", CHAIN))
    }
    answers = {namespace: [] for namespace in peers}
    for namespace, peer in peers.items():
        peer.peer.create_subscription(JointSpaceDynamics, f"/{namespace}/dynamics/joint_space",
                                      answers[namespace].append, 100)
    try:
        q_chain = np.linspace(0.1, 0.4, chain.nv)
        sent = {"left": panda_state(Q),
                "right": JointState(name=list(chain.joint_names), position=q_chain.tolist())}

        def both_answered() -> bool:
            for namespace, peer in peers.items():
                peer.publish(JointState, f"/{namespace}/joint_states", sent[namespace])
            time.sleep(0.05)
            return all(answers.values())

        assert wait_for(both_answered)
        assert list(answers["left"][-1].joint_names) == list(panda_state(Q).name)
        assert list(answers["right"][-1].joint_names) == list(chain.joint_names)
        for namespace, peer in peers.items():
            assert wait_for(lambda p=peer: p.statuses)
            status = peer.statuses[-1]
            assert status.name == f"{namespace}/dynamics_node: dynamics"
        assert peers["left"].statuses[-1].hardware_id == "panda"
        assert peers["right"].statuses[-1].hardware_id == chain.model.name != "panda"
    finally:
        for peer in peers.values():
            peer.close()


NODE_KINDS = ("dynamics_node", "controller_node", "sim_node", "preview_node")
SWEEP = Path(__file__).resolve().parents[1] / "helpers" / "signal_sweep.py"


@pytest.mark.parametrize(("kind", "signum", "moment"), [
    ("dynamics_node", signal.SIGTERM, "warm-up"), ("dynamics_node", signal.SIGINT, "warm-up"),
    ("dynamics_node", signal.SIGTERM, "serving"), ("sim_node", signal.SIGTERM, "warm-up"),
    ("controller_node", signal.SIGTERM, "warm-up"), ("preview_node", signal.SIGTERM, "warm-up"),
])
def test_a_signal_at_any_moment_ends_the_executable_cleanly(tmp_path, kind, signum,
                                                            moment) -> None:
    """During warm-up (a cold kernel cache: compiling for seconds) or while serving, the
    executable exits with status 0 and no traceback."""
    params = params_file(tmp_path / "params.yaml", CHAIN if moment == "warm-up" else PANDA)
    cache = tmp_path / "cache" if moment == "warm-up" else os.environ.get("NUMBA_CACHE_DIR")
    env = node_env(tmp_path)
    if cache:
        env["NUMBA_CACHE_DIR"] = str(cache)
    process = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), kind), "--ros-args",
         "--params-file", str(params)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    marker = "configuring" if moment == "warm-up" else "in service"
    lines = []
    try:
        while not any(marker in line for line in lines):
            line = process.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        time.sleep(1.0 if moment == "warm-up" else 0.5)
        assert process.poll() is None, "".join(lines)  # still warming up, or serving
        process.send_signal(signum)
        _, rest = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    output = "".join(lines) + rest
    assert process.returncode == 0, output
    assert ("in service" in output) == (moment == "serving"), output  # warm-up was cut short
    assert "Traceback" not in output and "RCLError" not in output, output


def thread_directed(pid: int, signum: int) -> int:
    """`signum` sent (tgkill) to one of process `pid`'s threads other than its main one that
    does not block it, as the kernel may hand a process's signal to any such thread; that
    thread's id. (A thread that blocks it would keep it pending forever: the kernel hands a
    process's signal to none of those.)"""
    for task in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        with open(f"/proc/{pid}/task/{task}/status") as status:
            blocked = next(int(line.split()[1], 16) for line in status
                           if line.startswith("SigBlk:"))
        if int(task) != pid and not blocked & 1 << (signum - 1):
            tid = int(task)
            assert ctypes.CDLL(None, use_errno=True).tgkill(pid, tid, signum) == 0, \
                os.strerror(ctypes.get_errno())
            return tid
    pytest.fail(f"no thread of process {pid} but its main one takes signal {signum}")


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_signal_handed_to_another_thread_ends_the_serving_node(tmp_path, signum) -> None:
    """A signal that lands on a thread other than the main one (DDS's, the executor's) still
    ends the node, status 0 and no traceback: the main thread does not sleep through it."""
    params = params_file(tmp_path / "params.yaml", PANDA)
    process = subprocess.Popen([executable("dynamics_node"), "--ros-args", "--params-file",
                                str(params)], env=node_env(tmp_path), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        while not any("in service" in line for line in lines):
            line = process.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        time.sleep(0.5)
        tid = thread_directed(process.pid, signum)
        try:
            rest, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"dynamics_node still running 10 s after {signum.name} to thread {tid}")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    output = "".join(lines) + rest
    assert process.returncode == 0, output
    assert "Traceback" not in output, output


@pytest.mark.parametrize("kind", NODE_KINDS)
def test_under_sim_time_without_a_clock_sigint_and_sigterm_end_the_node(tmp_path, kind) -> None:
    """use_sim_time with no /clock (a bag ended, a simulation gone): no timer is ever due, and
    the node still ends on SIGINT and on SIGTERM, status 0, no traceback."""
    params = params_file(tmp_path / "params.yaml", "", use_sim_time=True)
    command = [os.path.join(os.path.dirname(sys.executable), kind), "--ros-args",
               "--params-file", str(params)]
    with one_per_signal(command, [node_env(tmp_path)] * len(SIGNALS)) as processes:
        # a line of the node's log: spinning, waiting for a robot description, a second later
        printed = signalled_outputs(processes, "[INFO]", settle=1.0, patience=20.0)
    for signum, process in processes.items():
        assert process.returncode == 0, printed[signum]
        assert "Traceback" not in printed[signum], printed[signum]


@pytest.mark.parametrize("kind", NODE_KINDS)
def test_sigterm_at_every_moment_of_the_start_ends_the_node_cleanly(tmp_path, kind) -> None:
    """SIGTERM every 0.1 s from the process's start (its imports done once, before: the helper
    forks) until it serves the panda, and once it does: status 0 and no traceback each
    time."""
    params = params_file(tmp_path / "params.yaml", PANDA)
    sweep = subprocess.run(
        [sys.executable, str(SWEEP), kind, "SIGTERM", "0.1", "--", "--ros-args",
         "--params-file", str(params)],
        env=node_env(tmp_path), capture_output=True, text=True, timeout=1200,
    )
    assert sweep.returncode == 0, sweep.stderr
    results = [json.loads(line) for line in sweep.stdout.splitlines()]
    assert "in service" in results[0]["output"], results[0]
    assert len(results) > 3, results  # moments during the start
    for result in results:
        moment = "once serving" if result["moment"] is None else f"{result['moment']:.1f} s"
        where = f"{kind}, SIGTERM {moment} after the start:\n{result['output']}"
        assert result["status"] == 0, where
        assert "Traceback" not in result["output"], where
