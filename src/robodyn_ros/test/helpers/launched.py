"""`robodyn launch` in a process of its own, as a test starts it, a test node that hears what
its nodes publish, and dynamics_node's answer to a state."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from rclpy.executors import SingleThreadedExecutor
from robodyn_interfaces.msg import JointSpaceDynamics
from sensor_msgs.msg import JointState

from helpers.node_process import executable, node_env
from helpers.nodes import Spinning, panda_state, wait_for

STOP_PATIENCE = 60.0  # s for the command to end after its signal: bounds a failure only
STARTED = re.compile(r"^\[launch\] (\w+) started, pid (\d+)$", re.M)


class Launched:
    """`robodyn launch ARGUMENTS` in a process of its own, what it prints collected."""

    def __init__(self, arguments: list[str], tmp_path: Path, cwd: Path | None = None) -> None:
        self.process = subprocess.Popen(
            [executable("robodyn"), "launch", *arguments], env=node_env(tmp_path), cwd=cwd,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def node_pids(self) -> dict[str, int]:
        """Each node's pid, as the command printed it."""
        return {name: int(pid) for name, pid in STARTED.findall(self.output)}

    def stop(self, signum: signal.Signals) -> int:
        """Send `signum` and wait for the command to end; its exit status."""
        self.process.send_signal(signum)
        return self.ended()

    def ended(self, patience: float = STOP_PATIENCE) -> int:
        """Wait at most `patience` s for the command to end; its exit status."""
        try:
            status = self.process.wait(timeout=patience)
        except subprocess.TimeoutExpired:
            pytest.fail(f"robodyn launch still running {patience} s on:\n{self.output}")
        self._reader.join(timeout=10.0)
        return status

    def close(self) -> None:
        """Nothing left running, whatever the test did."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pid in self.node_pids().values():
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """Whether a process with that pid runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


class Listener:
    """A test node, spun in a thread, subscribing as the test asks."""

    def __init__(self, ros) -> None:
        self.node = ros.create_node("robodyn_launch_test")
        executor = SingleThreadedExecutor()
        executor.add_node(self.node)
        self.spinning = Spinning(executor)

    def heard(self, kind, topic: str) -> list:
        messages: list = []
        self.node.create_subscription(kind, topic, messages.append, 100)
        return messages

    def close(self) -> None:
        self.spinning.stop()
        self.node.destroy_node()


def dynamics_answer(listener: Listener, states: str, answers: str, q: np.ndarray,
                    patience: float) -> JointSpaceDynamics | None:
    """dynamics_node's answer on topic `answers` to the state q (at rest) published on topic
    `states` until it comes, at most `patience` s (None then)."""
    heard = listener.heard(JointSpaceDynamics, answers)
    publisher = listener.node.create_publisher(JointState, states, 10)

    def answer() -> JointSpaceDynamics | None:
        return next((m for m in list(heard) if np.allclose(m.position, q)), None)

    def answered() -> bool:
        publisher.publish(panda_state(q))
        return wait_for(lambda: answer() is not None, 0.2)

    wait_for(answered, patience)
    return answer()
