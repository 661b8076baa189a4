"""The robot layer: Robot, a model bound to the dynamics kernels, and what it is made of.

Robot (robot.py) is the one class every consumer uses, for any root joint; Robot(model) is a
MimicRobot (mimic_robot.py) when the model has mimic joints, through the same interface. Its
parts: configurations of any layout (configuration.py, free_flyer.py), the mimic coupling
(coupling.py), contacts (contact_dynamics.py), external wrenches (external_wrenches.py),
operational-space records (operational_space.py), iterative-method options (iteration.py), the
joint-space methods a caller picks (methods.py) and the checks of its answers (answers.py).
"""

from robodyn_ros.dynamics.arrays import FloatArray
from robodyn_ros.robot.contact_dynamics import Contact, ContactDynamics
from robodyn_ros.robot.mimic_robot import MimicRobot
from robodyn_ros.robot.robot import Robot, Task, TaskAxes

__all__ = ["Contact", "ContactDynamics", "FloatArray", "MimicRobot", "Robot", "Task", "TaskAxes"]
