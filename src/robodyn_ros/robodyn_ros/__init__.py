"""robodyn_ros: rigid-body dynamics from URDF, fast enough for every control cycle."""

from robodyn_ros.errors import RobodynError, RobodynWarning
from robodyn_ros.model import Model, ModelError, load_urdf, load_urdf_string
from robodyn_ros.robot import Robot

__all__ = [
    "Model",
    "ModelError",
    "RobodynError",
    "RobodynWarning",
    "Robot",
    "load_urdf",
    "load_urdf_string",
]
