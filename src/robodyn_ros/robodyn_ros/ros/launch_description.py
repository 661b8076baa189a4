"""The launch files' descriptions, built from their records in launch_arguments (SIM,
DYNAMICS): ``ros2 launch`` and ``robodyn launch`` start the same nodes with the same arguments,
defaults and remappings because both read one table.

This module imports ROS 2's launch and launch_ros, which a ROS install has and the PyPI wheels
do not: the launch files import it, nothing else in the package does.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

# mypy finds the package's own launch/ folder under this name, not ROS 2's launch
from launch import LaunchDescription  # type: ignore[attr-defined]
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robodyn_ros.ros.launch_arguments import ROBOT_STATE_PUBLISHER, LaunchArgument, LaunchFile

PACKAGE = "robodyn_ros"
ROBOT_STATE_PUBLISHER_NODE = "robot_state_publisher"


def launch_description(launch: LaunchFile) -> LaunchDescription:
    """The file's arguments, robot_state_publisher and its robodyn_ros nodes, one process each.

    Every node gets the robot parameters (robot_description, use_sim_time, frame_prefix); the
    robodyn_ros nodes read params_file first. robot_state_publisher starts always where the
    file says so (`launch.robot_state_publisher`), else when its start argument is true.
    """
    robot = robot_parameters()
    options = node_options(launch)
    always = launch.robot_state_publisher
    return LaunchDescription([
        *(declared_argument(argument) for argument in launch.arguments),
        Node(
            package=ROBOT_STATE_PUBLISHER_NODE, executable=ROBOT_STATE_PUBLISHER_NODE,
            name=ROBOT_STATE_PUBLISHER_NODE, parameters=[robot],
            condition=None if always else IfCondition(LaunchConfiguration(ROBOT_STATE_PUBLISHER)),
            **options,
        ),
        *(
            Node(package=PACKAGE, executable=node, name=node,
                 parameters=[LaunchConfiguration("params_file"), robot], **options)
            for node in launch.nodes
        ),
    ])


def declared_argument(argument: LaunchArgument) -> DeclareLaunchArgument:
    """The argument as the launch file declares it; a share folder's default as the path of
    that file in the installed package."""
    default = (
        PathJoinSubstitution([FindPackageShare(PACKAGE), *PurePosixPath(argument.default).parts])
        if argument.in_share else argument.default
    )
    return DeclareLaunchArgument(argument.name, default_value=default,
                                 description=argument.description)


def robot_parameters() -> dict[str, ParameterValue]:
    """What every node is given: the robot description, xacro's expansion of description_file
    with xacro_args at launch (a plain URDF passes through), use_sim_time and frame_prefix."""
    description = Command([
        FindExecutable(name="xacro"), " ", LaunchConfiguration("description_file"),
        " ", LaunchConfiguration("xacro_args"),
    ])
    return {
        "robot_description": ParameterValue(description, value_type=str),
        "use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"), value_type=bool),
        "frame_prefix": ParameterValue(LaunchConfiguration("frame_prefix"), value_type=str),
    }


def node_options(launch: LaunchFile) -> dict[str, Any]:
    """Every node's namespace, remapped topics (each to its argument's value), log level and
    output."""
    return {
        "namespace": LaunchConfiguration("namespace"),
        "remappings": [(topic, LaunchConfiguration(topic)) for topic in launch.remapped_topics],
        "arguments": ["--ros-args", "--log-level", LaunchConfiguration("log_level")],
        "output": "screen",
    }
