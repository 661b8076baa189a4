"""Checks against Pinocchio that tests of several folders make: the joint-space quantities at
one state, and the panda's fall under zero effort through SimulatedRobot and the preview."""

from __future__ import annotations

import numpy as np

from robodyn_ros import Robot
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import TorqueProfile
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.tolerances import close


def expect_joint_space(robot: Robot, oracle: PinocchioOracle, q, qd, x,
                       forward_dynamics_methods: tuple[str, ...]) -> None:
    """M, M⁻¹, g, b, τ and q̈ (by each method) at one state are the oracle's."""
    close(robot.mass_matrix(q), oracle.mass_matrix(q))
    close(robot.mass_matrix_inverse(q), oracle.mass_matrix_inverse(q))
    close(robot.gravity_torques(q), oracle.gravity_torques(q))
    close(robot.bias_forces(q, qd), oracle.bias_forces(q, qd))
    close(robot.inverse_dynamics(q, qd, x), oracle.rnea(q, qd, x))
    for method in forward_dynamics_methods:
        close(robot.forward_dynamics(q, qd, x, method=method), oracle.aba(q, qd, x))


def expect_idle_fall(robot: Robot, oracle: PinocchioOracle) -> None:
    """The panda under zero effort, stepped by SimulatedRobot and by the preview's kernel
    (semi-implicit Euler), against the same steps over Pinocchio's ABA, to 1e-9 rad."""
    model, dt = robot.model, 1e-3
    q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
    idle = TorqueProfile("idle", "panda_hand_tcp", np.zeros(1), np.zeros((1, 7)))
    settings = PreviewSettings(horizon=0.02, dt=dt, integrator="semi_implicit_euler")
    (result,) = preview(robot, [idle], settings, q0)
    simulated = SimulatedRobot(robot, "semi_implicit_euler", dt, q=q0)
    q, qd = q0.copy(), np.zeros(7)
    for k in range(settings.steps):
        simulated.step(np.zeros(7))
        friction = model.friction * np.tanh(qd / settings.friction_velocity)
        qd = qd + dt * oracle.aba(q, qd, -model.damping * qd - friction)
        q = q + dt * qd
        np.testing.assert_allclose(simulated.q, q, rtol=0, atol=1e-9)
        np.testing.assert_allclose(result.q[k + 1], q, rtol=0, atol=1e-9)
    assert np.abs(q - q0).max() > 1e-4  # it moved
