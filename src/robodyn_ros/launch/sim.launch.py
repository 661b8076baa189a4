"""The simulated arm with the dynamics, controller and preview nodes, one process each.

    ros2 launch robodyn_ros sim.launch.py [urdf:=<file>] [params_file:=<file>]
        [xacro_args:="<name>:=<value> ..."]

`urdf` is a URDF file or a xacro file (its name ends in .xacro), expanded with the
space-separated name:=value items of `xacro_args`. The same nodes and the same parameters
file run in one process with `robodyn sim`.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from robodyn_ros.model import read_robot_description, xacro_argument

NODES = ("sim_node", "dynamics_node", "controller_node", "preview_node")


def nodes(context):
    xacro_args = LaunchConfiguration("xacro_args").perform(context).split()
    urdf = read_robot_description(
        LaunchConfiguration("urdf").perform(context), dict(map(xacro_argument, xacro_args))
    )
    params_file = LaunchConfiguration("params_file").perform(context)
    return [
        Node(
            package="robodyn_ros",
            executable=name,
            name=name,
            output="screen",
            parameters=[params_file, {"robot_description": urdf}],
        )
        for name in NODES
    ]


def generate_launch_description():
    share = Path(get_package_share_directory("robodyn_ros"))
    return LaunchDescription(
        [
            DeclareLaunchArgument("urdf", default_value=str(share / "urdf" / "panda.urdf")),
            DeclareLaunchArgument(
                "params_file", default_value=str(share / "config" / "sim.yaml")
            ),
            DeclareLaunchArgument("xacro_args", default_value=""),
            OpaqueFunction(function=nodes),
        ]
    )
