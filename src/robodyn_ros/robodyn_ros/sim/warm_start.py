"""WarmStartedForwardDynamics: an iterative forward-dynamics method for simulation loops, each
call started from the extrapolation of the previous steps' answers (Sharf & D'Eleuterio §5).

What is extrapolated is q̈, not the constraint forces λ the paper extrapolates. The iterative
kernels take a q̈ guess (CG and PCG-DS iterate on q̈ itself; the constraint-force methods turn
it into λ by one Newton–Euler pass at the current state), so one extrapolation serves every
iterative method without a second guess path into the kernels. The two are equivalent to the
order of the scheme: at a fixed state λ is affine in q̈ (λ = L(q) q̈ + l(q, q̇, τ)), and with
(q, q̇, τ) smooth in time both q̈(t) and λ(t) are smooth, so either cubic extrapolation errs by
O(dt⁴); mapping the extrapolated q̈ through the current state's L and l uses the current τ and
(q, q̇) where extrapolating λ would extrapolate them too, and the guess is a λ the current
state's dynamics can produce (the extrapolated 5n components of λ need not be). Against
extrapolating λ itself, on fd_study's maneuvers, extrapolating q̈ needed fewer iterations in
most cases (the figures are in docs/), and the kernels take no λ guess.

For smooth motion the extrapolation from m past steps errs by O(dtᵐ), but its weights
(Σ|w| = 15 for the cubic) amplify the error the past answers carry from stopping at tol: with
a loose tol a lower order can need fewer iterations (benchmarks/fd_study.py prints the counts
of cold, previous-step and cubic starts).

It lives in sim/ because it is state kept across the steps of a simulation: the kernels and
Robot stay free of hidden state.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from robodyn_ros.robot import Robot
from robodyn_ros.robot.iteration import ConvergenceError, IterationInfo

CUBIC = 4  # past solutions of the cubic extrapolation
RESERVED_OPTIONS = ("initial_guess", "info")


def extrapolation_weights(points: int) -> tuple[int, ...]:
    """Weights of the newest-first past values x_k, x_{k−1}, … whose sum is the polynomial
    extrapolation of degree points − 1 to the next step at equal intervals: (1,), (2, −1),
    (3, −3, 1), (4, −6, 4, −1)."""
    # Lagrange extrapolation at equal steps: x_{k+1} = Σ_j (−1)^j C(m, j+1) x_{k−j}, m points
    return tuple((-1) ** j * math.comb(points, j + 1) for j in range(points))


def extrapolate(history: deque[np.ndarray]) -> np.ndarray:
    """The next value of a newest-first history (≥ 1 entries), one degree below its length."""
    weights = extrapolation_weights(len(history))
    total = sum(w * x for w, x in zip(weights, history, strict=True))
    assert isinstance(total, np.ndarray)  # not sum's start, 0: the history has an entry
    return total


class WarmStartedForwardDynamics:
    """q̈ by an iterative `Robot.forward_dynamics` method, each call warm-started from the
    extrapolation of the q̈ of the last `history` steps (Sharf & D'Eleuterio §5: cubic).

    Call it once per integrator stage of each step with (q, q̇, τ) and the stage's index
    (RK4: 0…3, in the order the integrator evaluates them): each stage keeps its own history,
    one entry a step, so it extrapolates over equal intervals of dt. With fewer steps behind
    it than `history` the extrapolation drops in order (constant, linear, quadratic); none: a
    cold start (q̈ = 0, λ = 0).

    Args:
        robot: the Robot whose forward dynamics are solved.
        method: one of `Robot.ITERATIVE_FORWARD_DYNAMICS_METHODS`.
        history: past steps extrapolated from: 4 cubic (the default), 1 the previous step's
            q̈, 0 none (every call cold).
        require_convergence: raise ConvergenceError when a call stops at max_iterations
            (default); False returns (and remembers) its answer, `last.converged` False.
        options: passed to every call (`tol`, `max_iterations`, `omega`, …; see
            robodyn_ros.robot.iteration); not `initial_guess` or `info`, which this object sets.
    """

    def __init__(self, robot: Robot, method: str, *, history: int = CUBIC,
                 require_convergence: bool = True, **options: float) -> None:
        if method not in robot.ITERATIVE_FORWARD_DYNAMICS_METHODS:
            raise ValueError(
                f"'{method}' is not an iterative forward-dynamics method; choose one of "
                f"{', '.join(robot.ITERATIVE_FORWARD_DYNAMICS_METHODS)}"
            )
        if not 0 <= history <= CUBIC:
            raise ValueError(f"history must be 0 to {CUBIC} past steps; got {history}")
        reserved = [key for key in options if key in RESERVED_OPTIONS]
        if reserved:
            raise ValueError(f"the warm start sets {', '.join(reserved)} itself")
        self.robot, self.method, self.history, self.options = robot, method, history, options
        self.require_convergence = require_convergence
        self.reset()

    def reset(self) -> None:
        """Forget the past solutions and zero the counts."""
        self.forget_history()
        self.calls = 0
        self.iterations = 0
        self.last: IterationInfo | None = None

    def forget_history(self) -> None:
        """Forget the past solutions: the next call of each stage starts cold."""
        self._histories: dict[int, deque[np.ndarray]] = {}

    @property
    def mean_iterations(self) -> float:
        """Iterations per call since the last reset (0 before the first call)."""
        return self.iterations / self.calls if self.calls else 0.0

    def __call__(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, stage: int = 0
                 ) -> np.ndarray:
        """q̈ at (q, q̇, τ), one state; ConvergenceError if the method does not converge and
        `require_convergence`."""
        past = self._histories.setdefault(stage, deque(maxlen=self.history))
        options: dict[str, Any] = {"initial_guess": extrapolate(past)} if past else {}
        options.update(self.options)
        qdd, info = self.robot.forward_dynamics(q, qd, tau, self.method, info=True, **options)
        self.calls += 1
        self.iterations += int(info.iterations)  # one state: a plain number
        self.last = info
        if self.require_convergence and not info.converged:
            raise ConvergenceError(
                f"{self.method} did not converge: residual {info.residual:.3e} after "
                f"{info.iterations} iterations"
            )
        past.appendleft(qdd)
        return qdd


__all__ = ["WarmStartedForwardDynamics", "extrapolate", "extrapolation_weights"]
