"""External wrenches on frames as generalised forces: a push on a robot, a tool's contact force.

A wrench w = [fx fy fz; tx ty tz] acts at a frame's origin in world-aligned axes (the axes of
Robot.jacobian), so its generalised force is J(q)ᵀ w (the principle of virtual work: J v is the
frame origin's velocity in those axes). Inverse dynamics gives τ − Σ J_kᵀ w_k, forward dynamics
solves with τ + Σ J_kᵀ w_k.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike


class HasJacobian(Protocol):
    """What the wrenches need of a robot: its frames' Jacobians in world-aligned axes."""

    nv: int

    def jacobian(self, q: ArrayLike, frame: str) -> np.ndarray: ...


ExternalWrenches = Mapping[str, ArrayLike]
"""Frame name → its wrench [fx fy fz tx ty tz] (N, N·m), (6,) or one per state (B, 6)."""


def wrench_forces(robot: HasJacobian, q: ArrayLike, external_wrenches: ExternalWrenches
                  ) -> np.ndarray:
    """Σ J_k(q)ᵀ w_k: the generalised forces of wrenches on frames.

    Args:
        robot: the robot.
        q: its configurations, (nq,) or (B, nq).
        external_wrenches: frame → wrench at its origin, world-aligned axes.

    Returns:
        (nv,) or (B, nv), like q's batch.

    Raises:
        ValueError: a wrench that is not 6 numbers for each state of q, naming the frame.
        ModelError: a frame the robot lacks, listing its frames.
    """
    batch = np.shape(q)[:-1]
    total = np.zeros((*batch, robot.nv))
    for frame, wrench in external_wrenches.items():
        w = np.asarray(wrench, dtype=float)
        if w.shape not in ((6,), (*batch, 6)):
            raise ValueError(
                f"external_wrenches['{frame}'] must be [fx fy fz tx ty tz] (6,) or one per "
                f"state {(*batch, 6)}, world-aligned axes at the frame's origin; got shape "
                f"{w.shape}"
            )
        J = robot.jacobian(q, frame)
        total += (np.swapaxes(J, -1, -2) @ w[..., None])[..., 0]
    return total
