"""dynamics_node alone, on a real robot's joint states.

    ros2 launch robodyn_ros dynamics.launch.py description_file:=arm.urdf.xacro \\
        xacro_args:="prefix:=left_" joint_states:=/arm/joint_states
    ros2 launch robodyn_ros dynamics.launch.py start_robot_state_publisher:=true
    ros2 launch robodyn_ros dynamics.launch.py --show-args

Where ROS 2 comes from its PyPI wheels, without this launch tool, `robodyn launch dynamics`
takes the same arguments (robodyn_ros.ros.launch_arguments, which test_launch.py checks
against this file).

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
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
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
    """The arguments, dynamics_node and the optional robot_state_publisher."""
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
    options = {
        "namespace": LaunchConfiguration("namespace"),
        "remappings": [("joint_states", LaunchConfiguration("joint_states"))],
        "arguments": ["--ros-args", "--log-level", LaunchConfiguration("log_level")],
        "output": "screen",
    }
    return LaunchDescription([
        DeclareLaunchArgument(
            "namespace", default_value="",
            description="Namespace of the nodes, and so of their relative topics and "
                        "services; empty: the root namespace.",
        ),
        DeclareLaunchArgument(
            "use_sim_time", default_value="false",
            description="Whether the nodes follow /clock (true when the joint states come "
                        "from a simulator or a bag played with --clock).",
        ),
        DeclareLaunchArgument(
            "log_level", default_value="info",
            description="Log level of the nodes: debug, info, warn, error or fatal.",
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
                [FindPackageShare("robodyn_ros"), "config", "dynamics.yaml"]
            ),
            description="Parameters file with a dynamics_node section; default the bundled "
                        "Panda's.",
        ),
        DeclareLaunchArgument(
            "frame_prefix", default_value="",
            description="Prefix of the robot's tf frames (left_), for robot_state_publisher "
                        "and dynamics_node's frame_prefix parameter.",
        ),
        DeclareLaunchArgument(
            "joint_states", default_value="joint_states",
            description="Topic of the robot's sensor_msgs/JointState messages, which "
                        "dynamics_node (and robot_state_publisher) subscribe to.",
        ),
        DeclareLaunchArgument(
            "start_robot_state_publisher", default_value="false",
            description="Whether to start robot_state_publisher too; false because a real "
                        "robot's bringup already runs one.",
        ),
        Node(
            package="robot_state_publisher", executable="robot_state_publisher",
            name="robot_state_publisher", parameters=[shared],
            condition=IfCondition(LaunchConfiguration("start_robot_state_publisher")),
            **options,
        ),
        Node(
            package="robodyn_ros", executable="dynamics_node", name="dynamics_node",
            parameters=[LaunchConfiguration("params_file"), shared], **options,
        ),
    ])
