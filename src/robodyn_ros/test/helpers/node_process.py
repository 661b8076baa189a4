"""A node's executable in a process of its own, as a launch starts it, with its parameters
from a params file, and its diagnostics heard in the test's process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor

from helpers.nodes import Spinning, wait_for


def params_file(path: Path, urdf: str, **values: object) -> Path:
    """A params file setting every node's robot_description (when given) and `values`."""
    lines = ["/**:", "  ros__parameters:"]
    lines += [f"    {name}: {json.dumps(value)}" for name, value in values.items()]
    if urdf:
        lines += ["    robot_description: |", *(f"      {line}" for line in urdf.splitlines())]
    path.write_text("\n".join(lines) + "\n")
    return path


def node_env(tmp_path: Path) -> dict[str, str]:
    return os.environ | {"ROS_LOG_DIR": str(tmp_path), "PYTHONUNBUFFERED": "1"}


def executable(kind: str) -> str:
    """The console script of a node kind, beside the interpreter."""
    return os.path.join(os.path.dirname(sys.executable), kind)


class NodeProcess:
    """`kind` started with `params` (a params file, or the ROS arguments after --ros-args);
    its diagnostic statuses heard here, in `statuses`.

    Args:
        ros: the test's rclpy context fixture (its node makes the listener).
        cwd: the folder it runs in (default: the test's).
    """

    def __init__(self, ros, kind: str, params: Path | list[str], tmp_path: Path,
                 cwd: Path | None = None) -> None:
        self.kind = kind
        self.statuses: list[DiagnosticStatus] = []
        self.listener = ros.create_node(f"{kind}_process_test")
        self.listener.create_subscription(DiagnosticArray, "/diagnostics", self._heard, 50)
        executor = SingleThreadedExecutor()
        executor.add_node(self.listener)
        self.spinning = Spinning(executor)
        ros_args = params if isinstance(params, list) else ["--params-file", str(params)]
        self.process = subprocess.Popen([executable(kind), "--ros-args", *ros_args],
                                        env=node_env(tmp_path), cwd=cwd,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def serving(self, patience: float = 600.0) -> bool:
        """Whether it reports OK or WARN (a robot in service) within `patience` s (its
        kernels may compile first)."""
        return wait_for(lambda: any(s.level <= DiagnosticStatus.WARN and s.message != "inactive"
                                    for s in self.statuses), patience)

    def reported(self, text: str, level=DiagnosticStatus.WARN, since: int = 0) -> bool:
        """Whether a status since index `since` has `level` or worse and `text` in its
        message or values."""
        return any(
            s.level >= level and (text in s.message or any(text in kv.value for kv in s.values))
            for s in self.statuses[since:]
        )

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.spinning.stop()
        self.listener.destroy_node()

    def _heard(self, message: DiagnosticArray) -> None:
        self.statuses += [s for s in message.status if s.name.split(":")[0] == self.kind]
