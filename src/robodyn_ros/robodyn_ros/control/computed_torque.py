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

from robodyn_ros.control.joint_target import JointTargetController
from robodyn_ros.control.plugin import ControllerState, boolean
from robodyn_ros.model.model import FRICTION_VELOCITY

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class ComputedTorque(JointTargetController):
    """The inverse dynamics of the reference acceleration corrected by PD feedback."""

    name: ClassVar[str] = "computed_torque"
    PARAMETERS: ClassVar[tuple[str, ...]] = ("kp", "kd", "target", "friction_feedforward")

    def _configure(self, robot: Robot, parameters: dict[str, object]) -> None:
        self.kp, self.kd = self._configure_gains_and_target(robot, parameters, ("kp", "kd"))
        self.friction_feedforward = boolean(parameters, "friction_feedforward", True)
        self.joint_damping = np.asarray(robot.per_coordinate(robot.model.damping), dtype=float)
        self.joint_friction = np.asarray(robot.per_coordinate(robot.model.friction), dtype=float)

    def update(self, state: ControllerState) -> np.ndarray:
        self._check_state(state)
        q_target = self._held_target(state)
        acceleration = (self.qdd_target + self.kp * (q_target - state.q)
                        + self.kd * (self.qd_target - state.qd))
        tau = self._mass_matrix(state) @ acceleration + self._bias(state)
        if self.friction_feedforward:
            tau += (self.joint_damping * self.qd_target
                    + self.joint_friction * np.tanh(self.qd_target / FRICTION_VELOCITY))
        return np.asarray(tau, dtype=float)
