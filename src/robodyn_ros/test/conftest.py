"""The fixtures of every test folder: the robots with their Pinocchio oracles (helpers/cases.py,
each built once per session), and the environment of the ROS tests (ros/conftest.py has their
rclpy fixture and marker).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from robodyn_ros import Robot

from helpers.cases import CASE_IDS, Case, case_named, robot_named

# ROS tests: discovery on this machine only, a DDS domain of this test run's own, logs in build/
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1", ... under pytest -n
if _WORKER:  # each worker a domain of its own: the workers' nodes share names and topics
    os.environ["ROS_DOMAIN_ID"] = str((os.getppid() + int(_WORKER.removeprefix("gw"))) % 100 + 1)
else:
    os.environ.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))
os.environ.setdefault("ROS_LOG_DIR", str(Path(__file__).resolve().parents[3] / "build" / "ros_log"))


@pytest.fixture(scope="session", params=CASE_IDS)
def case(request: pytest.FixtureRequest) -> Case:
    """Every robot with its Pinocchio oracle."""
    return case_named(request.param)


@pytest.fixture(scope="session", params=[c for c in CASE_IDS if not c.startswith("tree12")])
def arm_case(request: pytest.FixtureRequest) -> Case:
    """The robots whose tip frame has six or more joints above it (the 12-joint random trees
    are too shallow), for the operational-space inertia Λ."""
    found = case_named(request.param)
    assert found.tip_has_full_rank, f"{found.name}: tip {found.tip} has depth {found.tip_depth}"
    return found


@pytest.fixture(scope="session")
def load_robot() -> Callable[[str], Robot]:
    """name → the session's Robot of that case name (CASE_IDS), without building an oracle."""
    return robot_named
