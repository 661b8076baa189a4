"""Integrators on a robot's configuration Lie group (SE(3) for a free flyer, SE(2) for a planar
joint, R for the others), which SimulatedRobot steps a floating or mobile base with.

They are pure functions like sim.integrators', over ``state = (q, v)`` (q of nq, v of nv), with
``acceleration(q, v) -> v̇`` and the robot, whose ``integrate`` is the group operation q ⊕ v:
they keep a free flyer's quaternion a unit one, where adding dt·v to q would not. The inputs
are not modified. The compiled rollout (sim.rollout, dynamics.lie_group) steps the same.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from robodyn_ros.model.inertia import skew
from robodyn_ros.model.model import ConfigurationJoint
from robodyn_ros.robot import Robot

LieState = tuple[np.ndarray, np.ndarray]
Acceleration = Callable[[np.ndarray, np.ndarray], np.ndarray]
LieIntegrator = Callable[[LieState, float, Acceleration, Robot], LieState]


def lie_explicit_euler(
    state: LieState, dt: float, acceleration: Acceleration, robot: Robot
) -> LieState:
    """Explicit Euler on the group, first order: q⁺ = q ⊕ dt·v, v⁺ = v + dt·a(q, v). Not a
    simulation's integrator (semi-implicit Euler is as cheap and keeps the energy bounded);
    a planner's model may step it (sim.ilqr, sim.linearization)."""
    q, v = state
    return robot.integrate(q, v, dt), v + dt * acceleration(q, v)


def lie_semi_implicit_euler(
    state: LieState, dt: float, acceleration: Acceleration, robot: Robot
) -> LieState:
    """Semi-implicit Euler on the group, first order: v⁺ = v + dt·a(q, v), q⁺ = q ⊕ dt·v⁺.
    One acceleration evaluation per step."""
    q, v = state
    v_next = v + dt * acceleration(q, v)
    return robot.integrate(q, v_next, dt), v_next


def lie_rk4(
    state: LieState, dt: float, acceleration: Acceleration, robot: Robot
) -> LieState:
    """Fourth-order Runge–Kutta–Munthe-Kaas: the classical RK4 tableau on (θ, v) with the
    configuration q0 ⊕ θ, θ̇ = dexp⁻¹(θ, v) (dexp_inverse). Four acceleration evaluations
    per step."""
    # H. Munthe-Kaas, "Runge–Kutta methods on Lie groups", BIT 38 (1998) 92–111.
    q0, v0 = state
    half = 0.5 * dt
    a1 = acceleration(q0, v0)
    theta_dot1 = v0  # dexp⁻¹ at θ = 0 is the identity
    v2 = v0 + half * a1
    theta2 = half * theta_dot1
    a2 = acceleration(robot.integrate(q0, theta2), v2)
    theta_dot2 = dexp_inverse(robot, theta2, v2)
    v3 = v0 + half * a2
    theta3 = half * theta_dot2
    a3 = acceleration(robot.integrate(q0, theta3), v3)
    theta_dot3 = dexp_inverse(robot, theta3, v3)
    v4 = v0 + dt * a3
    theta4 = dt * theta_dot3
    a4 = acceleration(robot.integrate(q0, theta4), v4)
    theta_dot4 = dexp_inverse(robot, theta4, v4)
    sixth = dt / 6.0
    theta = sixth * (theta_dot1 + 2.0 * theta_dot2 + 2.0 * theta_dot3 + theta_dot4)
    return robot.integrate(q0, theta), v0 + sixth * (a1 + 2.0 * a2 + 2.0 * a3 + a4)


def dexp_inverse(robot: Robot, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
    """θ̇ of q0 ⊕ θ moving at the velocity v: v + ½[θ, v] + (1/12)[θ, [θ, v]], the inverse
    differential of exp to second order in θ (the next term, of the fourth, is below RK4's
    error), where [θ, v] is the se(3) bracket on a free flyer's rows, se(2)'s on a planar
    joint's (the (vx, vy, ω_z) part of se(3)) and zero on the other joints.

    q0 ⊕ θ = M(q0) exp(θ) moves the base in its own frame (v is a body velocity), where
    exp(θ)⁻¹ d/dt exp(θ) = dexp₋θ(θ̇); so θ̇ = dexp₋θ⁻¹(v), whose ½[θ, v] term has the sign
    opposite to the one of a group acting from the left (Munthe-Kaas' ẏ = A(y) y)."""
    theta_dot = v.copy()
    for joint in group_joints(robot):
        rows = GROUP_ROWS[joint.kind]
        ad = se3_ad(in_se3(rows, theta[joint.v]))
        bracket = ad @ in_se3(rows, v[joint.v])
        theta_dot[joint.v] += (0.5 * bracket + (ad @ bracket) / 12.0)[rows]
    return theta_dot


SE2_IN_SE3 = [0, 1, 5]  # a planar joint's (vx, vy, ω_z) in se(3)'s [linear; angular]
GROUP_ROWS = {"floating": np.arange(6), "planar": np.array(SE2_IN_SE3)}
"""A multi-DOF joint's velocity rows in se(3)'s [linear; angular]: a planar joint's (vx, vy, ω_z)
is a subalgebra, se(2)."""


def group_joints(robot: Robot) -> list[ConfigurationJoint]:
    """The robot's free flyers and planar joints."""
    return [joint for joint in robot.configuration_joints if joint.kind in GROUP_ROWS]


def in_se3(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A joint's rows of a velocity or motion as a twist of se(3) (6,)."""
    twist = np.zeros(6)
    twist[rows] = values
    return twist


def se3_ad(twist: np.ndarray) -> np.ndarray:
    """ad_θ, 6 x 6: the se(3) bracket [θ, v] = ad_θ v, the spatial motion cross product in
    [linear; angular] order, [θ_ω × v_lin + θ_lin × v_ω; θ_ω × v_ω]."""
    ad = np.zeros((6, 6))
    ad[:3, :3] = ad[3:, 3:] = skew(twist[3:])
    ad[:3, 3:] = skew(twist[:3])
    return ad


LIE_INTEGRATORS: dict[str, LieIntegrator] = {
    "semi_implicit_euler": lie_semi_implicit_euler,
    "rk4": lie_rk4,
}


__all__ = ["GROUP_ROWS", "LIE_INTEGRATORS", "LieIntegrator", "LieState", "dexp_inverse",
           "group_joints", "in_se3", "lie_explicit_euler", "lie_rk4", "lie_semi_implicit_euler",
           "se3_ad"]
