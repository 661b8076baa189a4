"""Joint impedance: τ = K (q* − q) − D (q̇ − q̇*) + g(q) [+ M(q) q̈* + C(q, q̇) q̇].

Parameters (K, D: one number for every joint or one per joint, in ``robot.joint_names`` order):

- ``stiffness`` (required): K in N·m/rad (N/m for prismatic joints), ≥ 0.
- ``damping`` (required): D in N·m·s/rad, ≥ 0.
- ``target``: q* (n,); default: the position of the first `update` (hold where it starts).
- ``feedforward`` (false): add M q̈* + C q̇ (C q̇ = b − g), the inverse-dynamics feed-forward
  for tracking a trajectory given through `set_target(q, qd, qdd)`.

q̇* and q̈* are zero unless `set_target` gives them; with q̇* = 0 the damping is − D q̇.

Compiled mirror: control.compiled_laws.joint_tracking_torque, the law with feedforward as the
preview's rollout kernel runs it; a test holds the two to the same τ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.control.plugin import (
    Controller,
    ControllerState,
    _vector,
    boolean,
    joint_vector,
)

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class JointImpedance(Controller):
    """A spring-damper per joint about a target position, plus gravity compensation."""

    name: ClassVar[str] = "joint_impedance"
    PARAMETERS: ClassVar[dict[str, str]] = {
        "stiffness": "K, N·m/rad: one number or one per joint (required)",
        "damping": "D, N·m·s/rad: one number or one per joint (required)",
        "target": "q* (n,); default: hold the first position seen",
        "feedforward": "add M q̈* + C q̇ (default false)",
    }

    def _configure(self, robot: Robot, parameters: dict[str, object]) -> None:
        n = robot.nv
        for required in ("stiffness", "damping"):
            if required not in parameters:
                raise ValueError(f"{type(self).__name__}: parameter '{required}' is required")
        stiffness = joint_vector(parameters, "stiffness", n, nonnegative=True)
        damping = joint_vector(parameters, "damping", n, nonnegative=True)
        assert stiffness is not None and damping is not None  # required: checked above
        self.stiffness, self.damping = stiffness, damping
        self.feedforward = boolean(parameters, "feedforward", False)
        self.q_target = joint_vector(parameters, "target", n)
        self.qd_target = np.zeros(n)
        self.qdd_target = np.zeros(n)

    def set_target(
        self, q: ArrayLike, qd: ArrayLike | None = None, qdd: ArrayLike | None = None
    ) -> None:
        """Target position q* and optionally velocity q̇* and acceleration q̈* (default 0)."""
        n = self.robot.nv
        self.q_target = _vector(q, "q", n, nonnegative=False, broadcast=False)
        self.qd_target = (
            np.zeros(n) if qd is None else _vector(qd, "qd", n, nonnegative=False, broadcast=False)
        )
        self.qdd_target = (
            np.zeros(n)
            if qdd is None
            else _vector(qdd, "qdd", n, nonnegative=False, broadcast=False)
        )

    def update(self, state: ControllerState) -> np.ndarray:
        self._check_state(state)
        if self.q_target is None:
            self.q_target = state.q.copy()
        g = self._gravity(state)
        tau = (
            self.stiffness * (self.q_target - state.q)
            - self.damping * (state.qd - self.qd_target)
            + g
        )
        if self.feedforward:
            coriolis = self._bias(state) - g
            tau += self._mass_matrix(state) @ self.qdd_target + coriolis
        return tau
