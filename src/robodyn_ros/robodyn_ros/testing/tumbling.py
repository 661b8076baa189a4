"""A floating robot tumbling free in zero gravity, and how far its preview drifts from what it
conserves: the test and the benchmark of the floating preview share them."""

from __future__ import annotations

import numpy as np

from robodyn_ros.robot import Robot
from robodyn_ros.sim.preview import PreviewResult
from robodyn_ros.sim.scenarios import TorqueProfile


def tumbling(robot: Robot) -> tuple[np.ndarray, np.ndarray]:
    """(q, v): the base at the origin, moving at (0.3, −0.2, 0.1) m/s and turning at 1 rad/s
    about a skew axis; the joints halfway between 0 and a random position within their limits
    (seed 0; away from q = 0, where a robot's chain of massless links may align, as iCub's
    neck does), moving between −1 and 1 rad/s."""
    q, v = robot.neutral(), np.zeros(robot.nv)
    lower, upper = (robot.per_coordinate(limit)[6:]
                    for limit in (robot.model.lower, robot.model.upper))
    q[7:] = 0.5 * np.random.default_rng(0).uniform(np.maximum(lower, -1.0),
                                                   np.minimum(upper, 1.0))
    v[:6] = [0.3, -0.2, 0.1, 0.6, -0.5, 0.62]
    v[6:] = np.linspace(-1.0, 1.0, robot.nv - 6)
    return q, v


def float_free(robot: Robot) -> TorqueProfile:
    """The scenario of no effort at all, base wrench included."""
    return TorqueProfile("float free", robot.frame_names[0], np.array([0.0]),
                         np.zeros((1, robot.nv)))


def conservation_drift(robot: Robot, result: PreviewResult) -> tuple[float, float]:
    """The largest drift over the run of the centroidal momentum A_g v, relative to its size at
    the start, and of the energy (kinetic and potential), relative to its start."""
    momentum = (robot.centroidal_momentum_matrix(result.q) @ result.qd[..., None])[..., 0]
    drift = np.abs(momentum - momentum[0]).max() / np.abs(momentum[0]).max()
    energy = np.abs(result.energy - result.energy[0]).max() / abs(result.energy[0])
    return float(drift), float(energy)
