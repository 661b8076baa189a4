"""One step of a second-order system q̈ = a(q, q̇): pure functions over the state (q, q̇).

Each integrator takes ``state = (q, qd)``, a step ``dt`` and ``acceleration(q, qd) -> qdd``
and returns the new ``(q, qd)``; the inputs are not modified.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

State = tuple[np.ndarray, np.ndarray]
Acceleration = Callable[[np.ndarray, np.ndarray], np.ndarray]


def semi_implicit_euler(state: State, dt: float, acceleration: Acceleration) -> State:
    """Symplectic (semi-implicit) Euler, first order: q̇ₖ₊₁ = q̇ₖ + dt·a(qₖ, q̇ₖ), then
    qₖ₊₁ = qₖ + dt·q̇ₖ₊₁. One acceleration evaluation per step."""
    q, qd = state
    qd_next = qd + dt * acceleration(q, qd)
    return q + dt * qd_next, qd_next


def rk4(state: State, dt: float, acceleration: Acceleration) -> State:
    """Classical fourth-order Runge–Kutta on the first-order system (q̇, q̈). Four
    acceleration evaluations per step."""
    q, qd = state
    half = 0.5 * dt
    k1_q, k1_v = qd, acceleration(q, qd)
    k2_q = qd + half * k1_v
    k2_v = acceleration(q + half * k1_q, k2_q)
    k3_q = qd + half * k2_v
    k3_v = acceleration(q + half * k2_q, k3_q)
    k4_q = qd + dt * k3_v
    k4_v = acceleration(q + dt * k3_q, k4_q)
    sixth = dt / 6.0
    return (
        q + sixth * (k1_q + 2.0 * k2_q + 2.0 * k3_q + k4_q),
        qd + sixth * (k1_v + 2.0 * k2_v + 2.0 * k3_v + k4_v),
    )


INTEGRATORS: dict[str, Callable[[State, float, Acceleration], State]] = {
    "semi_implicit_euler": semi_implicit_euler,
    "rk4": rk4,
}

__all__ = ["INTEGRATORS", "rk4", "semi_implicit_euler"]
