"""Simulations in the tests: a robot whose efforts alone move it, and a run of SimulatedRobot
recorded state by state."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros import Robot
from robodyn_ros.sim import SimulatedRobot


def lossless(robot: Robot) -> Robot:
    """The robot without joint damping, friction and limits: what moves it in SimulatedRobot
    is the efforts alone, as the integrators and the controllers are checked with."""
    model = robot.model
    zeros, infinite = np.zeros(model.nv), np.full(model.nv, np.inf)
    return Robot(dataclasses.replace(model, damping=zeros, friction=zeros, lower=-infinite,
                                     upper=infinite, velocity_limit=infinite,
                                     effort_limit=infinite))


class Run(NamedTuple):
    """The states of a run, its start state first: times (K + 1,), q (K + 1, nq), v (K + 1, nv)."""

    times: np.ndarray
    q: np.ndarray
    v: np.ndarray


def run(simulation: SimulatedRobot, steps: int,
        torque: Callable[[SimulatedRobot], ArrayLike]) -> Run:
    """`steps` steps, each under the efforts torque(simulation) asks for at its start."""
    times, qs, vs = [simulation.time], [simulation.q], [simulation.qd]
    for _ in range(steps):
        simulation.step(torque(simulation))
        times.append(simulation.time)
        qs.append(simulation.q)
        vs.append(simulation.qd)
    return Run(np.array(times), np.array(qs), np.array(vs))
