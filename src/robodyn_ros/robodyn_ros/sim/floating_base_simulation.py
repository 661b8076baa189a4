"""Simulation of a floating-base robot (or any robot): integrators on its configuration's Lie
group (SE(3) for a free flyer, SE(2) for a planar joint, R for the others), and
FloatingBaseSimulation, the robot free or held on rigid contacts.

The integrators are pure functions like sim.integrators', over ``state = (q, v)`` (q of nq, v of
nv), with ``acceleration(q, v) -> v̇`` and the robot, whose ``integrate`` is the group operation
q ⊕ v: they keep a free flyer's quaternion a unit one, where adding dt·v to q would not. The
inputs are not modified. The compiled rollout (sim.rollout, dynamics.lie_group) steps the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.model.model import MULTI_DOF_JOINTS
from robodyn_ros.robot import Robot
from robodyn_ros.robot.configuration import check_configuration
from robodyn_ros.robot.contact_dynamics import Contact, ContactDynamics, held_where_they_are

LieState = tuple[np.ndarray, np.ndarray]
Acceleration = Callable[[np.ndarray, np.ndarray], np.ndarray]
LieIntegrator = Callable[[LieState, float, Acceleration, Robot], LieState]


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
    configuration q0 ⊕ θ, θ̇ = dexp⁻¹(θ, v) (_dexp_inverse). Four acceleration evaluations
    per step."""
    # H. Munthe-Kaas, "Runge–Kutta methods on Lie groups", BIT 38 (1998) 92–111.
    q0, v0 = state
    half = 0.5 * dt
    a1 = acceleration(q0, v0)
    theta_dot1 = v0  # dexp⁻¹ at θ = 0 is the identity
    v2 = v0 + half * a1
    theta2 = half * theta_dot1
    a2 = acceleration(robot.integrate(q0, theta2), v2)
    theta_dot2 = _dexp_inverse(robot, theta2, v2)
    v3 = v0 + half * a2
    theta3 = half * theta_dot2
    a3 = acceleration(robot.integrate(q0, theta3), v3)
    theta_dot3 = _dexp_inverse(robot, theta3, v3)
    v4 = v0 + dt * a3
    theta4 = dt * theta_dot3
    a4 = acceleration(robot.integrate(q0, theta4), v4)
    theta_dot4 = _dexp_inverse(robot, theta4, v4)
    sixth = dt / 6.0
    theta = sixth * (theta_dot1 + 2.0 * theta_dot2 + 2.0 * theta_dot3 + theta_dot4)
    return robot.integrate(q0, theta), v0 + sixth * (a1 + 2.0 * a2 + 2.0 * a3 + a4)


def _dexp_inverse(robot: Robot, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
    """θ̇ of q0 ⊕ θ moving at the velocity v: v + ½[θ, v] + (1/12)[θ, [θ, v]], the inverse
    differential of exp to second order in θ (the next term, of the fourth, is below RK4's
    error), where [θ, v] is the se(3) bracket on a free flyer's rows, se(2)'s on a planar
    joint's (the (vx, vy, ω_z) part of se(3)) and zero on the other joints.

    q0 ⊕ θ = M(q0) exp(θ) moves the base in its own frame (v is a body velocity), where
    exp(θ)⁻¹ d/dt exp(θ) = dexp₋θ(θ̇); so θ̇ = dexp₋θ⁻¹(v), whose ½[θ, v] term has the sign
    opposite to the one of a group acting from the left (Munthe-Kaas' ẏ = A(y) y)."""
    theta_dot = v.copy()
    for joint in robot.configuration_joints:
        if joint.kind in MULTI_DOF_JOINTS:
            embed = SE2_IN_SE3 if joint.kind == "planar" else slice(None)
            twist, velocity = np.zeros(6), np.zeros(6)
            twist[embed], velocity[embed] = theta[joint.v], v[joint.v]
            ad = _ad(twist)
            bracket = ad @ velocity
            theta_dot[joint.v] += (0.5 * bracket + (ad @ bracket) / 12.0)[embed]
    return theta_dot


SE2_IN_SE3 = [0, 1, 5]  # a planar joint's (vx, vy, ω_z) in se(3)'s [linear; angular]


def _ad(twist: np.ndarray) -> np.ndarray:
    """ad_θ, 6 x 6: the se(3) bracket [θ, v] = ad_θ v, the spatial motion cross product in
    [linear; angular] order, [θ_ω × v_lin + θ_lin × v_ω; θ_ω × v_ω]."""
    ad = np.zeros((6, 6))
    ad[:3, :3] = ad[3:, 3:] = _skew(twist[3:])
    ad[:3, 3:] = _skew(twist[:3])
    return ad


def _skew(x: np.ndarray) -> np.ndarray:
    """[x]×, the matrix of x × ·."""
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


LIE_INTEGRATORS: dict[str, LieIntegrator] = {
    "semi_implicit_euler": lie_semi_implicit_euler,
    "rk4": lie_rk4,
}


@dataclass(frozen=True)
class FloatingRun:
    """The states FloatingBaseSimulation.run went through, its start state first.

    Attributes:
        times: (K + 1,) the simulation time of each state, s.
        q: (K + 1, nq) the configurations.
        v: (K + 1, nv) the velocities.
    """

    times: np.ndarray
    q: np.ndarray
    v: np.ndarray


class FloatingBaseSimulation:
    """A floating-base robot moving under given generalised forces, floating free or with
    contact frames held in the world (rigid bilateral contacts, Baumgarte-stabilised).

    Attributes:
        robot: the robot.
        integrator: the LIE_INTEGRATORS function that steps.
        dt: the step, s.
        contacts: the contacts, each with its placement (those given without one are held
            where they were at the start).
        kp, kd: the Baumgarte gains of the contacts, 1/s² and 1/s.
        q, v: the state now (nq and nv).
        t: the time now, s.
        last: the ContactDynamics at the start of the last step (its forces are what the world
            exerted then), None before the first step or without contacts.
    """

    def __init__(
        self,
        robot: Robot,
        integrator: str = "rk4",
        dt: float = 1e-3,
        contacts: Sequence[Contact] = (),
        kp: float = 0.0,
        kd: float = 0.0,
        q: ArrayLike | None = None,
        v: ArrayLike | None = None,
    ) -> None:
        """Start a simulation at time 0.

        Args:
            robot: the robot, floating (model.floating_base) or not.
            integrator: a name in LIE_INTEGRATORS.
            dt: the step, s, > 0.
            contacts: Contacts on frames of the robot; a placement of None holds the frame
                where it is at the start.
            kp, kd: the contacts' Baumgarte gains, ≥ 0.
            q: the start configuration (nq), the base quaternion of unit norm; None for
                robot.neutral().
            v: the start velocity (nv); None for zeros.

        Raises:
            ValueError: an argument of the wrong type, shape or value, naming it (a
                quaternion in q not of unit norm).
        """
        if not isinstance(robot, Robot):
            raise ValueError(f"robot must be a Robot; got {type(robot).__name__}")
        if integrator not in LIE_INTEGRATORS:
            raise ValueError(f"integrator must be one of {', '.join(LIE_INTEGRATORS)}; "
                             f"got {integrator!r}")
        _check_number("dt", dt, positive=True)
        _check_number("kp", kp)
        _check_number("kd", kd)
        self.robot = robot
        self.integrator = LIE_INTEGRATORS[integrator]
        self.dt, self.kp, self.kd = float(dt), float(kp), float(kd)
        self.q = robot.neutral() if q is None else _vector("q", q, robot.nq)
        self.v = np.zeros(robot.nv) if v is None else _vector("v", v, robot.nv)
        # a ValueError naming the joint for a quaternion not of unit norm
        check_configuration(robot.configuration_joints, self.q, "q")
        self.contacts = held_where_they_are(robot, self.q, contacts)
        self.t = 0.0
        self.last: ContactDynamics | None = None

    def step(self, tau: ArrayLike) -> None:
        """Advance one step dt under the generalised forces tau.

        Args:
            tau: (nv) τ[:6] the wrench [force; torque] on the base in the base frame (zero
                unless something pushes on it), then the joint efforts.

        Raises:
            ValueError: tau is not nv finite numbers.
            LinAlgError: the contacts are not independent at a state of the step.
        """
        tau = _vector("tau", tau, self.robot.nv)
        evaluations: list[ContactDynamics] = []

        def acceleration(q: np.ndarray, v: np.ndarray) -> np.ndarray:
            if not self.contacts:
                vdot: np.ndarray = self.robot.forward_dynamics(q, v, tau)
                return vdot
            dynamics = self.robot.constrained_forward_dynamics(q, v, tau, self.contacts,
                                                               self.kp, self.kd)
            evaluations.append(dynamics)
            return dynamics.vdot

        self.q, self.v = self.integrator((self.q, self.v), self.dt, acceleration, self.robot)
        self.t += self.dt
        self.last = evaluations[0] if evaluations else None  # each integrator starts at (q, v)

    def run(self, steps: int, torque: Callable[[FloatingBaseSimulation], ArrayLike]) -> FloatingRun:
        """Take `steps` steps, each under the generalised forces torque(self) asks for then.

        Args:
            steps: how many steps, ≥ 0.
            torque: the controller, called at the start of every step: simulation -> τ (nv).

        Returns:
            The FloatingRun of the steps + 1 states from the one now.

        Raises:
            ValueError: steps is not an integer ≥ 0, or a τ is not nv finite numbers.
            LinAlgError: as step.
        """
        if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 0:
            raise ValueError(f"steps must be an integer ≥ 0; got {steps!r}")
        times, qs, vs = [self.t], [self.q], [self.v]
        for _ in range(steps):
            self.step(torque(self))
            times.append(self.t)
            qs.append(self.q)
            vs.append(self.v)
        return FloatingRun(np.array(times), np.array(qs), np.array(vs))


def _check_number(name: str, value: float, *, positive: bool = False) -> None:
    """A ValueError naming `name` unless value is a finite real number > 0 (positive) or ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number; got {type(value).__name__}")
    if not np.isfinite(value) or value < 0.0 or (positive and value == 0.0):
        raise ValueError(f"{name} must be finite and {'> 0' if positive else '≥ 0'}; "
                         f"got {value}")


def _vector(name: str, x: ArrayLike, size: int) -> np.ndarray:
    """x as a new float64 vector of `size` finite numbers, or a ValueError naming it."""
    array = np.array(x)
    if array.dtype.kind not in "biuf" or array.shape != (size,) or not np.isfinite(array).all():
        raise ValueError(f"{name} must be {size} finite numbers; got "
                         f"{array.dtype} values of shape {array.shape}")
    return array.astype(float)


__all__ = ["LIE_INTEGRATORS", "FloatingBaseSimulation", "FloatingRun", "LieIntegrator",
           "LieState", "lie_rk4", "lie_semi_implicit_euler"]
