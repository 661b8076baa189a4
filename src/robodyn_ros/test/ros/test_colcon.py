"""The repository as a colcon workspace: `colcon build` of src/ in a temporary folder, then
dynamics_node from that install space answers a joint state over DDS with the installed
robodyn_ros; and `colcon test` imports the installed package, not the sources.

The build takes about a minute, so these tests run in `make colcon` (ROBODYN_COLCON_TEST=1),
which runs them through `colcon test`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.skipif(
    os.environ.get("ROBODYN_COLCON_TEST") != "1", reason="run by make colcon"
)

PACKAGE = Path(__file__).resolve().parents[2]
REPOSITORY = PACKAGE.parents[1]
WHEELS_CMAKE = REPOSITORY / "cmake" / "ros_wheels.cmake"
PANDA_JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
BUILD_TIMEOUT = 600.0
ANSWER_TIMEOUT = 180.0  # on a clean machine the node compiles its kernels first


def colcon_command() -> str:
    """The colcon next to this interpreter (the project's venv), else the one on PATH."""
    beside = Path(sys.executable).parent / "colcon"
    found = str(beside) if beside.is_file() else shutil.which("colcon")
    if found is None:
        pytest.fail("colcon is not installed (make colcon installs it)")
    return found


def build_environment() -> dict[str, str]:
    """This environment without the workspaces colcon test sourced; where the ROS 2 wheels
    are this interpreter's prefix, that prefix is the underlay (as the Makefile sets it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLCON_PREFIX_PATH")}
    if (Path(sys.prefix) / "share" / "ament_cmake").is_dir():
        env["AMENT_PREFIX_PATH"] = env["CMAKE_PREFIX_PATH"] = sys.prefix
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def colcon_build(workspace: Path, env: dict[str, str]) -> Path:
    """`colcon build` of the repository's src/ with every base in `workspace`; the install."""
    install = workspace / "install"
    command = [
        colcon_command(), "--log-base", str(workspace / "log"), "build",
        "--base-paths", str(REPOSITORY / "src"),
        "--build-base", str(workspace / "build"), "--install-base", str(install),
        "--executor", "sequential",
        "--cmake-args", f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF",
    ]
    if WHEELS_CMAKE.is_file():
        command.append(f"-DCMAKE_PROJECT_INCLUDE={WHEELS_CMAKE}")
    done = subprocess.run(command, env=env, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT, check=False)
    assert done.returncode == 0, f"colcon build failed:\n{done.stdout}\n{done.stderr}"
    return install


def installed_state_call(pid: int) -> list[str]:
    """The robodyn_ros C extensions process `pid` has loaded (from /proc/<pid>/maps)."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return sorted({line.split()[-1] for line in maps.splitlines() if "_state_call" in line})


def test_colcon_test_imports_the_installed_package() -> None:
    """Under colcon test the package under test is the one in the install space."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    import robodyn_ros

    try:
        prefix = Path(get_package_prefix("robodyn_ros")).resolve()
    except (OSError, PackageNotFoundError):
        prefix = None
    if prefix is None or prefix == Path(sys.prefix).resolve():
        pytest.skip("robodyn_ros is not in a colcon install space: not run by colcon test")
    module = Path(robodyn_ros.__file__).resolve()
    assert module.is_relative_to(prefix), f"imported {module}, installed under {prefix}"


def test_dynamics_node_from_the_install_space(ros, tmp_path: Path) -> None:
    """Build, start dynamics_node from install/ with the panda, receive its mass matrix."""
    from robodyn_interfaces.msg import JointSpaceDynamics
    from sensor_msgs.msg import JointState

    env = build_environment()
    started = time.monotonic()
    install = colcon_build(tmp_path, env)
    print(f"colcon build: {time.monotonic() - started:.0f} s")

    params = tmp_path / "dynamics_node.yaml"
    description = (PACKAGE / "urdf" / "panda.urdf").read_text()
    parameters = {"robot_description": description, "quantities": ["mass_matrix"]}
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
    env["ROS_LOG_DIR"] = str(tmp_path / "ros_log")
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["ROS_DOMAIN_ID"] = os.environ["ROS_DOMAIN_ID"]  # this run's own (conftest.py)
    script = '. "$1/setup.sh" && exec "$1/robodyn_ros/lib/robodyn_ros/dynamics_node" ' \
             '--ros-args --params-file "$2"'
    node_process = subprocess.Popen(
        ["bash", "-c", script, "bash", str(install), str(params)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    peer = ros.create_node("colcon_test_peer")
    received: list[JointSpaceDynamics] = []
    try:
        peer.create_subscription(JointSpaceDynamics, "dynamics/joint_space", received.append, 10)
        joint_states = peer.create_publisher(JointState, "joint_states", 10)
        message = JointState(name=PANDA_JOINTS, position=[0.1 * i for i in range(7)],
                             velocity=[0.0] * 7)
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while not received and time.monotonic() < deadline and node_process.poll() is None:
            message.header.stamp = peer.get_clock().now().to_msg()
            joint_states.publish(message)
            ros.spin_once(peer, timeout_sec=0.1)
        loaded = installed_state_call(node_process.pid) if node_process.poll() is None else []
    finally:
        peer.destroy_node()
        node_process.terminate()
        try:
            output, _ = node_process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            node_process.kill()
            output, _ = node_process.communicate()
    assert received, f"no dynamics/joint_space from the installed node:\n{output}"

    mass_matrix = np.reshape(received[-1].mass_matrix, (7, 7))
    assert list(received[-1].joint_names) == PANDA_JOINTS
    assert np.all(np.isfinite(mass_matrix))
    np.testing.assert_allclose(mass_matrix, mass_matrix.T, rtol=0, atol=1e-12)

    # the node ran the robodyn_ros of this install space, C extension included
    installed = (install / "robodyn_ros" / "lib").resolve()
    assert loaded and all(Path(path).is_relative_to(installed) for path in loaded), loaded
