"""The simulated arm: sim_node, dynamics_node, controller_node and preview_node, one process
each, beside robot_state_publisher.

    ros2 launch robodyn_ros sim.launch.py
    ros2 launch robodyn_ros sim.launch.py description_file:=arm.urdf.xacro \\
        xacro_args:="prefix:=left_" namespace:=left frame_prefix:=left_ log_level:=debug
    ros2 launch robodyn_ros sim.launch.py --show-args

Where ROS 2 comes from its PyPI wheels, without this launch tool, `robodyn launch sim`
takes the same arguments (robodyn_ros.ros.launch_arguments, which test_launch.py checks
against this file).

Every node gets the robot description (xacro's output for `description_file`; a plain URDF
passes through unchanged), `use_sim_time` (default true: sim_node publishes /clock) and
`frame_prefix`, after the sections of `params_file` (default config/sim.yaml, the file
`robodyn sim` runs the same nodes with in one process).

The nodes configure and activate themselves (their parameter `autostart`, default true); with
`autostart: false` in the params file, a lifecycle manager drives their transitions.

Under a `namespace`, a params file's sections reach the nodes only by their full names
(`/left/sim_node`) or a wildcard (`/**/sim_node`). /clock and /tf stay global: one simulation
per ROS domain, and `frame_prefix` tells robots' frames apart.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import (
    Command,
    FindExecutable,
    LaunchConfiguration,
    PathJoinSubstitution,
)
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    """The arguments, robot_state_publisher and the four robodyn_ros nodes."""
    robot_description = ParameterValue(
        Command([
            FindExecutable(name="xacro"), " ", LaunchConfiguration("description_file"),
            " ", LaunchConfiguration("xacro_args"),
        ]),
        value_type=str,
    )
    shared = {
        "robot_description": robot_description,
        "use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"), value_type=bool),
        "frame_prefix": ParameterValue(LaunchConfiguration("frame_prefix"), value_type=str),
    }
    parameters = [LaunchConfiguration("params_file"), shared]
    options = {
        "namespace": LaunchConfiguration("namespace"),
        "arguments": ["--ros-args", "--log-level", LaunchConfiguration("log_level")],
        "output": "screen",
    }
    return LaunchDescription([
        DeclareLaunchArgument(
            "namespace", default_value="",
            description="Namespace of every node, and so of their relative topics and "
                        "services; empty: the root namespace.",
        ),
        DeclareLaunchArgument(
            "use_sim_time", default_value="true",
            description="Whether the nodes follow /clock, which sim_node publishes.",
        ),
        DeclareLaunchArgument(
            "log_level", default_value="info",
            description="Log level of every node: debug, info, warn, error or fatal.",
        ),
        DeclareLaunchArgument(
            "description_file",
            default_value=PathJoinSubstitution(
                [FindPackageShare("robodyn_ros"), "urdf", "panda.urdf"]
            ),
            description="The robot: a URDF file, or a xacro file expanded with xacro_args; "
                        "default the bundled Panda.",
        ),
        DeclareLaunchArgument(
            "xacro_args", default_value="",
            description='Extra arguments for xacro, space-separated name:=value items '
                        '(xacro_args:="prefix:=left_ hand:=true").',
        ),
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution(
                [FindPackageShare("robodyn_ros"), "config", "sim.yaml"]
            ),
            description="Parameters file with a section for each robodyn_ros node; default "
                        "the bundled Panda's simulation, as `robodyn sim` runs it.",
        ),
        DeclareLaunchArgument(
            "frame_prefix", default_value="",
            description="Prefix of the robot's tf frames (left_), for robot_state_publisher "
                        "and the nodes' frame_prefix parameter.",
        ),
        Node(
            package="robot_state_publisher", executable="robot_state_publisher",
            name="robot_state_publisher", parameters=[shared], **options,
        ),
        Node(
            package="robodyn_ros", executable="sim_node", name="sim_node",
            parameters=parameters, **options,
        ),
        Node(
            package="robodyn_ros", executable="dynamics_node", name="dynamics_node",
            parameters=parameters, **options,
        ),
        Node(
            package="robodyn_ros", executable="controller_node", name="controller_node",
            parameters=parameters, **options,
        ),
        Node(
            package="robodyn_ros", executable="preview_node", name="preview_node",
            parameters=parameters, **options,
        ),
    ])
