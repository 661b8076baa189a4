"""Simulation without ROS: integrators over (q, q̇) and a simulated robot with joint damping,
friction and limits; the warm-started iterative forward dynamics it runs on."""

from robodyn_ros.sim.integrators import INTEGRATORS, rk4, semi_implicit_euler
from robodyn_ros.sim.simulated_robot import FRICTION_VELOCITY, SimulatedRobot
from robodyn_ros.sim.warm_start import WarmStartedForwardDynamics

__all__ = [
    "FRICTION_VELOCITY",
    "INTEGRATORS",
    "SimulatedRobot",
    "WarmStartedForwardDynamics",
    "rk4",
    "semi_implicit_euler",
]
