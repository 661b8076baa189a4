"""Contact impulses with Coulomb friction by projected Gauss–Seidel on the Delassus matrix.

For k point contacts, each with its frame (normal n, tangents t1, t2), the contact velocities
after a step are u = u_free + G λ, G = J M⁻¹ Jᵀ the Delassus matrix (the inverse of the
operational-space inertia of the contact points; Khatib 1987) and λ the impulses. Each contact
asks (Signorini and Coulomb):

    λ_n ≥ 0,  u_n ≥ u_min,  λ_n (u_n − u_min) = 0;   ‖λ_t‖ ≤ μ λ_n, opposing u_t when it slides.

Projected Gauss–Seidel solves one contact at a time against the others' current impulses: the
normal impulse from its row, clipped at zero, then the tangential pair by a step −u_t / g,
g the largest eigenvalue of its 2×2 block, projected on the disk of radius μ λ_n; sweeps
repeat until a sweep changes no contact velocity by more than the tolerance (Jourdan, Alart
& Jean 1998; the iterative constraint-force methods of the seed papers, Sharf & D'Eleuterio,
on a cone). Each contact's new impulse is taken at `relaxation` (under 1) of the way from its
old one: at full steps the sweeps can cycle on redundant contacts (Solo12's legs folded on the
ground: 20 contacts, G of rank 18, the velocity change stuck at 3.5e-4 m/s after 5,000
sweeps); at 0.8 they converged in 16. The tangential step is isotropic so that a sliding
contact's fixed point is Coulomb's: on the disk's edge the impulse opposes the slip (−u_t). A
step by the block's inverse instead projects in G's metric, and a box sliding on its four
corners then took 10 % less friction than μ N.
When a window of STALL_SWEEPS sweeps does not halve the velocity change, the relaxation
halves (down to LEAST_RELAXATION): strongly coupled contacts then converge instead of
cycling. A contact no impulse can move along its normal (G_nn ≈ 0: a link that turns
about the plane's normal, cut by it) takes none, rather than a division by zero. The
sweeps run compiled (projected_gauss_seidel, a kernel like the dynamics').
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robodyn_ros.dynamics.jit import kernel

ROWS = 3  # per contact: normal, then two tangents
SWEEP_ROWS = 3  # rows of projected_gauss_seidel's workspace: u, u at the sweep's start, 1 / g
INERT = 1e-12  # a contact whose G_nn is below this times G's largest diagonal takes no impulse
STALL_SWEEPS = 100  # sweeps over which the velocity change must halve, else relaxation halves
LEAST_RELAXATION = 0.01


@dataclass(frozen=True, eq=False)
class ContactImpulses:
    """What the solver found.

    Attributes:
        impulses: (k, 3) each contact's [normal; tangent 1; tangent 2] impulse, N·s.
        iterations: sweeps made.
        change: the largest change of a contact velocity in the last sweep, m/s.
        converged: the change fell under the tolerance.
    """

    impulses: np.ndarray
    iterations: int
    change: float
    converged: bool


def solve_contact_impulses(delassus: np.ndarray, free_velocity: np.ndarray,
                           least_normal_velocity: np.ndarray, friction: np.ndarray,
                           tolerance: float, max_iterations: int, relaxation: float = 0.8
                           ) -> ContactImpulses:
    """The impulses of k contacts.

    Args:
        delassus: G (3k, 3k), symmetric, rows in contact order, each contact's normal
            first.
        free_velocity: u_free (3k,), the contact velocities without contact impulses.
        least_normal_velocity: u_min (k,), the normal velocity each contact must reach.
        friction: μ (k,) ≥ 0.
        tolerance: m/s, the change of every contact velocity in a sweep under which it stops:
            of the velocities, not the impulses, since redundant contacts (a box's four corners,
            a mesh's hull vertices near the plane) share their impulses in ways that change
            nothing the robot feels, and converge slowly.
        max_iterations: the sweeps allowed.
        relaxation: in (0, 1], how far each contact's impulse moves to its new value.

    Returns:
        The ContactImpulses (not converged when the sweeps ran out).
    """
    impulses = np.zeros((len(friction), ROWS))
    sweeps = projected_gauss_seidel(
        np.ascontiguousarray(delassus, dtype=float), np.ascontiguousarray(free_velocity, float),
        np.ascontiguousarray(least_normal_velocity, float), np.ascontiguousarray(friction, float),
        float(tolerance), int(max_iterations), float(relaxation), impulses,
        np.empty((SWEEP_ROWS, ROWS * len(friction))))
    return ContactImpulses(impulses, sweeps.iterations, sweeps.change,
                           sweeps.change <= tolerance)


class Sweeps(NamedTuple):
    """How projected_gauss_seidel ended: its sweeps, and the largest change of a contact
    velocity in the last one (m/s)."""

    iterations: int
    change: float


@kernel
def projected_gauss_seidel(delassus: np.ndarray, free_velocity: np.ndarray,
                           least_normal_velocity: np.ndarray, friction: np.ndarray,
                           tolerance: float, max_iterations: int, relaxation: float,
                           impulses: np.ndarray, workspace: np.ndarray) -> Sweeps:
    """Sweeps over the contacts (module doc) from `impulses` (k, 3), updated in place, until
    a sweep changes no contact velocity by more than `tolerance` or `max_iterations` ran.
    workspace (SWEEP_ROWS, 3k) holds the contact velocities, those at a sweep's start and
    each contact's tangential step."""
    count = impulses.shape[0]
    size = ROWS * count
    velocity, start, tangent_steps = workspace[0], workspace[1], workspace[2]
    largest_diagonal = 0.0
    for c in range(size):
        velocity[c] = free_velocity[c]  # u = u_free + G λ, kept current through the sweeps
    for c in range(size):
        largest_diagonal = max(largest_diagonal, delassus[c, c])
        impulse = impulses[c // ROWS, c % ROWS]
        if impulse != 0.0:  # none when the sweeps start from zero
            for r in range(size):
                velocity[r] += delassus[c, r] * impulse
    inert_below = INERT * largest_diagonal
    for i in range(count):  # 1 / the largest eigenvalue of the contact's tangential 2x2 block
        a, b = delassus[ROWS * i + 1, ROWS * i + 1], delassus[ROWS * i + 1, ROWS * i + 2]
        d = delassus[ROWS * i + 2, ROWS * i + 2]
        largest = 0.5 * (a + d) + np.sqrt(0.25 * (a - d) ** 2 + b * b)
        tangent_steps[i] = 1.0 / largest if largest > inert_below else 0.0
    change, iteration = np.inf, 0
    window_change = np.inf  # the change when the current window of sweeps began
    while iteration < max_iterations and change > tolerance:
        iteration += 1
        if iteration % STALL_SWEEPS == 0:  # no halving of the change over a window: damp more
            if change > 0.5 * window_change and relaxation > LEAST_RELAXATION:
                relaxation = max(0.5 * relaxation, LEAST_RELAXATION)
            window_change = change
        for r in range(size):
            start[r] = velocity[r]
        for i in range(count):
            row = ROWS * i
            if delassus[row, row] <= inert_below:
                continue  # no impulse moves it along its normal: it takes none
            normal = max(0.0, impulses[i, 0] - (velocity[row] - least_normal_velocity[i])
                         / delassus[row, row])
            normal_step = normal - impulses[i, 0]
            tangent_1 = impulses[i, 1] - tangent_steps[i] * (
                velocity[row + 1] + delassus[row + 1, row] * normal_step)
            tangent_2 = impulses[i, 2] - tangent_steps[i] * (
                velocity[row + 2] + delassus[row + 2, row] * normal_step)
            reach, length = friction[i] * normal, np.sqrt(tangent_1 ** 2 + tangent_2 ** 2)
            if length > reach:
                tangent_1 *= reach / length
                tangent_2 *= reach / length
            step_n = relaxation * normal_step
            step_1 = relaxation * (tangent_1 - impulses[i, 1])
            step_2 = relaxation * (tangent_2 - impulses[i, 2])
            if step_n == 0.0 and step_1 == 0.0 and step_2 == 0.0:
                continue  # a contact that stays open: nothing to add
            impulses[i, 0] += step_n
            impulses[i, 1] += step_1
            impulses[i, 2] += step_2
            for r in range(size):  # u += G[:, contact i] Δλ_i, read along G's rows (G = Gᵀ)
                velocity[r] += (delassus[row, r] * step_n + delassus[row + 1, r] * step_1
                                + delassus[row + 2, r] * step_2)
        change = 0.0
        for r in range(size):
            change = max(change, abs(velocity[r] - start[r]))
    return Sweeps(iteration, change)


__all__ = ["ContactImpulses", "Sweeps", "projected_gauss_seidel", "solve_contact_impulses"]
