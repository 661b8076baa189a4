"""URDF (or xacro) → Model: the kinematic tree as flat arrays."""

from robodyn_ros.model.model import FREE_FLYER_JOINTS, JOINT_KINDS, Model, ModelError
from robodyn_ros.model.urdf import GRAVITY, UrdfOptions, URDFWarning, load_urdf, load_urdf_string
from robodyn_ros.model.xacro import (
    description_file,
    expand_xacro,
    read_robot_description,
    xacro_argument,
)

__all__ = [
    "FREE_FLYER_JOINTS",
    "GRAVITY",
    "JOINT_KINDS",
    "Model",
    "ModelError",
    "URDFWarning",
    "UrdfOptions",
    "description_file",
    "expand_xacro",
    "load_urdf",
    "load_urdf_string",
    "read_robot_description",
    "xacro_argument",
]
