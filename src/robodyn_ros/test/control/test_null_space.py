"""The whole-body programme's equalities eliminated (control.null_space) against the dense
equalities they come from, on random systems hypothesis draws: a floating robot's M (positive
definite, of some conditioning), b, a contact Jacobian J_c with k rows and its accelerations ζ.
x₀ must solve E x = e, the basis Z must span E's null space (E Z = 0, rank n − 6), and
contacts whose rows are dependent must be refused. Tolerances are relative to the entries the
products sum, a few thousand ulps times the conditioning."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros.control.null_space import (
    BASE_ROWS,
    eliminate_base,
    eliminate_contacts,
    null_space_basis,
)

EXAMPLES = settings(max_examples=40, deadline=None)
RTOL = 1e-11


def system(seed: int, joints: int, forces: int, kappa: float) -> dict[str, np.ndarray]:
    """A random floating system: M of condition number about κ, b, J_c (k, n), ζ and m."""
    rng = np.random.default_rng(seed)
    n = BASE_ROWS + joints
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    M = Q @ np.diag(np.geomspace(1.0, kappa, n)) @ Q.T
    return {"M": (M + M.T) / 2, "b": rng.standard_normal(n),
            "J_c": rng.standard_normal((forces, n)), "goal": rng.standard_normal(forces),
            "mass": float(rng.uniform(0.5, 80.0))}


def eliminated(s: dict[str, np.ndarray]) -> tuple[bool, np.ndarray, np.ndarray]:
    """(contacts independent, basis, particular) by the three passes."""
    n, forces = len(s["b"]), len(s["goal"])
    reduced = n - BASE_ROWS + forces
    base, factor = np.empty((BASE_ROWS, reduced + 1)), np.empty((BASE_ROWS, BASE_ROWS))
    constraint, columns = np.empty((forces, reduced + 1)), np.empty(reduced, dtype=np.int64)
    basis, particular = np.empty((n + forces, n - BASE_ROWS)), np.empty(n + forces)
    assert eliminate_base(s["M"], s["b"], s["J_c"], s["mass"], factor, base)
    if not eliminate_contacts(s["J_c"], s["goal"], base, constraint, columns):
        return False, basis, particular
    null_space_basis(base, constraint, columns, basis, particular)
    return True, basis, particular


def dense_equalities(s: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """E and e over x = (v̇, λ̃): M_b v̇ − m J_bᵀ λ̃ = −b_b and J_c v̇ = ζ."""
    n, forces = len(s["b"]), len(s["goal"])
    E = np.zeros((BASE_ROWS + forces, n + forces))
    E[:BASE_ROWS, :n] = s["M"][:BASE_ROWS]
    E[:BASE_ROWS, n:] = -s["mass"] * s["J_c"][:, :BASE_ROWS].T
    E[BASE_ROWS:, :n] = s["J_c"]
    return E, np.concatenate([-s["b"][:BASE_ROWS], s["goal"]])


@EXAMPLES
@given(st.integers(0, 2**32 - 1), st.integers(1, 14), st.integers(1, 14),
       st.sampled_from([1.0, 1e2, 1e4]))
def test_the_basis_spans_the_solutions_of_the_equalities(seed, joints, forces, kappa) -> None:
    """At most n contact rows, which random rows then leave independent."""
    s = system(seed, joints, min(forces, BASE_ROWS + joints), kappa)
    independent, basis, particular = eliminated(s)
    assert independent
    E, e = dense_equalities(s)
    scale = RTOL * kappa * (np.abs(E).max() + 1.0)
    assert np.abs(E @ particular - e).max() <= scale * max(np.abs(particular).max(), 1.0)
    assert np.abs(E @ basis).max() <= scale * max(np.abs(basis).max(), 1.0)
    assert np.linalg.matrix_rank(basis) == joints


@EXAMPLES
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(2, 12))
def test_dependent_contact_rows_are_refused(seed, joints, forces) -> None:
    """A row of J_c repeated (with its ζ, so the rows agree): no basis, never a wrong one."""
    s = system(seed, joints, forces, 10.0)
    repeated = np.random.default_rng(seed).integers(forces - 1)
    s["J_c"][-1], s["goal"][-1] = s["J_c"][repeated], s["goal"][repeated]
    assert not eliminated(s)[0]


def test_a_contact_row_the_others_already_give_is_refused() -> None:
    """A row that is a combination of two others, its ζ too: the rows are dependent."""
    s = system(0, 2, 3, 10.0)
    s["J_c"][2] = 2.0 * s["J_c"][0] - s["J_c"][1]
    s["goal"][2] = 2.0 * s["goal"][0] - s["goal"][1]
    assert not eliminated(s)[0]


def test_more_contact_rows_than_the_robot_has_velocities_are_refused() -> None:
    """k > n rows: J_c cannot have rank k."""
    assert not eliminated(system(1, 2, 9, 10.0))[0]
