"""The simulated arm with the dynamics, controller and preview nodes, one process each.

    ros2 launch robodyn_ros sim.launch.py [urdf:=<file>] [params_file:=<file>]

The same nodes and the same parameters file run in one process with `robodyn sim`.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

NODES = ("sim_node", "dynamics_node", "controller_node", "preview_node")


def nodes(context):
    urdf = Path(LaunchConfiguration("urdf").perform(context)).read_text()
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
            OpaqueFunction(function=nodes),
        ]
    )
