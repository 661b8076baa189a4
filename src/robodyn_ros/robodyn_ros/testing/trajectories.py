"""Known joint trajectories for the bag tests and benchmarks: sums of sines inside the joint
limits, with exact velocities and accelerations."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn_ros.robot import Robot


@dataclass(frozen=True, eq=False)
class Trajectory:
    """stamps (B,) int ns at `rate` Hz from `start` ns; q, qd, qdd (B, n) exact."""

    stamps: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray


def sine_trajectory(
    robot: Robot, samples: int, rate: float = 1000.0, seed: int = 0, start: int = 10**18,
    reach: float = 0.25,
) -> Trajectory:
    """q_j(t) = c_j + Σ_k a_jk sin(ω_jk t + φ_jk), two sines per joint at 0.2 to 1 Hz, centred
    in the joint's limits (±π when unlimited) and reaching at most `reach` of the range."""
    rng = np.random.default_rng(seed)
    lower = np.maximum(robot.per_coordinate(robot.model.lower), -np.pi)
    upper = np.minimum(robot.per_coordinate(robot.model.upper), np.pi)
    centre, reach_each = 0.5 * (lower + upper), reach * (upper - lower)
    n = robot.nv
    amplitude = reach_each[:, None] * rng.uniform(0.3, 0.5, (n, 2))
    omega = 2.0 * np.pi * rng.uniform(0.2, 1.0, (n, 2))
    phase = rng.uniform(0.0, 2.0 * np.pi, (n, 2))
    stamps = start + np.round(np.arange(samples) * 1e9 / rate).astype(np.int64)
    t = ((stamps - start) * 1e-9)[:, None, None]
    angle = omega * t + phase
    q = centre + (amplitude * np.sin(angle)).sum(axis=2)
    qd = (amplitude * omega * np.cos(angle)).sum(axis=2)
    qdd = (-amplitude * omega**2 * np.sin(angle)).sum(axis=2)
    return Trajectory(stamps, q, qd, qdd)
