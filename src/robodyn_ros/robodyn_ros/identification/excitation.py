"""Excitation trajectories for dynamic identification: a finite Fourier series per joint whose
coefficients minimise the condition number of the base regressor along it, within the joint
limits (Swevers, Ganseman, Tükel, De Schutter & Van Brussel, "Optimal robot excitation and
identification", IEEE Trans. Robotics and Automation 13(5), 1997).

Joint i follows, over one period T = 2π/ω_f of L harmonics,

    q_i(t) = q0_i + Σ_l [a_il/(ω_f l) sin(ω_f l t) − b_il/(ω_f l) cos(ω_f l t)],

so q̇_i = Σ_l [a_il cos(ω_f l t) + b_il sin(ω_f l t)] and q̈ follows exactly; q0_i is the mean
position. Starting and ending at rest (q̇(0) = q̈(0) = 0, hence also at t = T) fixes the first
harmonic: a_i1 = −Σ_{l≥2} a_il and b_i1 = −Σ_{l≥2} l b_il, which leaves (2L − 1) n unknowns
and needs L ≥ 2.

The optimiser (scipy's SLSQP) minimises log cond(W_b) = ½ log(λ_max/λ_min) of W_bᵀ W_b,
W_b the base regressor (base_parameters) stacked over a time grid, from a seeded random
feasible start. On that grid it keeps the positions inside the joint range shrunk about its
middle to `margin` of its width, |q̇| ≤ margin · velocity limit and |τ| ≤ margin · effort
limit, τ = Y π the inverse dynamics plus the joint friction d q̇ + f tanh(q̇/ε) of the
description (ε = model.FRICTION_VELOCITY). The gradients chain the exact derivatives of the
states by the coefficients with forward differences of Y by each joint's q, q̇ and q̈ (Y is
linear in q̈): 3 n regressor evaluations of the grid per gradient. Between the grid's points
a bound may be passed by a little; the motion about q0 is then scaled down, as little as
keeps every bound on a check grid eight times finer (positions and velocities scale with it;
the efforts are bisected).

The preview's verdict on the result and the files written are in excitation_report.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.optimize
from threadpoolctl import threadpool_limits

from robodyn_ros.identification.base_parameters import BaseParameters, base_parameters
from robodyn_ros.identification.errors import IdentificationError
from robodyn_ros.model.model import FRICTION_VELOCITY
from robodyn_ros.robot import Robot

MARGIN = 0.9
"""Default share of each limit the trajectory may use (of the position range, about its
middle)."""
HARMONICS = 5
"""Default number of harmonics L."""
GRID_PER_HARMONIC = 16
"""Points of the optimiser's time grid per harmonic (at least two rows per base parameter)."""
CHECK_PER_HARMONIC = 128
"""Points of the check grid per harmonic: the limits hold there, not only on the grid; between
its points a bound is passed by at most about (π/128)²/2 ≈ 3·10⁻⁴ of the motion's highest
harmonic."""
MAX_ITERATIONS = 200
"""Default bound on the SLSQP iterations."""
FEASIBILITY_TOLERANCE = 1e-6
"""How far past a margin limit, as a share of that limit, still counts as within it."""
UNLIMITED_VELOCITY = 2.0
"""rad/s (m/s): the velocity bound of a joint whose description has no velocity limit."""
UNLIMITED_POSITION = np.pi
"""rad (m): |q0| bound of a joint without position limits (continuous)."""
START_ATTEMPTS = 20
"""Random mean postures tried for a feasible start."""
START_SCALE = 0.5
"""The start's share of the largest motion its random direction has within the position and
velocity limits (less where the efforts need it)."""
BISECTIONS = 30
"""Bisections of the largest motion within the effort bounds."""
DIFFERENCE_STEPS = (1e-6, 1e-6, 1.0)
"""Forward-difference steps of Y by q (rad, m), q̇ (rad/s, m/s) and q̈ (exact: Y is linear)."""


# -- the trajectory ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FourierTrajectory:
    """A finite Fourier series per joint (module docstring).

    Attributes:
        period: T, s; ω_f = 2π/T.
        q0: (n,) the mean position of each joint, rad (m).
        a: (n, L) the cosine coefficients of q̇, rad/s (m/s).
        b: (n, L) the sine coefficients of q̇, rad/s (m/s).
    """

    period: float
    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray

    @classmethod
    def at_rest(cls, period: float, q0: np.ndarray, a_free: np.ndarray,
                b_free: np.ndarray) -> FourierTrajectory:
        """The trajectory that starts and ends at rest, from the harmonics l = 2..L.

        Args:
            period: T, s.
            q0: (n,) mean positions.
            a_free, b_free: (n, L − 1) the coefficients of harmonics 2..L.

        Returns:
            The trajectory with a_i1 and b_i1 making q̇(0) = q̈(0) = 0.
        """
        first_a, first_b = _first_harmonic(a_free.shape[1] + 1)
        return cls(float(period), np.asarray(q0, dtype=float), a_free @ first_a.T,
                   b_free @ first_b.T)

    @property
    def harmonics(self) -> int:
        """L."""
        return int(self.a.shape[1])

    @property
    def frequency(self) -> float:
        """ω_f = 2π/T, rad/s."""
        return 2.0 * np.pi / self.period

    def states(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, q̇, q̈ at times t, each (len(t), n)."""
        basis = _harmonic_basis(np.atleast_1d(np.asarray(t, dtype=float)), self.period,
                                self.harmonics)
        q, qd, qdd = basis[:, 0] @ self.a.T + basis[:, 1] @ self.b.T
        return q + self.q0, qd, qdd

    def positions(self, t: np.ndarray) -> np.ndarray:
        """q at times t, (len(t), n)."""
        return self.states(t)[0]

    def velocities(self, t: np.ndarray) -> np.ndarray:
        """q̇ at times t, (len(t), n)."""
        return self.states(t)[1]

    def accelerations(self, t: np.ndarray) -> np.ndarray:
        """q̈ at times t, (len(t), n)."""
        return self.states(t)[2]


def _harmonic_basis(t: np.ndarray, period: float, harmonics: int) -> np.ndarray:
    """(3, 2, len(t), L): what a_il (index 0) and b_il (index 1) contribute to q, q̇, q̈."""
    omega = 2.0 * np.pi / period * np.arange(1, harmonics + 1)
    sine, cosine = np.sin(np.outer(t, omega)), np.cos(np.outer(t, omega))
    return np.array([[sine / omega, -cosine / omega],
                     [cosine, sine],
                     [-sine * omega, cosine * omega]])


def _first_harmonic(harmonics: int) -> tuple[np.ndarray, np.ndarray]:
    """(L, L − 1) maps of the free coefficients (l = 2..L) to all L of a and of b."""
    a_map = np.vstack([-np.ones(harmonics - 1), np.eye(harmonics - 1)])
    b_map = np.vstack([-np.arange(2.0, harmonics + 1), np.eye(harmonics - 1)])
    return a_map, b_map


# -- settings, limits and results --------------------------------------------------------------


@dataclass(frozen=True)
class ExcitationSettings:
    """What to optimise.

    Attributes:
        period: T, s, > 0: the trajectory's duration.
        harmonics: L ≥ 2 (one harmonic cannot leave rest and return to it).
        margin: in (0, 1], the share of each limit the trajectory may use.
        seed: of the random start.
        grid_points: the optimiser's time grid (default GRID_PER_HARMONIC per harmonic, at
            least two rows per base parameter).
        max_iterations: SLSQP's bound on its iterations, ≥ 1.
    """

    period: float
    harmonics: int = HARMONICS
    margin: float = MARGIN
    seed: int = 0
    grid_points: int | None = None
    max_iterations: int = MAX_ITERATIONS

    def __post_init__(self) -> None:
        if not (math.isfinite(self.period) and self.period > 0.0):
            raise IdentificationError(f"the duration must be a number of seconds > 0; got "
                                  f"{self.period!r}")
        if self.harmonics < 2:
            raise IdentificationError(f"harmonics must be at least 2 (one harmonic cannot start "
                                  f"and end at rest and move); got {self.harmonics}")
        if not (0.0 < self.margin <= 1.0):
            raise IdentificationError(f"the margin must be in (0, 1]; got {self.margin!r}")
        if self.grid_points is not None and self.grid_points < 2 * self.harmonics:
            raise IdentificationError(f"grid_points must be at least 2 per harmonic "
                                  f"({2 * self.harmonics}); got {self.grid_points}")
        if self.max_iterations < 1:
            raise IdentificationError(f"max_iterations must be ≥ 1; got {self.max_iterations}")


@dataclass(frozen=True, eq=False)
class ExcitationLimits:
    """The bounds the trajectory keeps, each (n,), ±inf where the description has none.

    Attributes:
        lower, upper: the position range shrunk about its middle to margin of its width.
        velocity: margin · velocity limit (UNLIMITED_VELOCITY where there is none).
        effort: margin · effort limit.
        margin: the share used.
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    margin: float

    @classmethod
    def of(cls, robot: Robot, margin: float) -> ExcitationLimits:
        """The limits of `robot`'s description with `margin`.

        Raises:
            IdentificationError: a joint whose limits leave no room to move (an empty position
                range, a velocity or effort limit ≤ 0).
        """
        lower = np.asarray(robot.per_coordinate(robot.model.lower), dtype=float)
        upper = np.asarray(robot.per_coordinate(robot.model.upper), dtype=float)
        velocity = np.asarray(robot.per_coordinate(robot.model.velocity_limit), dtype=float)
        effort = np.asarray(robot.per_coordinate(robot.model.effort_limit), dtype=float)
        stuck = [name for name, low, high, v, e in zip(robot.joint_names, lower, upper, velocity,
                                                       effort, strict=True)
                 if not (low < high and v > 0.0 and e > 0.0)]
        if stuck:
            raise IdentificationError(f"the limits of {', '.join(stuck)} leave no room to move (an "
                                  "empty position range or a velocity or effort limit of 0)")
        bounded = np.isfinite(lower) & np.isfinite(upper)
        shrink = np.where(bounded, 0.5 * (1.0 - margin) * (upper - lower), 0.0)
        velocity = np.where(np.isfinite(velocity), velocity, UNLIMITED_VELOCITY)
        return cls(lower + shrink, upper - shrink, margin * velocity, margin * effort, margin)


@dataclass(frozen=True, eq=False)
class Excitation:
    """An optimised excitation trajectory.

    Attributes:
        trajectory: the optimised trajectory.
        start: the random feasible trajectory the optimiser started from.
        condition_number: cond(W_b) along `trajectory`, on the check grid.
        start_condition_number: cond(W_b) along `start`, on the check grid.
        base_parameters: the base parameters whose regressor W_b is.
        limits: the bounds it keeps.
        settings: what was asked.
        iterations: SLSQP's iterations.
        wall_time: s.
    """

    trajectory: FourierTrajectory
    start: FourierTrajectory
    condition_number: float
    start_condition_number: float
    base_parameters: BaseParameters
    limits: ExcitationLimits
    settings: ExcitationSettings
    iterations: int
    wall_time: float


# -- the optimisation -------------------------------------------------------------------------


class _Layout:
    """The unknowns x = [q0 (n), a_free (n, L − 1), b_free (n, L − 1)] of a trajectory that
    starts and ends at rest, and their bounds."""

    def __init__(self, n: int, settings: ExcitationSettings, limits: ExcitationLimits) -> None:
        self.n, self.free, self.period = n, settings.harmonics - 1, settings.period
        bounded = np.isfinite(limits.lower) & np.isfinite(limits.upper)
        self.q0_lower = np.where(bounded, limits.lower, -UNLIMITED_POSITION)
        self.q0_upper = np.where(bounded, limits.upper, UNLIMITED_POSITION)
        coefficient = np.repeat(limits.velocity, self.free)
        self.bounds = list(zip(np.concatenate([self.q0_lower, -coefficient, -coefficient]),
                               np.concatenate([self.q0_upper, coefficient, coefficient]),
                               strict=True))

    @property
    def size(self) -> int:
        return self.n * (1 + 2 * self.free)

    def pack(self, q0: np.ndarray, a_free: np.ndarray, b_free: np.ndarray) -> np.ndarray:
        return np.concatenate([q0, a_free.ravel(), b_free.ravel()])

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, free = self.n, self.free
        return (x[:n], x[n : n + n * free].reshape(n, free),
                x[n + n * free :].reshape(n, free))

    def trajectory(self, x: np.ndarray) -> FourierTrajectory:
        return FourierTrajectory.at_rest(self.period, *self.unpack(x))

    def state_jacobian(self, t: np.ndarray) -> np.ndarray:
        """(3, len(t), n, size): d(q, q̇, q̈)(t)/dx, exact (the states are linear in x)."""
        basis = _harmonic_basis(t, self.period, self.free + 1)
        first_a, first_b = _first_harmonic(self.free + 1)
        n, free = self.n, self.free
        jacobian = np.zeros((3, len(t), n, self.size))
        for joint in range(n):
            a_columns = n + joint * free + np.arange(free)
            jacobian[0, :, joint, joint] = 1.0
            jacobian[:, :, joint, a_columns] = basis[:, 0] @ first_a
            jacobian[:, :, joint, a_columns + n * free] = basis[:, 1] @ first_b
        return jacobian


class _Grid:
    """The objective and the constraints on one time grid, with their gradients; the last
    point's values and regressor derivatives are kept for the calls that follow it."""

    def __init__(self, robot: Robot, base: BaseParameters, limits: ExcitationLimits,
                 layout: _Layout, times: np.ndarray) -> None:
        self.robot, self.base, self.limits, self.layout = robot, base, limits, layout
        self.times = times
        self.jacobian = layout.state_jacobian(times)
        self.base_values = base.of(robot.inertial_parameters())
        self._x: np.ndarray | None = None
        self._values: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._x_differenced: np.ndarray | None = None
        self._differences: np.ndarray | None = None

    def _regressor(self, states: np.ndarray) -> np.ndarray:
        """W_b rows of states (3, ..., n): (..., n, r)."""
        flat = states.reshape(3, -1, states.shape[-1])
        Y = self.base.regressor(self.robot.inverse_dynamics_regressor(*flat))
        return Y.reshape(*states.shape[1:], Y.shape[-1])

    def values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(states (3, T, n), W_b per point (T, n, r), τ (T, n)) along x's trajectory."""
        if self._values is None or self._x is None or not np.array_equal(x, self._x):
            states = np.array(self.layout.trajectory(x).states(self.times))
            Y = self._regressor(states)
            self._x, self._values = x.copy(), (states, Y, Y @ self.base_values)
        return self._values

    def differences(self, x: np.ndarray) -> np.ndarray:
        """dW_b/ds (3, n, T, n, r): by q, q̇, q̈ of each joint at each point."""
        if (self._differences is None or self._x_differenced is None
                or not np.array_equal(x, self._x_differenced)):
            states, Y, _ = self.values(x)
            n = self.layout.n
            shifted = np.broadcast_to(states, (3, n, *states.shape)).copy()
            steps = np.array(DIFFERENCE_STEPS)
            for order in range(3):
                for joint in range(n):
                    shifted[order, joint, order, :, joint] += steps[order]
            moved = self._regressor(np.moveaxis(shifted, 2, 0))
            self._differences = (moved - Y) / steps[:, None, None, None, None]
            self._x_differenced = x.copy()
        return self._differences

    def log_condition(self, x: np.ndarray) -> float:
        """log cond(W_b) = ½ log(λ_max/λ_min) of W_bᵀ W_b."""
        _, Y, _ = self.values(x)
        W = Y.reshape(-1, Y.shape[-1])
        eigenvalues = np.linalg.eigvalsh(W.T @ W)
        return 0.5 * float(np.log(eigenvalues[-1] / _floor(eigenvalues)))

    def log_condition_gradient(self, x: np.ndarray) -> np.ndarray:
        """d log cond(W_b)/dx: W_b v v ᵀ/λ of the largest minus that of the smallest
        eigenvalue of W_bᵀ W_b, against dW_b/dx."""
        _, Y, _ = self.values(x)
        W = Y.reshape(-1, Y.shape[-1])
        eigenvalues, vectors = np.linalg.eigh(W.T @ W)
        largest, smallest = vectors[:, -1], vectors[:, 0]
        by_rows = (np.outer(W @ largest, largest) / eigenvalues[-1]
                   - np.outer(W @ smallest, smallest) / _floor(eigenvalues)).reshape(Y.shape)
        by_states = np.einsum("tjm,citjm->cti", by_rows, self.differences(x))
        gradient: np.ndarray = np.einsum("cti,ctix->x", by_states, self.jacobian)
        return gradient

    def constraints(self, x: np.ndarray) -> np.ndarray:
        """Each bound as a share of its size, ≥ 0 within it: positions (upper, lower),
        velocities and efforts (above, below) at every point, for the joints that have it."""
        states, _, tau = self.values(x)
        return np.concatenate(self._bounded(states[0], states[1], tau))

    def constraint_jacobian(self, x: np.ndarray) -> np.ndarray:
        """d constraints/dx, (rows, size)."""
        tau_by_states = self.differences(x) @ self.base_values
        tau_jacobian = np.einsum("citj,ctix->tjx", tau_by_states, self.jacobian, optimize=True)
        return np.concatenate(self._bounded(self.jacobian[0], self.jacobian[1], tau_jacobian,
                                            derivative=True))

    def _bounded(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, *,
                 derivative: bool = False) -> list[np.ndarray]:
        """The rows of the position, velocity and effort bounds (each above and below) of the
        joints that have them, as a share of the bound; their derivatives (the constant parts
        dropped) with `derivative`. q, qd, tau: (T, n) or their Jacobians (T, n, size)."""
        limits, constant = self.limits, 0.0 if derivative else 1.0
        width = limits.upper - limits.lower
        parts = []
        for value, scale in ((q, width), (qd, limits.velocity), (tau, limits.effort)):
            joints = np.isfinite(scale)
            share = value[:, joints] / _along(scale[joints], value)
            if value is q and not derivative:
                above = _along(limits.upper[joints] / scale[joints], value) - share
                below = share - _along(limits.lower[joints] / scale[joints], value)
            else:
                above, below = constant - share, constant + share
            parts += [above.reshape(-1, *value.shape[2:]), below.reshape(-1, *value.shape[2:])]
        return parts

    def feasible(self, x: np.ndarray) -> bool:
        """Whether x keeps every bound at every point, to FEASIBILITY_TOLERANCE."""
        return bool(self.constraints(x).min(initial=0.0) >= -FEASIBILITY_TOLERANCE)


def _floor(eigenvalues: np.ndarray) -> float:
    """The smallest eigenvalue of W_bᵀ W_b, kept above its rounding noise."""
    return float(max(eigenvalues[0], np.finfo(float).eps * eigenvalues[-1]))


def _along(per_joint: np.ndarray, value: np.ndarray) -> np.ndarray:
    """A per-joint vector shaped to divide (T, k) values or their (T, k, size) Jacobians."""
    return per_joint if value.ndim == 2 else per_joint[:, None]


def optimise_excitation(robot: Robot, settings: ExcitationSettings) -> Excitation:
    """The excitation trajectory of least cond(W_b) within `robot`'s limits.

    Args:
        robot: the robot, its limits, damping and friction as its description gives them.
        settings: period, harmonics, margin, seed, grid and iterations.

    Returns:
        The optimised trajectory with its random start and both condition numbers, on the
        check grid. It keeps the bounds at every point of the check grid; should the optimum
        excite worse than the start, it is the start.

    Raises:
        IdentificationError: limits that leave no room to move, or no feasible random start (the
            efforts cannot hold the robot still at any mean posture tried).
    """
    started = time.perf_counter()
    # small products and decompositions (69 x 69 on the Panda): BLAS threads only wait for
    # each other, and for a core on a busy machine
    with threadpool_limits(limits=1, user_api="blas"):
        return _optimised(robot, settings, started)


def _optimised(robot: Robot, settings: ExcitationSettings, started: float) -> Excitation:
    """optimise_excitation's work, `started` at that perf_counter time."""
    limits = ExcitationLimits.of(robot, settings.margin)
    base = base_parameters(robot)
    layout = _Layout(robot.nv, settings, limits)
    points = settings.grid_points or max(GRID_PER_HARMONIC * settings.harmonics,
                                         -(-2 * len(base) // robot.nv))
    check_points = CHECK_PER_HARMONIC * settings.harmonics
    check = _Grid(robot, base, limits, layout,
                  settings.period * np.arange(check_points) / check_points)
    start = _random_start(robot, check, layout, np.random.default_rng(settings.seed))
    grid = _Grid(robot, base, limits, layout, settings.period * np.arange(points) / points)
    optimum, iterations = _minimise(grid, start, settings.max_iterations)
    fitted = _fitted(check, layout, optimum)
    candidates = [layout.trajectory(x) for x in (start, fitted) if x is not None]
    conditions = [condition_number(robot, candidate, check.times, base)
                  for candidate in candidates]
    best = int(np.argmin(conditions))
    return Excitation(candidates[best], candidates[0], conditions[best], conditions[0], base,
                      limits, settings, iterations, time.perf_counter() - started)


def _minimise(grid: _Grid, start: np.ndarray, max_iterations: int) -> tuple[np.ndarray, int]:
    """SLSQP from `start` on the grid: (its answer within the bounds, its iterations)."""
    bounds = grid.layout.bounds
    result = scipy.optimize.minimize(
        grid.log_condition, start, jac=grid.log_condition_gradient, method="SLSQP",
        bounds=bounds,
        constraints=[{"type": "ineq", "fun": grid.constraints, "jac": grid.constraint_jacobian}],
        options={"maxiter": max_iterations, "ftol": 1e-6},
    )
    return np.clip(result.x, *np.array(bounds).T), int(result.nit)


def _random_start(robot: Robot, check: _Grid, layout: _Layout,
                  rng: np.random.Generator) -> np.ndarray:
    """A random x within every bound on the check grid: a mean posture in the middle half of
    each range and random coefficients (normal, in units of each joint's velocity bound),
    scaled to START_SCALE of the largest motion the bounds allow along them.

    Raises:
        IdentificationError: no feasible start within START_ATTEMPTS postures.
    """
    middle = 0.5 * (layout.q0_lower + layout.q0_upper)
    half = 0.5 * (layout.q0_upper - layout.q0_lower)
    for _ in range(START_ATTEMPTS):
        q0 = rng.uniform(middle - 0.5 * half, middle + 0.5 * half)
        a_free, b_free = (rng.standard_normal((2, layout.n, layout.free))
                          * check.limits.velocity[:, None])
        largest = _fitted(check, layout, layout.pack(q0, a_free, b_free))
        if largest is not None:
            _, a_largest, b_largest = layout.unpack(largest)
            return layout.pack(q0, START_SCALE * a_largest, START_SCALE * b_largest)
    raise IdentificationError(
        f"no feasible start in {START_ATTEMPTS} random postures: the efforts "
        f"({_joint_list(robot.joint_names, check.limits.effort)}, with the margin) cannot "
        "hold the robot still within its limits")


def _fitted(check: _Grid, layout: _Layout, x: np.ndarray) -> np.ndarray | None:
    """x with its motion about q0 scaled by the largest s ≤ 1 that keeps every bound on the
    check grid: the positions and velocities scale with s, the efforts are bisected; None
    where the efforts cannot hold even the still posture q0."""
    q0, a_free, b_free = layout.unpack(x)
    motion = layout.trajectory(layout.pack(np.zeros_like(q0), a_free, b_free))
    deviation, qd, _ = motion.states(check.times)
    limits = check.limits
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(deviation > 0.0, (limits.upper - q0) / deviation,
                        np.where(deviation < 0.0, (limits.lower - q0) / deviation, np.inf))
        speed = limits.velocity / np.abs(qd)
    high = float(min(1.0, room.min(), speed.min()))

    def scaled(scale: float) -> np.ndarray:
        return layout.pack(q0, scale * a_free, scale * b_free)

    if check.feasible(scaled(high)):
        return scaled(high)
    if not check.feasible(scaled(0.0)):
        return None
    low = 0.0
    for _ in range(BISECTIONS):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if check.feasible(scaled(middle)) else (low, middle)
    return scaled(low)


def _joint_list(names: tuple[str, ...], values: np.ndarray) -> str:
    return ", ".join(f"{name} {value:.4g}" for name, value in zip(names, values, strict=True))


def condition_number(robot: Robot, trajectory: FourierTrajectory, times: np.ndarray,
                     base: BaseParameters | None = None) -> float:
    """cond(W_b) of the base regressor stacked over `times` along `trajectory`.

    Args:
        robot: the robot.
        trajectory: the trajectory.
        times: (T,) s.
        base: the robot's base parameters (default: base_parameters(robot)).

    Returns:
        σ_max / σ_min of W_b (T n, r).
    """
    base = base_parameters(robot) if base is None else base
    Y = base.regressor(robot.inverse_dynamics_regressor(*trajectory.states(times)))
    return float(np.linalg.cond(Y.reshape(-1, Y.shape[-1])))


def joint_efforts(robot: Robot, trajectory: FourierTrajectory, times: np.ndarray) -> np.ndarray:
    """τ = Y π at `times` (T, n): the inverse dynamics plus the description's joint friction
    d q̇ + f tanh(q̇/ε), ε = model.FRICTION_VELOCITY."""
    Y = robot.inverse_dynamics_regressor(*trajectory.states(times),
                                         friction_velocity=FRICTION_VELOCITY)
    return Y @ robot.inertial_parameters()
