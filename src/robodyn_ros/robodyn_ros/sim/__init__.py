"""Simulation without ROS: integrators over (q, q̇) and a simulated robot with joint damping,
friction and limits."""

from robodyn_ros.sim.integrators import INTEGRATORS, rk4, semi_implicit_euler
from robodyn_ros.sim.simulated_robot import FRICTION_VELOCITY, SimulatedRobot

__all__ = ["FRICTION_VELOCITY", "INTEGRATORS", "SimulatedRobot", "rk4", "semi_implicit_euler"]
