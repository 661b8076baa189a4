"""The arguments of the package's launch files (launch/sim.launch.py, launch/dynamics.launch.py),
and the node command lines they give, for ``robodyn launch``: the same nodes with the same
arguments where ROS 2's launch tool is not installed (the ROS 2 wheels from PyPI have none).

The launch files are built from these same records (robodyn_ros.ros.launch_description), so
the two cannot drift apart.

What robot_state_publisher did is not done here: it cannot be started (it has no wheel), so
there is no /tf and no robot_description topic; each node takes the robot from its
robot_description parameter, the expansion of description_file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from robodyn_ros.model import ModelError, description_file, read_robot_description, xacro_argument
from robodyn_ros.resources import share_directory
from robodyn_ros.ros.supervisor import Command

LOG_LEVELS = ("debug", "info", "warn", "error", "fatal")
BOOLEANS = {"true": True, "false": False}
NAMESPACE = re.compile(r"/?([A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*)?")
TOPIC = re.compile(r"/?[A-Za-z_~][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")
ROBOT_STATE_PUBLISHER = "start_robot_state_publisher"
WITHOUT_ROBOT_STATE_PUBLISHER = (
    "robot_state_publisher is not started (ROS 2's wheels do not have it): no /tf and no "
    "robot_description topic; each node has the robot from its robot_description parameter"
)


@dataclass(frozen=True)
class LaunchArgument:
    """One argument of a launch file, as DeclareLaunchArgument declares it.

    Attributes:
        name: what ``name:=value`` names.
        default: the value when not given; with `in_share`, a path in the package's share
            folder (``urdf/panda.urdf``).
        description: what it means, as ``--show-args`` prints it.
        in_share: whether `default` is a file of the package's share folder.
    """

    name: str
    default: str
    description: str
    in_share: bool = False

    def default_value(self) -> str:
        """The default, a share folder's file as its path."""
        return str(share_directory() / self.default) if self.in_share else self.default


@dataclass(frozen=True)
class LaunchFile:
    """A launch file: the robodyn_ros nodes it starts (one process each), its arguments, the
    topics it remaps, each to the value of the argument of the same name, and whether it
    always starts robot_state_publisher too (which `robodyn launch` cannot)."""

    name: str
    nodes: tuple[str, ...]
    arguments: tuple[LaunchArgument, ...]
    remapped_topics: tuple[str, ...] = ()
    robot_state_publisher: bool = False

    @property
    def file_name(self) -> str:
        """The file in launch/: ``sim.launch.py``."""
        return f"{self.name}.launch.py"

    def argument_names(self) -> list[str]:
        """Its arguments' names, in their order."""
        return [argument.name for argument in self.arguments]


# the arguments both files take, alike
NAMESPACE_ARGUMENT = LaunchArgument(
    "namespace", "",
    "Namespace of the nodes, and so of their relative topics and services; empty: the root "
    "namespace.",
)
LOG_LEVEL_ARGUMENT = LaunchArgument(
    "log_level", "info",
    f"Log level of the nodes: {', '.join(LOG_LEVELS[:-1])} or {LOG_LEVELS[-1]}.",
)
DESCRIPTION_FILE_ARGUMENT = LaunchArgument(
    "description_file", "urdf/panda.urdf",
    "The robot: a URDF file, or a xacro file expanded with xacro_args; default the bundled "
    "Panda.", in_share=True,
)
XACRO_ARGS_ARGUMENT = LaunchArgument(
    "xacro_args", "",
    'Extra arguments for xacro, space-separated name:=value items '
    '(xacro_args:="prefix:=left_ hand:=true").',
)
FRAME_PREFIX_ARGUMENT = LaunchArgument(
    "frame_prefix", "",
    "Prefix of the robot's tf frames (left_), for robot_state_publisher and the nodes' "
    "frame_prefix parameter.",
)

SIM = LaunchFile(
    "sim", ("sim_node", "dynamics_node", "controller_node", "preview_node"), (
        NAMESPACE_ARGUMENT,
        LaunchArgument("use_sim_time", "true",
                       "Whether the nodes follow /clock, which sim_node publishes."),
        LOG_LEVEL_ARGUMENT,
        DESCRIPTION_FILE_ARGUMENT,
        XACRO_ARGS_ARGUMENT,
        LaunchArgument("params_file", "config/sim.yaml",
                       "Parameters file with a section for each robodyn_ros node; default the "
                       "bundled Panda's simulation, as `robodyn sim` runs it.", in_share=True),
        FRAME_PREFIX_ARGUMENT,
    ),
    robot_state_publisher=True,
)
DYNAMICS = LaunchFile(
    "dynamics", ("dynamics_node",), (
        NAMESPACE_ARGUMENT,
        LaunchArgument("use_sim_time", "false",
                       "Whether the nodes follow /clock (true when the joint states come from a "
                       "simulator or a bag played with --clock)."),
        LOG_LEVEL_ARGUMENT,
        DESCRIPTION_FILE_ARGUMENT,
        XACRO_ARGS_ARGUMENT,
        LaunchArgument("params_file", "config/dynamics.yaml",
                       "Parameters file with a dynamics_node section; default the bundled "
                       "Panda's.", in_share=True),
        FRAME_PREFIX_ARGUMENT,
        LaunchArgument("joint_states", "joint_states",
                       "Topic of the robot's sensor_msgs/JointState messages, which "
                       "dynamics_node (and robot_state_publisher) subscribe to."),
        LaunchArgument(ROBOT_STATE_PUBLISHER, "false",
                       "Whether to start robot_state_publisher too; false because a real "
                       "robot's bringup already runs one."),
    ),
    remapped_topics=("joint_states",),
)
LAUNCH_FILES = {launch.name: launch for launch in (SIM, DYNAMICS)}
LAUNCH_FILE_NAMES = (*LAUNCH_FILES, *(launch.file_name for launch in LAUNCH_FILES.values()))


def launch_file(name: str) -> LaunchFile:
    """The launch file called `name`: ``sim`` or ``sim.launch.py``, ``dynamics`` or
    ``dynamics.launch.py``.

    Raises:
        ValueError: no launch file has that name (the names are listed).
    """
    found = LAUNCH_FILES.get(name.removesuffix(".launch.py"))
    if found is None:
        raise ValueError(f"no launch file {name!r}; the package's: {', '.join(LAUNCH_FILE_NAMES)}")
    return found


def show_arguments(launch: LaunchFile) -> str:
    """Each argument with its description and default, as ``ros2 launch --show-args``
    prints them."""
    lines = ["Arguments (pass arguments as '<name>:=<value>'):", ""]
    for argument in launch.arguments:
        lines += [f"    '{argument.name}':", f"        {argument.description}",
                  f"        (default: '{argument.default_value()}')", ""]
    return "\n".join(lines)


def argument_values(launch: LaunchFile, items: Sequence[str]) -> dict[str, str]:
    """Every argument's value: its ``name:=value`` item (the last, when given twice), else
    its default.

    Raises:
        ValueError: an item that is not ``name:=value`` or names no argument of the file.
    """
    values = {argument.name: argument.default_value() for argument in launch.arguments}
    for item in items:
        name, separator, value = item.partition(":=")
        if not separator or not name:
            raise ValueError(f"launch argument {item!r} is not NAME:=VALUE")
        if name not in values:
            raise ValueError(f"{launch.file_name} has no argument {name!r}; its arguments: "
                             f"{', '.join(launch.argument_names())}")
        values[name] = value
    return values


def node_commands(launch: LaunchFile, values: dict[str, str], robot_params: Path
                  ) -> list[Command]:
    """The command line of each node the launch file starts, with the arguments' `values`
    checked first; writes `robot_params`, the params file that gives every node the robot
    description (xacro's output for description_file), as the launch file gives it.

    Each node runs its console script beside this Python with ``--ros-args``: the log level,
    the namespace (``-r __ns:=``), the remapped topics, params_file, then `robot_params` and
    ``-p`` for use_sim_time and frame_prefix, which override params_file's.

    Raises:
        ValueError: an argument's value is invalid, or its file does not load (named, with
            why); or start_robot_state_publisher is true (it cannot be started here).
        OSError: description_file cannot be read.
    """
    log_level = checked_choice(values, "log_level", LOG_LEVELS)
    use_sim_time = checked_boolean(values, "use_sim_time")
    check_no_robot_state_publisher(launch, values)
    check_ros_names(launch, values)
    namespace = values["namespace"]
    params_file = checked_params_file(values["params_file"])
    description = robot_description(values)
    executables = {node: node_executable(node) for node in launch.nodes}
    robot_params.write_text(yaml.safe_dump(
        {"/**": {"ros__parameters": {"robot_description": description}}}), encoding="utf-8")
    ros_args = ["--ros-args", "--log-level", log_level]
    if namespace:
        ros_args += ["-r", f"__ns:=/{namespace.strip('/')}"]
    for topic in launch.remapped_topics:
        ros_args += ["-r", f"{topic}:={values[topic]}"]
    ros_args += ["--params-file", str(params_file), "--params-file", str(robot_params),
                 "-p", f"use_sim_time:={str(use_sim_time).lower()}",
                 # a YAML string, whatever it looks like ("1" is not a number here)
                 "-p", f"frame_prefix:={json.dumps(values['frame_prefix'])}"]
    return [Command(node, [executables[node], *ros_args]) for node in launch.nodes]


def check_no_robot_state_publisher(launch: LaunchFile, values: dict[str, str]) -> None:
    """Refuse start_robot_state_publisher true: robot_state_publisher has no wheel.

    Raises:
        ValueError: it is true (or neither true nor false).
    """
    if ROBOT_STATE_PUBLISHER in values and checked_boolean(values, ROBOT_STATE_PUBLISHER):
        raise ValueError(f"{ROBOT_STATE_PUBLISHER}:=true: robot_state_publisher cannot be "
                         "started here (ROS 2's wheels do not have it); run it from a ROS 2 "
                         f"install, or use `ros2 launch robodyn_ros {launch.file_name}` there")


def check_ros_names(launch: LaunchFile, values: dict[str, str]) -> None:
    """The namespace and the remapped topics are names ROS takes.

    Raises:
        ValueError: one is not, named.
    """
    if NAMESPACE.fullmatch(values["namespace"]) is None:
        raise ValueError(f"namespace {values['namespace']!r} is not a ROS namespace (names of "
                         "letters, digits and _ separated by /, none starting with a digit)")
    for topic in launch.remapped_topics:
        if TOPIC.fullmatch(values[topic]) is None:
            raise ValueError(f"{topic} {values[topic]!r} is not a ROS topic name")


def robot_description(values: dict[str, str]) -> str:
    """The URDF of description_file (a path or a package:// URI) expanded with xacro_args.

    Raises:
        ValueError: xacro_args is not space-separated name:=value items, or description_file
            is not a file or does not expand (or xacro_args are given for a plain URDF).
        OSError: the file cannot be read.
    """
    try:
        mappings = dict(xacro_argument(item) for item in shlex.split(values["xacro_args"]))
    except ValueError as error:
        raise ValueError(f"xacro_args {values['xacro_args']!r}: {error}") from None
    location = values["description_file"]
    try:
        path = description_file(location)
    except ModelError as error:
        raise ValueError(f"description_file: {error}") from None
    if not path.is_file():
        raise ValueError(f"description_file {location!r}: no such file")
    try:
        return read_robot_description(path, mappings)
    except ModelError as error:
        raise ValueError(f"description_file: {error}") from None


def checked_params_file(location: str) -> Path:
    """params_file as an absolute path, once it is a YAML mapping.

    Raises:
        ValueError: it is not a file, not YAML, or not a mapping.
    """
    path = Path(location).absolute()
    if not path.is_file():
        raise ValueError(f"params_file {location!r}: no such file")
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as error:
        where = f" at line {error.problem_mark.line + 1}" if error.problem_mark else ""
        raise ValueError(f"params_file {location!r} is not YAML: {error.problem}{where}"
                         ) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ValueError(f"params_file {location!r} cannot be read: {error}") from None
    if not isinstance(document, dict):
        raise ValueError(f"params_file {location!r} is not a YAML mapping of node sections")
    return path


def checked_choice(values: dict[str, str], name: str, choices: Sequence[str]) -> str:
    """An argument's value, one of `choices` (case aside), in lower case.

    Raises:
        ValueError: it is none of them.
    """
    value = values[name].lower()
    if value not in choices:
        raise ValueError(f"{name} {values[name]!r} is none of {', '.join(choices)}")
    return value


def checked_boolean(values: dict[str, str], name: str) -> bool:
    """An argument's value as a boolean: true or false (case aside).

    Raises:
        ValueError: it is neither.
    """
    return BOOLEANS[checked_choice(values, name, tuple(BOOLEANS))]


def node_executable(node: str) -> str:
    """The console script of a node, beside the running Python.

    Raises:
        ValueError: it is not there (the package is not installed beside this Python).
    """
    path = os.path.join(os.path.dirname(sys.executable), node)
    if not os.access(path, os.X_OK):
        raise ValueError(f"no executable {node} beside {sys.executable}: install robodyn_ros "
                         "into this Python's environment")
    return path
