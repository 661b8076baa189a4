"""Lifecycle nodes over real DDS, driven through their change_state and get_state services:
configure loads and warms the robot, activate starts publishing, deactivate stops it (a
simulation pauses and resumes where it was), cleanup drops the robot and its interfaces,
shutdown ends; two nodes of one kind in two namespaces do not collide, on their topics or in
/diagnostics; SIGTERM or SIGINT at any moment, a cold warm-up included, ends the executable
cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

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

from helpers.nodes import Peer, call, panda_state, wait_for
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


@pytest.mark.parametrize(("signum", "moment"), [
    (signal.SIGTERM, "warm-up"), (signal.SIGINT, "warm-up"), (signal.SIGTERM, "serving"),
])
def test_a_signal_at_any_moment_ends_the_executable_cleanly(tmp_path, signum, moment) -> None:
    """During warm-up (a cold kernel cache: compiling for seconds) or while serving, the
    executable exits with status 0 and no traceback."""
    params = tmp_path / "params.yaml"
    urdf = CHAIN if moment == "warm-up" else PANDA
    params.write_text("/**/dynamics_node:\n  ros__parameters:\n    robot_description: |\n"
                      + "".join(f"      {line}\n" for line in urdf.splitlines()))
    cache = tmp_path / "cache" if moment == "warm-up" else os.environ.get("NUMBA_CACHE_DIR")
    env = os.environ | {"ROS_LOG_DIR": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    if cache:
        env["NUMBA_CACHE_DIR"] = str(cache)
    process = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "dynamics_node"), "--ros-args",
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
