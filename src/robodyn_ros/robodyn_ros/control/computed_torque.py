"""Computed torque: τ = M(q) (q̈* + Kp (q* − q) + Kd (q̇* − q̇)) + C(q, q̇) q̇ + g(q)
[+ d q̇* + f tanh(q̇*/ε)].

The inverse dynamics turn the robot into one double integrator per joint, so the error obeys
ë + Kd ė + Kp e = 0 whatever the joint's inertia: one pair of gains in 1/s² and 1/s serves a
heavy shoulder and a light wrist alike, where gains in N·m/rad that hold the shoulder make the
wrist's loop unstable at a control rate of 100 Hz. The friction feed-forward adds the joint
friction of the description (`<dynamics damping friction>`, smoothed over ε =
model.FRICTION_VELOCITY as the simulation smooths it) at the reference velocity.

Parameters (Kp, Kd: one number for every joint or one per joint, in ``robot.joint_names``
order):

- ``kp`` (required): Kp in 1/s², ≥ 0.
- ``kd`` (required): Kd in 1/s, ≥ 0; 2 √Kp is critical damping.
- ``target``: q* (n,); default: the position of the first `update` (hold where it starts).
- ``friction_feedforward`` (true): add d q̇* + f tanh(q̇*/ε).

q̇* and q̈* are zero unless `set_target` gives them, as controller_node's joint trajectories do.
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
from robodyn_ros.model.model import FRICTION_VELOCITY

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class ComputedTorque(Controller):
    """The inverse dynamics of the reference acceleration corrected by PD feedback."""

    name: ClassVar[str] = "computed_torque"
    PARAMETERS: ClassVar[dict[str, str]] = {
        "kp": "Kp, 1/s²: one number or one per joint (required)",
        "kd": "Kd, 1/s: one number or one per joint (required)",
        "target": "q* (n,); default: hold the first position seen",
        "friction_feedforward": "add the description's joint friction at q̇* (default true)",
    }

    def _configure(self, robot: Robot, parameters: dict[str, object]) -> None:
        n = robot.nv
        for required in ("kp", "kd"):
            if required not in parameters:
                raise ValueError(f"{type(self).__name__}: parameter '{required}' is required")
        kp = joint_vector(parameters, "kp", n, nonnegative=True)
        kd = joint_vector(parameters, "kd", n, nonnegative=True)
        assert kp is not None and kd is not None  # required: checked above
        self.kp, self.kd = kp, kd
        self.friction_feedforward = boolean(parameters, "friction_feedforward", True)
        self.damping = np.asarray(robot.per_coordinate(robot.model.damping), dtype=float)
        self.friction = np.asarray(robot.per_coordinate(robot.model.friction), dtype=float)
        self.q_target = joint_vector(parameters, "target", n)
        self.qd_target = np.zeros(n)
        self.qdd_target = np.zeros(n)

    def set_target(
        self, q: ArrayLike, qd: ArrayLike | None = None, qdd: ArrayLike | None = None
    ) -> None:
        """Target position q* and optionally velocity q̇* and acceleration q̈* (default 0)."""
        n = self.robot.nv
        self.q_target, self.qd_target, self.qdd_target = (
            np.zeros(n) if value is None
            else _vector(value, name, n, nonnegative=False, broadcast=False)
            for value, name in ((q, "q"), (qd, "qd"), (qdd, "qdd")))

    def update(self, state: ControllerState) -> np.ndarray:
        self._check_state(state)
        if self.q_target is None:
            self.q_target = state.q.copy()
        acceleration = (self.qdd_target + self.kp * (self.q_target - state.q)
                        + self.kd * (self.qd_target - state.qd))
        tau = self._mass_matrix(state) @ acceleration + self._bias(state)
        if self.friction_feedforward:
            tau += (self.damping * self.qd_target
                    + self.friction * np.tanh(self.qd_target / FRICTION_VELOCITY))
        return np.asarray(tau, dtype=float)
