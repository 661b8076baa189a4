"""Gravity compensation: τ = g(q), the efforts that hold the robot still against gravity.

No parameters. With an exact model the arm floats: it keeps any velocity it has (no damping)
and stays where it is when at rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from robodyn_ros.control.plugin import Controller, ControllerState

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class GravityCompensation(Controller):
    """τ = g(q) (the state's `gravity` when given, else computed with the robot)."""

    name: ClassVar[str] = "gravity_compensation"

    def _configure(self, robot: Robot, parameters: dict[str, object]) -> None:
        pass

    def update(self, state: ControllerState) -> np.ndarray:
        self._check_state(state)
        return np.array(self._gravity(state), dtype=float)
