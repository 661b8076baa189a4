"""URDF → Model: the kinematic tree as flat arrays."""

from robodyn_ros.model.model import JOINT_KINDS, Model, ModelError
from robodyn_ros.model.urdf import GRAVITY, URDFWarning, load_urdf, load_urdf_string

__all__ = [
    "GRAVITY",
    "JOINT_KINDS",
    "Model",
    "ModelError",
    "URDFWarning",
    "load_urdf",
    "load_urdf_string",
]
