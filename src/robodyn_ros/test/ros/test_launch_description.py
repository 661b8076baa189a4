"""The launch files start executables the package installs, with files it ships, and declare,
with a description, every argument they use: the arguments of `robodyn launch`'s table
(robodyn_ros.ros.launch_arguments), which runs the same nodes where ROS 2's launch tool is not
installed, and whose --show-args prints what the files declare.

launch and launch_ros come with a ROS install, not with the PyPI wheels. Here each file's
description is built with stand-ins of their classes that record what they are given, and
that record is checked; where launch_ros is importable, the description is also built by it.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

from robodyn_ros.cli import main
from robodyn_ros.ros.launch_arguments import launch_file as robodyn_launch

PACKAGE = Path(__file__).resolve().parents[2]
RSP = ("robot_state_publisher", "robot_state_publisher", "robot_state_publisher")

# (package, executable, node name) of each node a file starts
STARTS = {
    "sim.launch.py": {
        RSP,
        ("robodyn_ros", "sim_node", "sim_node"),
        ("robodyn_ros", "dynamics_node", "dynamics_node"),
        ("robodyn_ros", "controller_node", "controller_node"),
        ("robodyn_ros", "preview_node", "preview_node"),
    },
    "dynamics.launch.py": {RSP, ("robodyn_ros", "dynamics_node", "dynamics_node")},
}
SHARED_PARAMETERS = {"robot_description", "use_sim_time", "frame_prefix"}  # every node's
LAUNCH_FILES = sorted(STARTS)


class Built:
    """A stand-in of a launch or launch_ros class: what it was built with."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and (self.args, self.kwargs) == (
            other.args, other.kwargs)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(*{self.args!r}, **{self.kwargs!r})"


# the classes the launch files' description uses, by module
STAND_INS = {
    "launch": ["LaunchDescription"],
    "launch.actions": ["DeclareLaunchArgument"],
    "launch.conditions": ["IfCondition"],
    "launch.substitutions": [
        "Command", "FindExecutable", "LaunchConfiguration", "PathJoinSubstitution"],
    "launch_ros": [],
    "launch_ros.actions": ["Node"],
    "launch_ros.parameter_descriptions": ["ParameterValue"],
    "launch_ros.substitutions": ["FindPackageShare"],
}
CLASSES = {name: type(name, (Built,), {}) for names in STAND_INS.values() for name in names}


def stand_in(kind: str, /, *args: Any, **kwargs: Any) -> Built:
    return CLASSES[kind](*args, **kwargs)


def configuration(name: str) -> Built:
    return stand_in("LaunchConfiguration", name)


def share_path(*parts: str) -> Built:
    return stand_in("PathJoinSubstitution", [stand_in("FindPackageShare", "robodyn_ros"), *parts])


@functools.cache
def description(launch_file: str) -> Built:
    """The file's generate_launch_description(), built with the stand-ins."""
    modules = {}
    for module_name, names in STAND_INS.items():
        module = types.ModuleType(module_name)
        for name in names:
            setattr(module, name, CLASSES[name])
        modules[module_name] = module
    with mock.patch.dict(sys.modules, modules):
        sys.modules.pop("robodyn_ros.ros.launch_description", None)  # bound to the stand-ins
        spec = importlib.util.spec_from_file_location(
            launch_file.removesuffix(".py").replace(".", "_"), PACKAGE / "launch" / launch_file
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        built = module.generate_launch_description()
    assert type(built) is CLASSES["LaunchDescription"]
    return built


def actions(launch_file: str, kind: str) -> list[Built]:
    (entities,) = description(launch_file).args
    return [entity for entity in entities if type(entity) is CLASSES[kind]]


def nodes(launch_file: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(package, executable, name) of each Node, with its keyword arguments."""
    return {
        tuple(node.kwargs[key] for key in ("package", "executable", "name")): node.kwargs
        for node in actions(launch_file, "Node")
    }


def robodyn_nodes(launch_file: str) -> set[str]:
    return {name for package, _, name in nodes(launch_file) if package == "robodyn_ros"}


def declared(launch_file: str) -> dict[str, dict[str, Any]]:
    """Each DeclareLaunchArgument's name, with its keyword arguments."""
    return {argument.args[0]: argument.kwargs
            for argument in actions(launch_file, "DeclareLaunchArgument")}


def built_within(value: Any) -> Iterator[Built]:
    """Every stand-in in a value, at any depth."""
    if isinstance(value, Built):
        yield value
        value = [*value.args, *value.kwargs.values()]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        for item in value:
            yield from built_within(item)


def installed_globs() -> set[tuple[str, str]]:
    """(folder, suffix) of setup.py's data_files installed under share/robodyn_ros/folder."""
    setup = (PACKAGE / "setup.py").read_text()
    return set(re.findall(r'share/\{PACKAGE\}/(\w+)", glob\("\1/\*([\w.]+)"\)', setup))


def share_file(value: Any) -> Path:
    """The package file of PathJoinSubstitution([FindPackageShare("robodyn_ros"), *parts])."""
    assert type(value) is CLASSES["PathJoinSubstitution"]
    share, *parts = value.args[0]
    assert share == stand_in("FindPackageShare", "robodyn_ros")
    relative = Path(*parts)
    assert any(relative.parent == Path(folder) and relative.name.endswith(suffix)
               for folder, suffix in installed_globs()), f"{relative} is not installed"
    return PACKAGE / relative


def console_scripts() -> set[str]:
    setup = (PACKAGE / "setup.py").read_text()
    return set(re.findall(r'"(\w+) = robodyn_ros\.[\w.]+:main"', setup))


def test_every_launch_file_is_tested_and_installed() -> None:
    assert sorted(path.name for path in (PACKAGE / "launch").glob("*.py")) == LAUNCH_FILES
    assert ("launch", ".launch.py") in installed_globs()


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_nodes_started(launch_file: str) -> None:
    assert len(actions(launch_file, "Node")) == len(nodes(launch_file))  # none twice
    assert set(nodes(launch_file)) == STARTS[launch_file]
    assert robodyn_nodes(launch_file) <= console_scripts()
    assert set(robodyn_launch(launch_file).nodes) == robodyn_nodes(launch_file)


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_nodes_take_namespace_log_level_and_shared_parameters(launch_file: str) -> None:
    for (package, _, _), arguments in nodes(launch_file).items():
        assert arguments["namespace"] == configuration("namespace")
        assert arguments["arguments"] == ["--ros-args", "--log-level", configuration("log_level")]
        assert arguments["output"] == "screen"
        *files, shared = arguments["parameters"]
        assert files == ([configuration("params_file")] if package == "robodyn_ros" else [])
        assert set(shared) == SHARED_PARAMETERS
        assert shared["use_sim_time"] == stand_in(
            "ParameterValue", configuration("use_sim_time"), value_type=bool)
        assert shared["frame_prefix"] == stand_in(
            "ParameterValue", configuration("frame_prefix"), value_type=str)


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_robot_description_is_built_by_xacro(launch_file: str) -> None:
    """No Python reads the description: xacro's output, at launch."""
    xacro = stand_in("Command", [
        stand_in("FindExecutable", name="xacro"), " ", configuration("description_file"),
        " ", configuration("xacro_args"),
    ])
    for arguments in nodes(launch_file).values():
        assert arguments["parameters"][-1]["robot_description"] == stand_in(
            "ParameterValue", xacro, value_type=str)


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_default_files_exist_and_configure_every_node(launch_file: str) -> None:
    arguments = declared(launch_file)
    assert share_file(arguments["description_file"]["default_value"]).is_file()
    params = yaml.safe_load(share_file(arguments["params_file"]["default_value"]).read_text())
    assert all(key.startswith("/**/") for key in params)  # any namespace
    assert {key.removeprefix("/**/") for key in params} == robodyn_nodes(launch_file)
    assert all(isinstance(section["ros__parameters"], dict) for section in params.values())


@pytest.mark.parametrize("params_file", ["sim.yaml", "dynamics.yaml"])
def test_params_files_set_only_parameters_the_nodes_declare(params_file: str) -> None:
    """A name a node does not declare would stop it at start: none in the shipped files."""
    from robodyn_ros.ros.controller_node import ControllerNode
    from robodyn_ros.ros.dynamics_node import DynamicsNode
    from robodyn_ros.ros.preview_node import PreviewNode
    from robodyn_ros.ros.robot_node import COMMON_PARAMETERS
    from robodyn_ros.ros.sim_node import SimNode

    kinds = {kind.__name__: kind for kind in (SimNode, DynamicsNode, ControllerNode, PreviewNode)}
    params = yaml.safe_load((PACKAGE / "config" / params_file).read_text())
    for key, section in params.items():
        kind = kinds["".join(word.title() for word in key.removeprefix("/**/").split("_"))]
        names = {spec.name for spec in (*COMMON_PARAMETERS, *kind.PARAMETERS)}
        for name, value in section["ros__parameters"].items():
            if isinstance(value, dict):  # a plugin's parameters, nested
                assert f"{name}." in kind.PARAMETER_PREFIXES, (key, name)
            else:
                assert name in names, (key, name)


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_arguments_declared_are_robodyn_launchs(launch_file: str) -> None:
    """Each file declares the arguments of `robodyn launch`'s table, in its order, with its
    defaults and descriptions: the two cannot drift apart."""
    arguments = declared(launch_file)
    assert len(actions(launch_file, "DeclareLaunchArgument")) == len(arguments)  # none twice
    table = robodyn_launch(launch_file).arguments
    assert list(arguments) == [argument.name for argument in table]
    for argument in table:
        default = arguments[argument.name]["default_value"]
        if argument.in_share:
            assert default == share_path(*argument.default.split("/")), argument.name
            assert share_file(default) == PACKAGE / argument.default, argument.name
        else:
            assert default == argument.default, argument.name
        description = arguments[argument.name]["description"]
        assert description.strip() and description == argument.description, argument.name


SHOWN = re.compile(r"^    '(\w+)':\n        (.+)\n        \(default: '(.*)'\)$", re.M)


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_robodyn_launch_shows_the_arguments_declared(launch_file: str, capsys) -> None:
    """`robodyn launch FILE --show-args` lists what the file declares: names, descriptions and
    defaults (a share folder's file as its path)."""
    assert main(["launch", launch_file, "--show-args"]) == 0
    shown = SHOWN.findall(capsys.readouterr().out)
    arguments = declared(launch_file)
    assert [name for name, _, _ in shown] == list(arguments)
    for name, description, default in shown:
        assert description == arguments[name]["description"], name
        declared_default = arguments[name]["default_value"]
        if isinstance(declared_default, str):
            assert default == declared_default, name
        else:  # a file of the share folder
            relative = share_file(declared_default).relative_to(PACKAGE)
            assert Path(default).is_file() and Path(default).parts[-2:] == relative.parts, name


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_every_launch_configuration_is_declared(launch_file: str) -> None:
    used = {built.args[0] for built in built_within(description(launch_file))
            if type(built) is CLASSES["LaunchConfiguration"]}
    assert used <= set(declared(launch_file))
    assert {"namespace", "log_level", "params_file", "description_file"} <= used


def test_robot_state_publisher_runs_in_the_simulation_and_on_request_on_a_robot() -> None:
    assert nodes("sim.launch.py")[RSP]["condition"] is None
    assert nodes("dynamics.launch.py")[RSP]["condition"] == stand_in(
        "IfCondition", configuration("start_robot_state_publisher"))
    for node in nodes("dynamics.launch.py").values():
        assert node["remappings"] == [("joint_states", configuration("joint_states"))]
    assert robodyn_launch("dynamics.launch.py").remapped_topics == ("joint_states",)
    assert robodyn_launch("sim.launch.py").remapped_topics == ()
    assert all(node["remappings"] == [] for node in nodes("sim.launch.py").values())


@pytest.mark.skipif(
    importlib.util.find_spec("launch_ros") is None,
    reason="launch_ros is part of a ROS install, not of the PyPI wheels",
)
@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_launch_description_builds(launch_file: str) -> None:  # where ROS 2 is installed
    spec = importlib.util.spec_from_file_location(
        launch_file.removesuffix(".py").replace(".", "_"), PACKAGE / "launch" / launch_file
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    arguments = description.get_launch_arguments()
    assert [argument.name for argument in arguments] == \
        robodyn_launch(launch_file).argument_names()
    assert all(argument.description for argument in arguments)
