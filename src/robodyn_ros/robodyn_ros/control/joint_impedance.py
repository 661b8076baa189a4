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

from robodyn_ros.control.joint_target import JointTargetController
from robodyn_ros.control.plugin import ControllerState, boolean

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class JointImpedance(JointTargetController):
    """A spring-damper per joint about a target position, plus gravity compensation."""

    name: ClassVar[str] = "joint_impedance"
    PARAMETERS: ClassVar[tuple[str, ...]] = ("stiffness", "damping", "target", "feedforward")

    def _configure(self, robot: Robot, parameters: dict[str, object]) -> None:
        self.stiffness, self.damping = self._configure_gains_and_target(
            robot, parameters, ("stiffness", "damping"))
        self.feedforward = boolean(parameters, "feedforward", False)

    def update(self, state: ControllerState) -> np.ndarray:
        self._check_state(state)
        q_target = self._held_target(state)
        g = self._gravity(state)
        tau: np.ndarray = (
            self.stiffness * (q_target - state.q)
            - self.damping * (state.qd - self.qd_target)
            + g
        )
        if self.feedforward:
            coriolis = self._bias(state) - g
            tau += self._mass_matrix(state) @ self.qdd_target + coriolis
        return tau
