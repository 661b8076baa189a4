"""One integrator step linearised: A = ∂x⁺/∂x and B = ∂x⁺/∂u, the state x = (q, v) in the
tangent space (δq along each velocity coordinate, q ⊕ δq; Robot.integrate) and u the commanded
effort, for the fixed-step integrators of the simulation and the preview.

The step's dynamics are SimulatedRobot's: v̇ = a(q, v, u) = FD(q, v, τ(v, u)) with the applied
effort τ = clip(u, ±limit) − d v − f tanh(v/ε) (the joints' damping d and smoothed Coulomb
friction f, `JointLosses`). Its derivatives are the analytical forward-dynamics ones
(Robot.forward_dynamics_derivatives): ∂a/∂q, ∂a/∂v + M⁻¹ ∂τ/∂v and M⁻¹ ∂τ/∂u, where ∂τ/∂u is 1
inside the effort limits and 0 where the command is clipped.

The group's part is exact: y = q ⊕ θ moves by δy = Ad(exp(−θ)) δq + J_r(θ) δθ, J_r the right
Jacobian of exp, on each free flyer's (se(3)) and planar joint's (se(2)) rows; the identity
on the others (Pinocchio's dIntegrate). Both come from one matrix exponential,
exp([[−ad_θ, 1], [0, 0]]) = [[Ad(exp(−θ)), J_r(θ)], [0, 1]].

Integrators: "explicit_euler" (v⁺ = v + dt a, q⁺ = q ⊕ dt v), "semi_implicit_euler" (q⁺ =
q ⊕ dt v⁺) and "rk4" (the Runge–Kutta–Munthe-Kaas step of sim.lie_integrators, its second-order
dexp⁻¹ differentiated as it is), chained stage by stage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import expm

from robodyn_ros.model import Model
from robodyn_ros.model.model import FRICTION_VELOCITY
from robodyn_ros.robot import Robot
from robodyn_ros.sim.lie_integrators import GROUP_ROWS, dexp_inverse, group_joints, in_se3, se3_ad

LINEARIZED_INTEGRATORS = ("explicit_euler", "semi_implicit_euler", "rk4")


class StepJacobians(NamedTuple):
    """One step's linearisation: δx⁺ = A δx + B δu, x = (δq, v) in the tangent space."""

    A: np.ndarray  # (2 nv, 2 nv): rows (q⁺, v⁺), columns (q, v)
    B: np.ndarray  # (2 nv, nv)


class JointLosses(NamedTuple):
    """The joints' damping d and Coulomb friction f (one per joint of the robot's tree, as the
    Model lists them) and the friction's smoothing velocity ε (SimulatedRobot's)."""

    damping: np.ndarray
    friction: np.ndarray
    friction_velocity: float = FRICTION_VELOCITY

    @classmethod
    def of(cls, model: Model, friction_velocity: float = FRICTION_VELOCITY) -> JointLosses:
        """The model's own damping and friction, smoothed at `friction_velocity`."""
        return cls(np.asarray(model.damping, dtype=float), np.asarray(model.friction, dtype=float),
                   float(friction_velocity))

    def torques(self, robot: Robot, v: np.ndarray) -> np.ndarray:
        """The efforts they take at the velocities v (..., nv): d v + f tanh(v / ε), on a
        mimic robot Gᵀ (d G v + f tanh(G v / ε)) through its coupling G."""
        coupling = robot.coupling
        rates = v if coupling is None else coupling.rates(v)
        loss = self.damping * rates + self.friction * np.tanh(rates / self.friction_velocity)
        return loss if coupling is None else coupling.forces(loss)

    def torque_rates(self, robot: Robot, v: np.ndarray) -> np.ndarray:
        """∂/∂v of torques at the velocities v (..., nv): (..., nv, nv)."""
        G = np.eye(robot.nv) if robot.coupling is None else robot.coupling.G
        smoothed = np.tanh((v @ G.T) / self.friction_velocity)
        slope = self.damping + self.friction / self.friction_velocity * (1.0 - smoothed**2)
        derivative: np.ndarray = (G.T * slope[..., None, :]) @ G  # tanh' = 1 − tanh²
        return derivative


class _Rates(NamedTuple):
    """A quantity's derivative in the state (nv x 2 nv) and the command (nv x nv)."""

    x: np.ndarray
    u: np.ndarray


class _Slope(NamedTuple):
    """One RK4 stage's slopes and their rates: of the configuration (dexp⁻¹ v, nv) and of the
    velocity (the acceleration)."""

    theta_dot: np.ndarray
    theta_dot_rates: _Rates
    acceleration: np.ndarray
    acceleration_rates: _Rates


def step_jacobians(
    robot: Robot, q: ArrayLike, v: ArrayLike, u: ArrayLike, dt: float,
    integrator: str = "semi_implicit_euler", *, losses: JointLosses | None = None,
    effort_limit: ArrayLike | None = None,
) -> StepJacobians:
    """A and B of one step of `integrator` from (q, v) under the command u, for one state or
    a batch (a planner's trajectory: every step's linearisation from one batch of each kernel).

    Args:
        robot: the robot; a free flyer or planar joint steps on its group.
        q, v, u: a state (nq,), (nv,) and the commanded effort (nv,), or a batch of each
            (B, nq), (B, nv), (B, nv).
        dt: the step, s.
        integrator: one of LINEARIZED_INTEGRATORS.
        losses: the joints' damping and friction (None: none).
        effort_limit: the efforts' limits (nv,), where u is clipped (None: none).

    Returns:
        StepJacobians(A, B), A (..., 2 nv, 2 nv) and B (..., 2 nv, nv).

    Raises:
        ValueError: an unknown integrator, a dt that is not positive, vectors of the wrong
            shape (naming them).
    """
    if integrator not in LINEARIZED_INTEGRATORS:
        raise ValueError(f"step_jacobians: unknown integrator '{integrator}'; choose one of "
                         f"{', '.join(LINEARIZED_INTEGRATORS)}")
    if not (np.isfinite(dt) and dt > 0.0):
        raise ValueError(f"step_jacobians: dt must be positive; got {dt}")
    q, v, u = (np.asarray(x, dtype=float) for x in (q, v, u))
    single = q.ndim == 1
    q, v, u = np.atleast_2d(q), np.atleast_2d(v), np.atleast_2d(u)
    for name, x, size in (("q", q, robot.nq), ("v", v, robot.nv), ("u", u, robot.nv)):
        if x.ndim != 2 or x.shape != (q.shape[0], size):
            raise ValueError(f"step_jacobians: {name} must have shape ({size},) or "
                             f"({q.shape[0]}, {size}) as q's batch; got {x.shape}")
    dynamics = _Dynamics(robot, u, losses, effort_limit)
    jacobians = _STEPS[integrator](robot, dynamics, q, v, dt)
    return StepJacobians(jacobians.A[0], jacobians.B[0]) if single else jacobians


class _Dynamics:
    """a(q, v) under the held commands u (B, nv), and its derivatives (module docstring),
    for a batch of B states."""

    def __init__(self, robot: Robot, u: np.ndarray, losses: JointLosses | None,
                 effort_limit: ArrayLike | None) -> None:
        self.robot, self.nv = robot, robot.nv
        limit = np.full(robot.nv, np.inf) if effort_limit is None else \
            np.asarray(effort_limit, dtype=float)
        self.applied = np.clip(u, -limit, limit)
        self.passes = (np.abs(u) < limit).astype(float)  # ∂clip/∂u
        self.losses = losses

    def effort(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """τ(v) (B, nv) and ∂τ/∂v (B, nv, nv)."""
        if self.losses is None:
            return self.applied, np.zeros((v.shape[0], self.nv, self.nv))
        return (self.applied - self.losses.torques(self.robot, v),
                -self.losses.torque_rates(self.robot, v))

    def at(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, _Rates]:
        """a(q, v) (B, nv) and its rates: [∂a/∂q, ∂a/∂v] (B, nv, 2 nv) and ∂a/∂u."""
        tau, dtau_dv = self.effort(v)
        a = self.robot.forward_dynamics(q, v, tau)
        d = self.robot.forward_dynamics_derivatives(q, v, tau)
        return a, _Rates(np.concatenate([d.dvdot_dq, d.dvdot_dv + d.dvdot_dtau @ dtau_dv],
                                        axis=-1),
                         d.dvdot_dtau * self.passes[:, None, :])


def group_jacobians(robot: Robot, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Ad(exp(−θ)), J_r(θ)), each (B, nv, nv) for θ (B, nv): how q ⊕ θ moves with q and with
    θ (module docstring), block by block over the robot's joints."""
    batch = theta.shape[0]
    adjoint = np.broadcast_to(np.eye(robot.nv), (batch, robot.nv, robot.nv)).copy()
    right = adjoint.copy()
    for joint in group_joints(robot):
        rows = GROUP_ROWS[joint.kind]
        size = rows.shape[0]
        block = np.zeros((batch, 2 * size, 2 * size))
        for b in range(batch):
            block[b, :size, :size] = -se3_ad(in_se3(rows, theta[b, joint.v]))[np.ix_(rows, rows)]
        block[:, :size, size:] = np.eye(size)
        exponential = expm(block)
        adjoint[:, joint.v, joint.v] = exponential[:, :size, :size]
        right[:, joint.v, joint.v] = exponential[:, :size, size:]
    return adjoint, right


def _moved(robot: Robot, theta: np.ndarray, theta_rates: _Rates) -> _Rates:
    """The rates of y = q ⊕ θ in (q, v) and u, θ's rates given."""
    adjoint, right = group_jacobians(robot, theta)
    x = right @ theta_rates.x
    x[..., :robot.nv] += adjoint
    return _Rates(x, right @ theta_rates.u)


def _jacobians(q_next: _Rates, v_next: _Rates) -> StepJacobians:
    return StepJacobians(np.concatenate([q_next.x, v_next.x], axis=-2),
                         np.concatenate([q_next.u, v_next.u], axis=-2))


def _state_rates(batch: int, nv: int) -> tuple[_Rates, _Rates]:
    """The rates of q's tangent displacement and of v themselves: [1 0] and [0 1]."""
    eye, zero = np.eye(nv), np.zeros((nv, nv))
    q_rates = _Rates(np.hstack([eye, zero]), zero)
    v_rates = _Rates(np.hstack([zero, eye]), zero)
    return tuple(_Rates(*(np.broadcast_to(m, (batch, *m.shape)).copy() for m in rates))
                 for rates in (q_rates, v_rates))  # type: ignore[return-value]


def _scaled(s: float, rates: _Rates) -> _Rates:
    return _Rates(s * rates.x, s * rates.u)


def _sum(*terms: _Rates) -> _Rates:
    return _Rates(sum(t.x for t in terms), sum(t.u for t in terms))  # type: ignore[arg-type]


def _acceleration_rates(dynamics: _Dynamics, y: np.ndarray, y_rates: _Rates, v: np.ndarray,
                        v_rates: _Rates) -> tuple[np.ndarray, _Rates]:
    """a at the stage (y, v) and its rates in the step's (q, v) and u by the chain rule."""
    nv = dynamics.nv
    a, local = dynamics.at(y, v)
    by_y, by_v = local.x[..., :nv], local.x[..., nv:]
    return a, _Rates(by_y @ y_rates.x + by_v @ v_rates.x,
                     by_y @ y_rates.u + by_v @ v_rates.u + local.u)


def _euler(robot: Robot, dynamics: _Dynamics, q: np.ndarray, v: np.ndarray, dt: float,
           semi_implicit: bool) -> StepJacobians:
    q_rates, v_rates = _state_rates(q.shape[0], robot.nv)
    a, a_rates = _acceleration_rates(dynamics, q, q_rates, v, v_rates)
    v_next = _sum(v_rates, _scaled(dt, a_rates))
    moving, moving_rates = (v + dt * a, v_next) if semi_implicit else (v, v_rates)
    return _jacobians(_moved(robot, dt * moving, _scaled(dt, moving_rates)), v_next)


def _explicit_euler(robot: Robot, dynamics: _Dynamics, q: np.ndarray, v: np.ndarray,
                    dt: float) -> StepJacobians:
    return _euler(robot, dynamics, q, v, dt, semi_implicit=False)


def _semi_implicit_euler(robot: Robot, dynamics: _Dynamics, q: np.ndarray, v: np.ndarray,
                         dt: float) -> StepJacobians:
    return _euler(robot, dynamics, q, v, dt, semi_implicit=True)


def _dexp_inverse_rates(robot: Robot, theta: np.ndarray, theta_rates: _Rates, v: np.ndarray,
                        v_rates: _Rates) -> tuple[np.ndarray, _Rates]:
    """θ̇ = dexp⁻¹(θ, v) of sim.lie_integrators (v + ½[θ, v] + (1/12)[θ, [θ, v]] on each
    multi-DOF joint) and its rates: ∂/∂v = 1 + ½ ad_θ + (1/12) ad_θ², ∂/∂θ = −½ ad_v −
    (1/12)(ad_[θ,v] + ad_θ ad_v); state by state."""
    batch, nv = theta.shape[0], robot.nv
    by_theta = np.zeros((batch, nv, nv))
    by_v = np.broadcast_to(np.eye(nv), (batch, nv, nv)).copy()
    theta_dot = v.copy()
    for joint in group_joints(robot):
        rows = GROUP_ROWS[joint.kind]
        cut = np.ix_(rows, rows)
        for b in range(batch):
            velocity = in_se3(rows, v[b, joint.v])
            ad_theta, ad_v = se3_ad(in_se3(rows, theta[b, joint.v])), se3_ad(velocity)
            ad_bracket = se3_ad(ad_theta @ velocity)
            by_v[b, joint.v, joint.v] += (0.5 * ad_theta + ad_theta @ ad_theta / 12.0)[cut]
            by_theta[b, joint.v, joint.v] = (-0.5 * ad_v - (ad_bracket + ad_theta @ ad_v)
                                             / 12.0)[cut]
    for b in range(batch if group_joints(robot) else 0):
        theta_dot[b] = dexp_inverse(robot, theta[b], v[b])
    rates = _Rates(by_theta @ theta_rates.x + by_v @ v_rates.x,
                   by_theta @ theta_rates.u + by_v @ v_rates.u)
    return theta_dot, rates


def _rk4(robot: Robot, dynamics: _Dynamics, q: np.ndarray, v: np.ndarray,
         dt: float) -> StepJacobians:
    """sim.lie_integrators.lie_rk4's stages, each with its rates."""
    q_rates, v_rates = _state_rates(q.shape[0], robot.nv)
    a1, a1_rates = _acceleration_rates(dynamics, q, q_rates, v, v_rates)
    slopes = [_Slope(v, v_rates, a1, a1_rates)]
    for fraction, previous in ((0.5, 0), (0.5, 1), (1.0, 2)):
        slope = slopes[previous]
        h = fraction * dt
        theta, theta_rates = h * slope.theta_dot, _scaled(h, slope.theta_dot_rates)
        stage_v = v + h * slope.acceleration
        stage_v_rates = _sum(v_rates, _scaled(h, slope.acceleration_rates))
        y, y_rates = robot.integrate(q, theta), _moved(robot, theta, theta_rates)
        a_k, a_k_rates = _acceleration_rates(dynamics, y, y_rates, stage_v, stage_v_rates)
        theta_dot_k, theta_dot_k_rates = _dexp_inverse_rates(robot, theta, theta_rates,
                                                             stage_v, stage_v_rates)
        slopes.append(_Slope(theta_dot_k, theta_dot_k_rates, a_k, a_k_rates))
    weights = (1.0, 2.0, 2.0, 1.0)
    theta = dt / 6.0 * np.sum([w * s.theta_dot for w, s in zip(weights, slopes, strict=True)],
                              axis=0)
    theta_rates = _sum(*(_scaled(dt / 6.0 * w, s.theta_dot_rates)
                         for w, s in zip(weights, slopes, strict=True)))
    v_next = _sum(v_rates, *(_scaled(dt / 6.0 * w, s.acceleration_rates)
                             for w, s in zip(weights, slopes, strict=True)))
    return _jacobians(_moved(robot, theta, theta_rates), v_next)


_STEPS: dict[str, Callable[[Robot, _Dynamics, np.ndarray, np.ndarray, float], StepJacobians]] = {
    "explicit_euler": _explicit_euler,
    "semi_implicit_euler": _semi_implicit_euler,
    "rk4": _rk4,
}


__all__ = ["LINEARIZED_INTEGRATORS", "JointLosses", "StepJacobians", "group_jacobians",
           "step_jacobians"]
