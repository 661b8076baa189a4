"""Controller plugins: joint efforts from the robot's state, behind one interface.

``load_controller(name)`` returns a `Controller` class: the built-ins (``gravity_compensation``,
``joint_impedance``, ``operational_space``) or one registered under the entry-point group
``robodyn_ros.controllers``. No ROS here: ``ros/`` nodes wrap these.
"""

from robodyn_ros.control.plugin import (
    BUILTIN_CONTROLLERS,
    ENTRY_POINT_GROUP,
    Controller,
    ControllerState,
    available_controllers,
    load_controller,
)

__all__ = [
    "BUILTIN_CONTROLLERS",
    "ENTRY_POINT_GROUP",
    "Controller",
    "ControllerState",
    "available_controllers",
    "load_controller",
]
