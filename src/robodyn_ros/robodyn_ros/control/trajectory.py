"""A joint trajectory through waypoints as a reference q*(t), q̇*(t), q̈*(t) for a joint
controller, interpolated as ros2_control's joint_trajectory_controller does by what the
waypoints give: positions alone, a cubic spline at rest at both ends; positions and
velocities, a cubic Hermite spline; with accelerations too, a quintic one. Before the first
waypoint the reference is the first, after the last the last, at rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike
from scipy.interpolate import BPoly, CubicSpline


@dataclass(frozen=True, eq=False)
class JointTrajectoryReference:
    """Waypoints of n joints at times (W,) s, strictly increasing: positions (W, n), and
    velocities and accelerations (W, n) where given (None where not)."""

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None

    @classmethod
    def of(
        cls,
        times: ArrayLike,
        positions: ArrayLike,
        velocities: ArrayLike | None = None,
        accelerations: ArrayLike | None = None,
    ) -> JointTrajectoryReference:
        """The reference of checked waypoints.

        Raises:
            ValueError: no waypoint; times not strictly increasing or not finite; positions,
                velocities or accelerations not (W, n) finite numbers, or accelerations
                without velocities (the message names which).
        """
        t = np.array(times, dtype=float)
        if t.ndim != 1 or t.size == 0 or not np.isfinite(t).all():
            raise ValueError(f"times must be one or more finite numbers; got {times!r}")
        if np.any(np.diff(t) <= 0.0):
            raise ValueError(f"times must increase strictly; got {t.tolist()}")
        q = _waypoints(positions, "positions", t.size, None)
        qd = None if velocities is None else _waypoints(velocities, "velocities", t.size,
                                                         q.shape[1])
        qdd = None if accelerations is None else _waypoints(accelerations, "accelerations",
                                                             t.size, q.shape[1])
        if qdd is not None and qd is None:
            raise ValueError("accelerations need velocities at the waypoints too")
        return cls(t, q, qd, qdd)

    @property
    def duration(self) -> float:
        """The time of the last waypoint, s."""
        return float(self.times[-1])

    def at(self, t: ArrayLike) -> np.ndarray:
        """(..., 3, n): q*, q̇*, q̈* at times t (a number or an array)."""
        times = np.asarray(t, dtype=float)
        if self.times.size == 1:
            held = np.stack([self.positions[0], *np.zeros((2, self.positions.shape[1]))])
            return np.broadcast_to(held, (*times.shape, 3, self.positions.shape[1])).copy()
        inside = np.clip(times, self.times[0], self.times[-1])
        spline = self._spline
        reference = np.stack([spline(inside), spline(inside, 1), spline(inside, 2)], axis=-2)
        outside = (times < self.times[0]) | (times > self.times[-1])
        reference[outside, 1:] = 0.0
        return reference

    @cached_property
    def _spline(self) -> CubicSpline | BPoly:
        """Built once, on the first call of `at`."""
        if self.velocities is None:
            return CubicSpline(self.times, self.positions, bc_type="clamped")
        known = [self.positions, self.velocities]
        if self.accelerations is not None:
            known.append(self.accelerations)
        return BPoly.from_derivatives(self.times, np.stack(known, axis=1))


def _waypoints(values: ArrayLike, name: str, count: int, joints: int | None) -> np.ndarray:
    """`values` as a (count, joints) finite float array, or a ValueError naming `name`."""
    try:
        array = np.array(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers, one row per waypoint") from None
    if array.ndim != 2 or array.shape[0] != count or (joints is not None
                                                       and array.shape[1] != joints):
        want = f"({count}, {joints if joints is not None else 'n'})"
        raise ValueError(f"{name} must have shape {want}, one row per waypoint; got "
                         f"{array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite numbers")
    return array
