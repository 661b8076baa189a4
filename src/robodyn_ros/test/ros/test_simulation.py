"""The closed loop in one process: sim_node + dynamics_node + controller_node (operational
space) reach each pose target, as `robodyn sim` runs them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers.processes import one_per_signal, signalled_outputs

CONFIG = Path(__file__).resolve().parents[2] / "config" / "sim.yaml"


@pytest.mark.parametrize("dynamics_source", ["in_process", "service"])
def test_operational_space_control_reaches_every_target(tmp_path, dynamics_source) -> None:
    """Lock-step (the sim waits for each command), as fast as possible; the runner's
    tolerance: 5 mm and 0.02 rad after 3 s of sim time per target. With "service", the
    controller gets M, b, g from dynamics_node's compute_dynamics every cycle."""
    params = yaml.safe_load(CONFIG.read_text())
    params["/**/sim_node"]["ros__parameters"].update(real_time_factor=0.0, lockstep=True)
    params["/**/controller_node"]["ros__parameters"]["dynamics_source"] = dynamics_source
    params_file = tmp_path / "sim.yaml"
    params_file.write_text(yaml.safe_dump(params))
    result = subprocess.run(
        [sys.executable, "-m", "robodyn_ros.cli", "sim", "--params", str(params_file)],
        env=os.environ.copy(), capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("(reached;") == 3
    assert result.stdout.count("previewed at") == 3  # preview_node predicted every target
    assert "all targets reached" in result.stdout
    for node in ("sim_node", "dynamics_node", "controller_node", "preview_node"):
        assert f"{node}: configured in" in result.stdout  # the transitions it drove
        assert f"{node}: activated in" in result.stdout
    assert "dynamics_node: dynamics: computing" in result.stdout  # the summary of every node


def test_sigint_and_sigterm_end_the_simulation_cleanly(tmp_path) -> None:
    """Ctrl-C or SIGTERM while the targets are followed: the nodes are torn down, the
    process ends (status 1: not every target reached) without a traceback."""
    domain = int(os.environ["ROS_DOMAIN_ID"])  # this worker's, 1 to 100 (conftest.py)
    domains = (domain + 100, 201 + domain % 32)  # neither this worker's nor each other's
    envs = [os.environ | {"ROS_LOG_DIR": str(tmp_path), "PYTHONUNBUFFERED": "1",
                          "ROS_DOMAIN_ID": str(one)} for one in domains]
    with one_per_signal([sys.executable, "-m", "robodyn_ros.cli", "sim"], envs) as processes:
        printed = signalled_outputs(processes, "target 1", settle=0.0, patience=30.0)
    for signum, process in processes.items():
        assert process.returncode == 1 and "interrupted" in printed[signum], printed[signum]
        assert "Traceback" not in printed[signum], printed[signum]


def test_a_floating_quadruped_stands_and_sways_on_its_feet(tmp_path) -> None:
    """`robodyn sim --floating-base` on the bundled Solo12, lock-step, as fast as possible:
    its feet found (the lowest frames), the base held where it stands, then swayed 2 cm
    (the runner's tolerance 5 mm across) as preview_node predicted it (within 1 mm: the same
    simulation, the controller's start a little before the preview's), odometry published
    with every joint state."""
    floating = CONFIG.parent / "floating_sim.yaml"
    params = yaml.safe_load(floating.read_text())
    params["/**/sim_node"]["ros__parameters"].update(real_time_factor=0.0, lockstep=True)
    params_file = tmp_path / "floating_sim.yaml"
    params_file.write_text(yaml.safe_dump(params))
    result = subprocess.run(
        [sys.executable, "-m", "robodyn_ros.cli", "sim", "--floating-base", "--params",
         str(params_file)],
        env=os.environ.copy(), capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "on FL_FOOT:3d, FR_FOOT:3d, HL_FOOT:3d, HR_FOOT:3d" in result.stdout
    assert result.stdout.count("(reached;") == 2
    assert "the base reached its targets" in result.stdout
    assert "controller_node: control: controlling" in result.stdout
    states = int(result.stdout.split(" joint states")[0].rsplit("; ", 1)[1])
    odometry = int(result.stdout.split("odometry: ")[1].split(" messages")[0])
    assert abs(odometry - states) <= 1  # counted a moment apart, one of each per step
    sway = result.stdout.split("\nsway:")[1].splitlines()
    assert "previewed at" in sway[0]
    last = [line for line in sway if "predicted" in line][-1]
    actual, predicted = (float(x) for x in re.findall(r"([\d.]+) mm", last))
    assert abs(actual - predicted) < 1.0, last
