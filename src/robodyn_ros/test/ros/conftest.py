"""The tests of the ROS layer: every test in this folder starts nodes, crosses DDS or needs the
ROS 2 packages, and carries the ``ros`` marker (``pytest -m "not ros"`` runs the others)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``ros`` marker on every test collected from this folder (this hook sees the whole
    session's items: the others keep theirs)."""
    for item in items:
        if item.path.resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.ros)


@pytest.fixture(scope="session")
def ros():
    """rclpy initialised once for the session (real DDS, this run's own domain)."""
    import rclpy

    rclpy.init()
    yield rclpy
    rclpy.shutdown()
