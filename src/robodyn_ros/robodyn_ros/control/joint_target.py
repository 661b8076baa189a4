"""What the joint-space controllers share: two required gains, one number or one per joint,
and a joint target (q*, q̇*, q̈*) held where the robot starts until the ``target`` parameter
or set_target gives one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.control.plugin import Controller, ControllerState, _vector, joint_vector

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class JointTargetController(Controller):
    """A Controller that tracks a joint target (q*, q̇*, q̈*)."""

    q_target: np.ndarray | None
    qd_target: np.ndarray
    qdd_target: np.ndarray

    def _configure_gains_and_target(self, robot: Robot, parameters: dict[str, object],
                                    gains: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
        """Read the ``target`` parameter (none: hold the first position seen) and return the
        two required gains named `gains`, each ≥ 0.

        Raises:
            ValueError: a gain is missing, or a value is not finite, of the wrong size or
                negative, naming the parameter.
        """
        n = robot.nv
        for required in gains:
            if required not in parameters:
                raise ValueError(f"{type(self).__name__}: parameter '{required}' is required")
        first, second = (joint_vector(parameters, name, n, nonnegative=True) for name in gains)
        assert first is not None and second is not None  # required: checked above
        self.q_target = joint_vector(parameters, "target", n)
        self.qd_target, self.qdd_target = np.zeros(n), np.zeros(n)
        return first, second

    def set_target(
        self, q: ArrayLike, qd: ArrayLike | None = None, qdd: ArrayLike | None = None
    ) -> None:
        """Target position q* and optionally velocity q̇* and acceleration q̈* (default 0)."""
        n = self.robot.nv
        self.q_target = _vector(q, "q", n, nonnegative=False, broadcast=False)
        self.qd_target, self.qdd_target = (
            np.zeros(n) if value is None
            else _vector(value, name, n, nonnegative=False, broadcast=False)
            for value, name in ((qd, "qd"), (qdd, "qdd")))

    def _held_target(self, state: ControllerState) -> np.ndarray:
        """q*, the state's position when no target was given yet (then held)."""
        if self.q_target is None:
            self.q_target = state.q.copy()
        return self.q_target
