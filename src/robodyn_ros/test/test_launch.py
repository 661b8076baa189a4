"""launch/sim.launch.py starts executables the package installs, with files it ships."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest
import yaml

PACKAGE = Path(__file__).resolve().parents[1]
LAUNCH = PACKAGE / "launch" / "sim.launch.py"


def console_scripts() -> set[str]:
    setup = (PACKAGE / "setup.py").read_text()
    return set(re.findall(r'"(\w+) = robodyn_ros\.[\w.]+:main"', setup))


def test_launch_file_nodes_are_installed_executables() -> None:
    tree = ast.parse(LAUNCH.read_text())
    nodes = next(
        node.value for node in tree.body
        if isinstance(node, ast.Assign) and node.targets[0].id == "NODES"
    )
    names = {element.value for element in nodes.elts}
    assert names == {"sim_node", "dynamics_node", "controller_node", "preview_node"}
    assert names <= console_scripts()


def test_default_files_exist_and_configure_every_node() -> None:
    source = LAUNCH.read_text()
    assert '"urdf" / "panda.urdf"' in source and '"config" / "sim.yaml"' in source
    assert (PACKAGE / "urdf" / "panda.urdf").is_file()
    params = yaml.safe_load((PACKAGE / "config" / "sim.yaml").read_text())
    assert set(params) == {"sim_node", "dynamics_node", "controller_node", "preview_node"}
    assert all("ros__parameters" in section for section in params.values())


@pytest.mark.skipif(
    importlib.util.find_spec("launch_ros") is None,
    reason="launch_ros is part of a ROS install, not of the PyPI wheels",
)
def test_launch_description_builds() -> None:  # runs where ROS 2 is installed from packages
    spec = importlib.util.spec_from_file_location("sim_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.generate_launch_description().entities
