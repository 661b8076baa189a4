"""dynamics_node alone, on a real robot's joint states.

    ros2 launch robodyn_ros dynamics.launch.py description_file:=arm.urdf.xacro \\
        xacro_args:="prefix:=left_" joint_states:=/arm/joint_states
    ros2 launch robodyn_ros dynamics.launch.py start_robot_state_publisher:=true
    ros2 launch robodyn_ros dynamics.launch.py --show-args

The arguments, nodes and remappings are the record DYNAMICS of
robodyn_ros.ros.launch_arguments, built by robodyn_ros.ros.launch_description. Where ROS 2
comes from its PyPI wheels, without this launch tool, `robodyn launch dynamics` runs the same
nodes from the same record.

dynamics_node gets the robot description (xacro's output for `description_file`; a plain URDF
passes through unchanged; it must be the robot the joint states come from), `use_sim_time`
(default false: a real robot runs on wall time) and `frame_prefix`, after its section of
`params_file` (default config/dynamics.yaml, set for the bundled Panda). Its `joint_states`
subscription is remapped to the `joint_states` argument. A real robot's bringup already runs
robot_state_publisher, so this file starts one only with `start_robot_state_publisher:=true`.

dynamics_node configures and activates itself (its parameter `autostart`, default true); with
`autostart: false` in the params file, a lifecycle manager drives its transitions.

Under a `namespace`, a params file's section reaches the node only by its full name
(`/left/dynamics_node`) or a wildcard (`/**/dynamics_node`).
"""

from launch import LaunchDescription

from robodyn_ros.ros.launch_arguments import DYNAMICS
from robodyn_ros.ros.launch_description import launch_description


def generate_launch_description() -> LaunchDescription:
    """dynamics_node on a robot's joint states; robot_state_publisher on request."""
    return launch_description(DYNAMICS)
