"""Iterative forward-dynamics methods behind Robot.forward_dynamics: their options, and the
record of how an iteration ended.

Options every iterative method takes (anything else raises ValueError naming it):

- ``tol`` (default 1e-10): the stopping threshold. CG and PCG-DS stop when the relative
  residual ‖τ − b − M q̈‖ / ‖τ − b‖ ≤ tol; the constraint-force methods when the relative change
  of the constraint forces between two iterates ‖f⁽ⁱ⁾ − f⁽ⁱ⁻¹⁾‖ / ‖f⁽ⁱ⁾‖ ≤ tol (Sharf &
  D'Eleuterio §5; they advise tol ≈ TOL/10 of the integrator).
- ``max_iterations`` (default 10 000): the cap on iterations (sweeps) per state.
- ``initial_guess``: a q̈ to start from, shaped like τ (a warm start from the previous step).
  The constraint-force methods turn it into constraint forces by one Newton–Euler pass.
- ``info`` (default False): return ``(qdd, IterationInfo)`` instead of ``qdd``.

Not converging within max_iterations is never silent: with ``info=True`` the answer comes back
with ``converged`` False; without it, ConvergenceError is raised.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from robodyn_ros.errors import RobodynError

DEFAULT_TOL = 1e-10
DEFAULT_MAX_ITERATIONS = 10_000
COMMON_OPTIONS = ("tol", "max_iterations", "initial_guess", "info")


@dataclass(frozen=True)
class IterationInfo:
    """How an iterative solve ended: for one state plain numbers, for a batch (B,) arrays.

    iterations: iterations (sweeps) done; residual: the quantity the stopping test compared with
    tol (see the module docstring); converged: whether it reached tol.
    """

    iterations: int | np.ndarray
    residual: float | np.ndarray
    converged: bool | np.ndarray


class ConvergenceError(RobodynError, ValueError):
    """An iterative method did not reach its tolerance within max_iterations."""


@dataclass(frozen=True)
class IterativeMethod:
    """An iterative forward-dynamics kernel and the options it takes.

    The kernel is called as ``kernel(tree, gravity, settings, q, qd, tau, f_ext, qdd, stats)``
    with arrays only (one state as a batch of one, zero wrenches for no f_ext), qdd holding
    the initial guess when there is one, so that each of these large kernels compiles for one
    signature. `settings` is the kernel's settings record, a namedtuple of its module whose
    fields are, in order, the scheme within the kernel (`variant`), warm (whether qdd holds
    a guess), tol, max_iterations and the options named in `parameters` (NaN when not given:
    the kernel chooses), of which the user may set those in `tunable`.
    """

    name: str
    kernel: Callable[..., None]
    settings: Callable[..., tuple[Any, ...]]
    variant: int | bool
    parameters: tuple[str, ...] = ()
    tunable: tuple[str, ...] = ()

    def check(self, options: Mapping[str, Any]) -> None:
        """Raise ValueError for an option this method does not take."""
        allowed = (*COMMON_OPTIONS, *self.tunable)
        for key in options:
            if key not in allowed:
                raise ValueError(
                    f"forward_dynamics: method '{self.name}' takes no option '{key}'; its "
                    f"options are {', '.join(allowed)}"
                )

    def solve(
        self, run: Callable[..., None], constants: tuple[np.ndarray, ...], q: np.ndarray,
        qd: np.ndarray,
        tau: np.ndarray, f_ext: np.ndarray | None, options: Mapping[str, Any],
    ) -> np.ndarray | tuple[np.ndarray, IterationInfo]:
        """q̈, or (q̈, IterationInfo) when options['info']; q, qd, tau checked arrays. `run`
        calls the kernel as ``run(kernel, constants, *per_state)``, the states of every
        per-state array along its leading axis, and `constants` are (tree, gravity), to which
        the settings are added."""
        self.check(options)
        tol = float(options.get("tol", DEFAULT_TOL))
        max_iterations = int(options.get("max_iterations", DEFAULT_MAX_ITERATIONS))
        if not (tol > 0.0 and max_iterations > 0):
            raise ValueError(
                f"forward_dynamics: method '{self.name}' needs tol > 0 and max_iterations > 0; "
                f"got {tol!r} and {max_iterations!r}"
            )
        guess = options.get("initial_guess")
        if guess is not None:
            guess = np.array(guess, dtype=float)  # a copy: the kernel writes q̈ over it
            if guess.shape != tau.shape:
                raise ValueError(
                    f"forward_dynamics: initial_guess must have the shape of τ, {tau.shape}; "
                    f"got {guess.shape}"
                )
        parameters = [float(options.get(name, math.nan)) for name in self.parameters]
        settings = self.settings(self.variant, guess is not None, tol, max_iterations, *parameters)
        batch = tau.reshape(-1, tau.shape[-1]).shape
        wrenches = np.zeros((*batch, 6)) if f_ext is None else f_ext.reshape((*batch, 6))
        qdd = np.empty(batch) if guess is None else guess.reshape(batch)
        stats = np.empty((batch[0], 2))
        run(self.kernel, (*constants, settings), q.reshape(batch[0], q.shape[-1]),
            qd.reshape(batch), tau.reshape(batch), wrenches, qdd, stats)
        return finish(self.name, qdd.reshape(tau.shape), stats, tol,
                      bool(options.get("info", False)))


def finish(
    name: str, qdd: np.ndarray, stats: np.ndarray, tol: float, info: bool
) -> np.ndarray | tuple[np.ndarray, IterationInfo]:
    """qdd, or (qdd, IterationInfo) when `info`; raises ConvergenceError if a state did not
    converge and `info` is False. stats (B, 2): iterations and residual of each state."""
    iterations, residual = stats[:, 0].astype(np.int64), stats[:, 1]
    converged = residual <= tol
    if not info:
        if not converged.all():
            worst = int(np.argmax(residual))
            raise ConvergenceError(
                f"forward_dynamics: method '{name}' did not converge: residual "
                f"{residual[worst]:.3e} > tol {tol:.1e} after {iterations[worst]} iterations "
                "(raise max_iterations or tol, or pass info=True to get the answer anyway)"
            )
        return qdd
    if qdd.ndim == 1:
        return qdd, IterationInfo(int(iterations[0]), float(residual[0]), bool(converged[0]))
    return qdd, IterationInfo(iterations, residual, converged)


__all__ = ["ConvergenceError", "IterationInfo", "IterativeMethod"]
