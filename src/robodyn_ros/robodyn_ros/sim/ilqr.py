"""A reach planned by iterative LQR: the joint efforts over a horizon that bring a frame to a pose
at its end, at rest, for little effort and away from the joint limits, with the time-varying
feedback gains that hold the robot on the plan.

iLQR (Li & Todorov 2004), with Tassa, Erez & Todorov's (2012) regularisation μ of the value's
Hessian and backtracking line search on the control update. The model is the simulation's step
(sim.linearization): SimulatedRobot's integrator at the plan's period, its joints' damping,
smoothed friction and effort limits; each backward pass linearises it along the nominal
trajectory with the analytical derivatives (step_jacobians). x = (q, v) in the tangent space.

The cost, for N steps of period h:
    Σ_k ½ h (w_u |u_k|² + w_s |s(u_k)|² + w_l |d(q_k, v_k)|²)  +  ½ (w_p |p(q_N) − p*|²
                                               + w_R |log(R* R(q_N)ᵀ)|²
                                               + w_v |v_N|²),
s(u) how far each effort is past its limit and d(q, v) how far each joint is inside its
position limits' margin and past VELOCITY_MARGIN of its velocity limit (zero elsewhere): the
plan's model takes the efforts as commanded, where the simulation clips them, and this cost
keeps them within their limits. The terminal cost's Hessian is Gauss–Newton's, JᵀJ of its
residuals (J_lin, J_ang the frame's Jacobian rows: the rotation error e = log(R* Rᵀ) moves by
−J_r⁻¹(e) J_ang, J_r SO(3)'s right Jacobian); the line search measures the exact cost. The
first nominal trajectory is the operational-space controller's rollout to the same pose
(control.operational_space_controller, its plugin stepped at the plan's period).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robodyn_ros.control import load_controller
from robodyn_ros.control.operational_space_controller import rotation_error
from robodyn_ros.control.plugin import ControllerState
from robodyn_ros.dynamics.lie_group import SMALL_ANGLE
from robodyn_ros.model.inertia import skew
from robodyn_ros.robot import Robot
from robodyn_ros.sim.lie_integrators import LIE_INTEGRATORS, lie_explicit_euler
from robodyn_ros.sim.linearization import JointLosses, StepJacobians, step_jacobians


class _Regularisation(NamedTuple):
    """μ, the weight of the value's Hessian's regularisation: its start, floor and factor,
    and the ceiling where the plan stops, improving no more."""

    start: float
    floor: float
    factor: float
    ceiling: float


REGULARISATION = _Regularisation(1.0, 1e-3, 10.0, 1e10)
STEP_SIZES = 0.5 ** np.arange(8)  # the line search's α, 1 to 1/128
ACCEPTED = 0.1  # of the expected decrease, that the actual one must reach
VELOCITY_MARGIN = 0.9  # of a joint's velocity limit, past which the plan pays limit_weight


@dataclass(frozen=True)
class ReachTask:
    """What the plan reaches: `frame` at `position` (m, world) and `rotation` (3x3) at the end
    of N steps of `period` (s), and the cost's weights (module docstring): position (1/m²),
    orientation (1/rad²), final velocity (s²/rad²), effort (1/(N·m)² per s), efforts past the
    effort limits (1/(N·m)² per s) and the joint limits (per s: 1/rad² of a position within
    `limit_margin`, rad or m, of them, s²/rad² of a velocity past VELOCITY_MARGIN of its)."""

    frame: str
    position: np.ndarray
    rotation: np.ndarray
    steps: int
    period: float
    position_weight: float = 1e6
    orientation_weight: float = 1e4
    velocity_weight: float = 1e2
    effort_weight: float = 1e-3
    saturation_weight: float = 1e2
    limit_weight: float = 1e4
    limit_margin: float = 0.05
    integrator: str = "semi_implicit_euler"
    iterations: int = 100
    tolerance: float = 1e-2  # a full step's relative cost decrease at which it has converged


@dataclass(frozen=True)
class ReachPlan:
    """The planned reach: states q (N+1, nq), v (N+1, nv) at times (N+1,), the efforts u
    (N, nv) held over each step and the feedback gains K (N, nv, 2 nv): the command at step k
    is u_k + K_k (x ⊖ x_k), x ⊖ x_k = (q_k's tangent step to q, v − v_k). cost: its cost;
    iterations, converged (the last relative decrease below the tolerance) and wall_time (s,
    the warm start included)."""

    times: np.ndarray
    q: np.ndarray
    v: np.ndarray
    u: np.ndarray
    K: np.ndarray
    cost: float
    iterations: int
    converged: bool
    wall_time: float

    def command(self, robot: Robot, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The effort at time t (s) from the state (q, v): the step's u and its gains about the
        plan's state at t, linear between the steps' states (the efforts are held)."""
        period = self.times[1] - self.times[0]
        k = min(int(t / period + 1e-9), self.u.shape[0] - 1)
        s = min(max(t / period - k, 0.0), 1.0)
        q_plan = robot.integrate(self.q[k], s * robot.difference(self.q[k], self.q[k + 1]))
        v_plan = (1.0 - s) * self.v[k] + s * self.v[k + 1]
        deviation = np.concatenate([robot.difference(q_plan, q), v - v_plan])
        effort: np.ndarray = self.u[k] + self.K[k] @ deviation
        return effort


@dataclass
class _Nominal:
    """A trajectory and its cost."""

    q: np.ndarray
    v: np.ndarray
    u: np.ndarray
    cost: float


def so3_right_jacobian_inverse(e: np.ndarray) -> np.ndarray:
    """J_r⁻¹(e) of SO(3): log(exp(e) exp(x)) = e + J_r⁻¹(e) x + O(|x|²),
    1 + ½[e]× + (1/θ² − (1 + cos θ)/(2 θ sin θ)) [e]×², θ = |e| (its Taylor series, 1/12,
    below SMALL_ANGLE)."""
    theta = float(np.linalg.norm(e))
    cross = skew(e)
    factor = 1.0 / 12.0 if theta < SMALL_ANGLE else \
        1.0 / theta**2 - (1.0 + np.cos(theta)) / (2.0 * theta * np.sin(theta))
    jacobian: np.ndarray = np.eye(3) + 0.5 * cross + factor * cross @ cross
    return jacobian


class _Model:
    """The plan's step and cost for one robot and task."""

    def __init__(self, robot: Robot, task: ReachTask, losses: JointLosses,
                 effort_limit: np.ndarray) -> None:
        self.robot, self.task, self.losses = robot, task, losses
        self.effort_limit = effort_limit
        self.lower = np.asarray(robot.per_coordinate(robot.model.lower), dtype=float)
        self.upper = np.asarray(robot.per_coordinate(robot.model.upper), dtype=float)
        self.velocity_limit = VELOCITY_MARGIN * np.asarray(
            robot.per_coordinate(robot.model.velocity_limit), dtype=float)
        self.stepper = {"explicit_euler": lie_explicit_euler, **LIE_INTEGRATORS}[task.integrator]

    def step(self, q: np.ndarray, v: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q⁺, v⁺) from (q, v) under u: SimulatedRobot's dynamics at the plan's period, the
        efforts as commanded (the cost keeps them within their limits, where the simulation
        clips them: a clipped effort would leave the plan no gradient)."""
        def acceleration(q_k: np.ndarray, v_k: np.ndarray) -> np.ndarray:
            return self.robot.forward_dynamics(q_k, v_k,
                                               u - self.losses.torques(self.robot, v_k))

        return self.stepper((q, v), self.task.period, acceleration, self.robot)

    def linearised(self, nominal: _Nominal) -> StepJacobians:
        """A (N, 2 nv, 2 nv) and B (N, 2 nv, nv) of every step of the nominal trajectory, from
        one batch."""
        return step_jacobians(self.robot, nominal.q[:-1], nominal.v[:-1], nominal.u,
                              self.task.period, self.task.integrator, losses=self.losses)

    def limit_excess(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """How far each joint is inside its position limits' margin and past VELOCITY_MARGIN
        of its velocity limit, signed (2 nv: the state's rows)."""
        margin = self.task.limit_margin
        position = np.maximum(q - (self.upper - margin), 0.0) + np.minimum(
            q - (self.lower + margin), 0.0)
        return np.concatenate([position, v - np.clip(v, -self.velocity_limit,
                                                     self.velocity_limit)])

    def saturation(self, u: np.ndarray) -> np.ndarray:
        """How far each effort is past its limit, signed."""
        excess: np.ndarray = u - np.clip(u, -self.effort_limit, self.effort_limit)
        return excess

    def running_cost(self, q: np.ndarray, v: np.ndarray, u: np.ndarray) -> float:
        task = self.task
        return 0.5 * task.period * (task.effort_weight * float(u @ u)
                                    + task.saturation_weight
                                    * float(np.sum(self.saturation(u) ** 2))
                                    + task.limit_weight
                                    * float(np.sum(self.limit_excess(q, v) ** 2)))

    def final_residual(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The terminal cost's weighted residual r = [√w_p (p − p*); √w_R log(R* Rᵀ); √w_v v]
        (½|r|² is the cost) and its Jacobian in x = (q, v), Gauss–Newton's."""
        task, nv = self.task, self.robot.nv
        pose = self.robot.frame_pose(q, task.frame)
        J = self.robot.jacobian(q, task.frame)
        w_p, w_R, w_v = (np.sqrt(w) for w in (task.position_weight, task.orientation_weight,
                                               task.velocity_weight))
        residual = np.concatenate([w_p * (pose[:3, 3] - task.position),
                                   w_R * rotation_error(task.rotation, pose[:3, :3]),
                                   w_v * v])
        jacobian = np.zeros((6 + nv, 2 * nv))
        jacobian[:3, :nv] = w_p * J[:3]
        jacobian[3:6, :nv] = -w_R * so3_right_jacobian_inverse(residual[3:6] / w_R) @ J[3:]
        jacobian[6:, nv:] = w_v * np.eye(nv)
        return residual, jacobian

    def cost(self, q: np.ndarray, v: np.ndarray, u: np.ndarray) -> float:
        running = sum(self.running_cost(q[k], v[k], u[k]) for k in range(u.shape[0]))
        residual, _ = self.final_residual(q[-1], v[-1])
        return running + 0.5 * float(residual @ residual)


@dataclass
class _Policy:
    """The backward pass's feed-forward k (N, nv) and gains K (N, nv, 2 nv), and the decrease
    of the cost it expects at α: α·first + α²·second."""

    k: np.ndarray
    K: np.ndarray
    first: float
    second: float


def plan_reach(robot: Robot, task: ReachTask, q0: np.ndarray, v0: np.ndarray, *,
               losses: JointLosses, effort_limit: np.ndarray,
               warm_start_gains: tuple[np.ndarray, np.ndarray] | None = None) -> ReachPlan:
    """The iLQR plan of `task` from (q0, v0) (module docstring), warm-started from the
    operational-space controller's rollout with gains (kp, kd) per task axis (default: the
    controller's).

    Raises:
        ValueError: a robot with a free flyer or planar joint (the warm start's controller is
            a fixed base's).
    """
    if robot.nq != robot.nv:
        raise ValueError("plan_reach: the reach is planned for a fixed-base robot; "
                         f"robot '{robot.model.name}' has a free flyer or planar joint")
    started = time.perf_counter()
    model = _Model(robot, task, losses, effort_limit)
    nominal = _operational_space_rollout(model, q0, v0, warm_start_gains)
    mu, iteration, converged = REGULARISATION.start, 0, False
    policy = _Policy(np.zeros_like(nominal.u), np.zeros((*nominal.u.shape, 2 * robot.nv)),
                     0.0, 0.0)
    linearised = None  # the nominal's, made again only when a step has moved it
    while iteration < task.iterations and not converged and mu < REGULARISATION.ceiling:
        iteration += 1
        if linearised is None:
            linearised = model.linearised(nominal)
        backward = _backward_pass(model, nominal, linearised, mu)
        if backward is None:
            mu *= REGULARISATION.factor
            continue
        policy = backward
        step = _line_search(model, nominal, policy)
        # μ as Levenberg–Marquardt's: lower after a full step, higher after a shortened one
        if step is None or step.alpha < 1.0:
            mu *= REGULARISATION.factor
        else:
            mu = max(mu / REGULARISATION.factor, REGULARISATION.floor)
        if step is not None:
            decrease = (nominal.cost - step.nominal.cost) / max(abs(nominal.cost), 1e-300)
            nominal = step.nominal
            converged = step.alpha == 1.0 and decrease < task.tolerance
            linearised = None
    times = task.period * np.arange(task.steps + 1)
    return ReachPlan(times, nominal.q, nominal.v, nominal.u, policy.K, nominal.cost, iteration,
                     converged, time.perf_counter() - started)


def _operational_space_rollout(model: _Model, q0: np.ndarray, v0: np.ndarray,
                               gains: tuple[np.ndarray, np.ndarray] | None) -> _Nominal:
    """The first nominal trajectory: the operational-space controller driving the frame to the
    task's pose, its plugin stepped at the plan's period on the plan's model."""
    robot, task = model.robot, model.task
    controller = load_controller("operational_space")()
    settings = {"frame": task.frame, "rest_posture": q0}
    if gains is not None:
        kp, kd = gains
        settings |= {"kp": kp, "kd": kd}
    controller.configure(robot, settings)
    controller.set_target(task.position, task.rotation)
    q, v = np.empty((task.steps + 1, robot.nq)), np.empty((task.steps + 1, robot.nv))
    u = np.empty((task.steps, robot.nv))
    q[0], v[0] = q0, v0
    for k in range(task.steps):
        command = controller.update(ControllerState(k * task.period, q[k], v[k]))
        u[k] = np.clip(command, -model.effort_limit, model.effort_limit)
        q[k + 1], v[k + 1] = model.step(q[k], v[k], u[k])
    return _Nominal(q, v, u, model.cost(q, v, u))


def _backward_pass(model: _Model, nominal: _Nominal, linearised: StepJacobians,
                   mu: float) -> _Policy | None:
    """The policy from the value's quadratic model, backwards from the terminal cost; None
    where a Q_uu is not positive definite at this μ."""
    task, nv = model.task, model.robot.nv
    residual, jacobian = model.final_residual(nominal.q[-1], nominal.v[-1])
    V_x, V_xx = jacobian.T @ residual, jacobian.T @ jacobian
    k_all, K_all = np.empty((task.steps, nv)), np.empty((task.steps, nv, 2 * nv))
    first = second = 0.0
    h = task.period
    for k in range(task.steps - 1, -1, -1):
        A, B = linearised.A[k], linearised.B[k]
        excess = model.limit_excess(nominal.q[k], nominal.v[k])
        l_x = h * task.limit_weight * excess
        l_xx = np.diag(h * task.limit_weight * (excess != 0.0))
        saturated = model.saturation(nominal.u[k])
        l_u = h * (task.effort_weight * nominal.u[k] + task.saturation_weight * saturated)
        l_uu = h * (task.effort_weight + task.saturation_weight * (saturated != 0.0))
        Q_x = l_x + A.T @ V_x
        Q_u = l_u + B.T @ V_x
        Q_xx = l_xx + A.T @ V_xx @ A
        Q_uu = np.diag(l_uu) + B.T @ V_xx @ B
        Q_ux = B.T @ V_xx @ A
        # the gains from the value's Hessian regularised by μ (Tassa et al. 2012, eq. 10), the
        # value's update from the unregularised Q (eq. 11)
        try:
            factor = np.linalg.cholesky(Q_uu + mu * B.T @ B)
        except np.linalg.LinAlgError:
            return None
        solved = np.linalg.solve(factor.T, np.linalg.solve(
            factor, np.column_stack([Q_u, Q_ux + mu * B.T @ A])))
        feedforward, gains = -solved[:, 0], -solved[:, 1:]
        k_all[k], K_all[k] = feedforward, gains
        first += float(feedforward @ Q_u)
        second += 0.5 * float(feedforward @ Q_uu @ feedforward)
        V_x = Q_x + gains.T @ Q_uu @ feedforward + gains.T @ Q_u + Q_ux.T @ feedforward
        V_xx = Q_xx + gains.T @ Q_uu @ gains + gains.T @ Q_ux + Q_ux.T @ gains
        V_xx = 0.5 * (V_xx + V_xx.T)
    return _Policy(k_all, K_all, first, second)


class _Step(NamedTuple):
    """An accepted line-search step: its size α and the trajectory it gave."""

    alpha: float
    nominal: _Nominal


def _line_search(model: _Model, nominal: _Nominal, policy: _Policy) -> _Step | None:
    """The first step size α whose closed-loop rollout u = ū + α k + K (x ⊖ x̄) lowers the
    cost by ACCEPTED of what the policy expects; None if none does."""
    robot, steps = model.robot, model.task.steps
    for alpha in STEP_SIZES:
        q, v = np.empty_like(nominal.q), np.empty_like(nominal.v)
        u = np.empty_like(nominal.u)
        q[0], v[0] = nominal.q[0], nominal.v[0]
        with np.errstate(all="ignore"):
            for k in range(steps):
                deviation = np.concatenate([robot.difference(nominal.q[k], q[k]),
                                            v[k] - nominal.v[k]])
                u[k] = nominal.u[k] + alpha * policy.k[k] + policy.K[k] @ deviation
                q[k + 1], v[k + 1] = model.step(q[k], v[k], u[k])
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            continue
        cost = model.cost(q, v, u)
        expected = -(alpha * policy.first + alpha**2 * policy.second)
        if cost < nominal.cost and nominal.cost - cost >= ACCEPTED * expected:
            return _Step(float(alpha), _Nominal(q, v, u, cost))
    return None


__all__ = ["ReachPlan", "ReachTask", "plan_reach"]
