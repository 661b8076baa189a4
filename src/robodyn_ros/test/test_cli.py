"""The `robodyn` command: the demo runs on the bundled robot and prints its summary."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from robodyn_ros.cli import main


@pytest.mark.parametrize("ament_prefix", [None, "/nonexistent"], ids=["plain", "ros-sourced"])
def test_demo_prints_the_dynamics_summary(ament_prefix) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AMENT_PREFIX_PATH"}
    if ament_prefix:
        env["AMENT_PREFIX_PATH"] = ament_prefix
    result = subprocess.run(
        [sys.executable, "-m", "robodyn_ros.cli", "demo"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr
    for line in ("robot 'panda'", "7 joints", "joint-space inertia M(q)",
                 "max |ABA(RNEA(q̈)) - q̈|", "timing, one call from Python"):
        assert line in result.stdout, f"'{line}' missing from:\n{result.stdout}"


def test_demo_names_a_missing_urdf(tmp_path, capsys) -> None:
    missing = tmp_path / "nowhere.urdf"
    assert main(["demo", "--urdf", str(missing)]) == 1
    assert str(missing) in capsys.readouterr().err
