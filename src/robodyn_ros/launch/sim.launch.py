"""The simulated arm: sim_node, dynamics_node, controller_node and preview_node, one process
each, beside robot_state_publisher.

    ros2 launch robodyn_ros sim.launch.py
    ros2 launch robodyn_ros sim.launch.py description_file:=arm.urdf.xacro \\
        xacro_args:="prefix:=left_" namespace:=left frame_prefix:=left_ log_level:=debug
    ros2 launch robodyn_ros sim.launch.py --show-args

The arguments, nodes and remappings are the record SIM of
robodyn_ros.ros.launch_arguments, built by robodyn_ros.ros.launch_description. Where ROS 2
comes from its PyPI wheels, without this launch tool, `robodyn launch sim` runs the same
nodes from the same record.

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

from robodyn_ros.ros.launch_arguments import SIM
from robodyn_ros.ros.launch_description import launch_description


def generate_launch_description() -> LaunchDescription:
    """robot_state_publisher and the four robodyn_ros nodes of the simulation."""
    return launch_description(SIM)
