"""Simulation without ROS: integrators over (q, q̇), a simulated robot with joint damping,
friction and limits, the warm-started iterative forward dynamics it runs on, and the
faster-than-real-time preview of scenarios (sim.preview, sim.scenarios)."""

from robodyn_ros.sim.integrators import (
    ADAPTIVE_INTEGRATORS,
    INTEGRATORS,
    adaptive_integrator,
    rk4,
    semi_implicit_euler,
)
from robodyn_ros.sim.simulated_robot import FRICTION_VELOCITY, TOLERANCE, SimulatedRobot
from robodyn_ros.sim.warm_start import WarmStartedForwardDynamics

__all__ = [
    "ADAPTIVE_INTEGRATORS",
    "FRICTION_VELOCITY",
    "INTEGRATORS",
    "TOLERANCE",
    "SimulatedRobot",
    "WarmStartedForwardDynamics",
    "adaptive_integrator",
    "rk4",
    "semi_implicit_euler",
]
