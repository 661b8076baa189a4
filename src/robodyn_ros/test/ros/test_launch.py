"""The launch files start executables the package installs, with files it ships, and declare,
with a description, every argument they use: the arguments of `robodyn launch`'s table
(robodyn_ros.ros.launch_arguments), which runs the same nodes where ROS 2's launch tool is not
installed, and whose --show-args prints what the files declare.

The files are read as Python syntax trees: launch and launch_ros come with a ROS install, not
with the PyPI wheels. Where launch_ros is importable, each file's description is also built.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from pathlib import Path

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


@functools.cache
def tree(launch_file: str) -> ast.Module:
    return ast.parse((PACKAGE / "launch" / launch_file).read_text())


def calls(launch_file: str, function: str) -> list[ast.Call]:
    """Every call of `function` (by its bare name) in the file."""
    return [
        node for node in ast.walk(tree(launch_file))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == function
    ]


def resolve(launch_file: str, expr: ast.expr) -> ast.expr:
    """The expression, or the value a name is assigned once in the file."""
    if not isinstance(expr, ast.Name):
        return expr
    (value,) = [
        node.value for node in ast.walk(tree(launch_file))
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == expr.id
    ]
    return value


def dict_literal(launch_file: str, expr: ast.expr) -> dict[str, ast.expr]:
    """The items of a dict literal, or of the one a name is assigned in the file."""
    expr = resolve(launch_file, expr)
    assert isinstance(expr, ast.Dict)
    return {ast.literal_eval(key): value for key, value in zip(expr.keys, expr.values, strict=True)}


def keywords(launch_file: str, call: ast.Call) -> dict[str, ast.expr]:
    """A call's keyword arguments, those of a `**name` included."""
    found = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            found.update(dict_literal(launch_file, keyword.value))
        else:
            found[keyword.arg] = keyword.value
    return found


def is_configuration(expr: ast.expr, name: str) -> bool:
    return ast.dump(expr) == ast.dump(ast.parse(f'LaunchConfiguration("{name}")').body[0].value)


def nodes(launch_file: str) -> dict[tuple[str, str, str], dict[str, ast.expr]]:
    """(package, executable, name) of each Node call, with its keyword arguments."""
    found = {}
    for call in calls(launch_file, "Node"):
        arguments = keywords(launch_file, call)
        found[tuple(ast.literal_eval(arguments[key])
                    for key in ("package", "executable", "name"))] = arguments
    return found


def robodyn_nodes(launch_file: str) -> set[str]:
    return {name for package, _, name in nodes(launch_file) if package == "robodyn_ros"}


def declared(launch_file: str) -> dict[str, dict[str, ast.expr]]:
    """Each DeclareLaunchArgument's name, with its keyword arguments."""
    return {
        ast.literal_eval(call.args[0]): keywords(launch_file, call)
        for call in calls(launch_file, "DeclareLaunchArgument")
    }


def installed_globs() -> set[tuple[str, str]]:
    """(folder, suffix) of setup.py's data_files installed under share/robodyn_ros/folder."""
    setup = (PACKAGE / "setup.py").read_text()
    return set(re.findall(r'share/\{PACKAGE\}/(\w+)", glob\("\1/\*([\w.]+)"\)', setup))


def share_file(expr: ast.expr) -> Path:
    """The package file of PathJoinSubstitution([FindPackageShare("robodyn_ros"), *parts])."""
    assert isinstance(expr, ast.Call) and expr.func.id == "PathJoinSubstitution"
    share, *parts = expr.args[0].elts
    assert ast.dump(share) == ast.dump(ast.parse('FindPackageShare("robodyn_ros")').body[0].value)
    relative = Path(*map(ast.literal_eval, parts))
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
    assert len(calls(launch_file, "Node")) == len(nodes(launch_file))  # none twice
    assert set(nodes(launch_file)) == STARTS[launch_file]
    assert robodyn_nodes(launch_file) <= console_scripts()
    assert set(robodyn_launch(launch_file).nodes) == robodyn_nodes(launch_file)


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_nodes_take_namespace_log_level_and_shared_parameters(launch_file: str) -> None:
    for (package, _, _), arguments in nodes(launch_file).items():
        assert is_configuration(arguments["namespace"], "namespace")
        ros_arguments = resolve(launch_file, arguments["arguments"]).elts
        assert [ast.literal_eval(a) for a in ros_arguments[:2]] == ["--ros-args", "--log-level"]
        assert is_configuration(ros_arguments[2], "log_level")
        *files, shared = resolve(launch_file, arguments["parameters"]).elts
        if package == "robodyn_ros":
            assert [is_configuration(f, "params_file") for f in files] == [True]
        assert set(dict_literal(launch_file, shared)) == SHARED_PARAMETERS


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_robot_description_is_built_by_xacro(launch_file: str) -> None:
    """No Python reads the description: xacro's output, at launch."""
    assert not calls(launch_file, "OpaqueFunction")
    (command,) = calls(launch_file, "Command")
    parts = command.args[0].elts
    assert ast.dump(parts[0]) == ast.dump(ast.parse('FindExecutable(name="xacro")').body[0].value)
    assert is_configuration(parts[2], "description_file")
    assert is_configuration(parts[4], "xacro_args")


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
    assert len(calls(launch_file, "DeclareLaunchArgument")) == len(arguments)  # none twice
    table = robodyn_launch(launch_file).arguments
    assert list(arguments) == [argument.name for argument in table]
    for argument in table:
        default = arguments[argument.name]["default_value"]
        if argument.in_share:
            assert share_file(default) == PACKAGE / argument.default, argument.name
        else:
            assert ast.literal_eval(default) == argument.default, argument.name
        description = ast.literal_eval(arguments[argument.name].get("description",
                                                                    ast.Constant("")))
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
        assert description == ast.literal_eval(arguments[name]["description"]), name
        declared_default = arguments[name]["default_value"]
        if isinstance(declared_default, ast.Constant):
            assert default == declared_default.value, name
        else:  # a file of the share folder
            relative = share_file(declared_default).relative_to(PACKAGE)
            assert Path(default).is_file() and Path(default).parts[-2:] == relative.parts, name


@pytest.mark.parametrize("launch_file", LAUNCH_FILES)
def test_every_launch_configuration_is_declared(launch_file: str) -> None:
    used = {ast.literal_eval(call.args[0]) for call in calls(launch_file, "LaunchConfiguration")}
    assert used <= set(declared(launch_file))


def test_robot_state_publisher_runs_in_the_simulation_and_on_request_on_a_robot() -> None:
    assert "condition" not in nodes("sim.launch.py")[RSP]
    condition = nodes("dynamics.launch.py")[RSP]["condition"]
    assert condition.func.id == "IfCondition"
    assert is_configuration(condition.args[0], "start_robot_state_publisher")
    remapped = nodes("dynamics.launch.py")[("robodyn_ros", "dynamics_node", "dynamics_node")]
    (rule,) = remapped["remappings"].elts
    assert ast.literal_eval(rule.elts[0]) == "joint_states"
    assert is_configuration(rule.elts[1], "joint_states")
    assert robodyn_launch("dynamics.launch.py").remapped_topics == ("joint_states",)
    assert robodyn_launch("sim.launch.py").remapped_topics == ()
    assert "remappings" not in nodes("sim.launch.py")[("robodyn_ros", "sim_node", "sim_node")]


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
