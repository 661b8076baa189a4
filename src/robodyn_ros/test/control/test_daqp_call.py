"""DAQP's C entry point called from a kernel (control.daqp_call) against daqp.solve, DAQP's own
Python interface, on random programmes: the same exit flag, solution and multipliers, with
equality rows, inequality rows and rows that start active (a warm start). A programme with a
value that is not finite anywhere is refused (NOT_FINITE), where DAQP passes over a row with a
NaN and reports the rest solved."""

from __future__ import annotations

import daqp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from robodyn_ros.control.daqp_call import NOT_FINITE, PROBLEM, RESULT, quadprog
from robodyn_ros.control.whole_body_programme import ACTIVE_AT_LOWER, INFEASIBLE, NO_BOUND, SOLVED

EQUALITY = 5  # DAQP's sense of a row held at its bounds (ACTIVE | IMMUTABLE)


@njit(cache=False)
def kernel_quadprog(H, f, A, upper, lower, sense, x, multipliers, problem, result):
    """quadprog as a kernel calls it."""
    return quadprog(H, f, A, upper, lower, sense, x, multipliers, problem, result)


def random_programme(seed: int, variables: int, equalities: int, inequalities: int
                     ) -> tuple[np.ndarray, ...]:
    """A strictly convex programme: H = B Bᵀ + 1, equality rows, then lower-bounded rows."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((variables, variables))
    rows = equalities + inequalities
    A = rng.standard_normal((rows, variables))
    lower = rng.standard_normal(rows)
    upper = np.full(rows, NO_BOUND)
    upper[:equalities] = lower[:equalities]
    sense = np.zeros(rows, dtype=np.int32)
    sense[:equalities] = EQUALITY
    return B @ B.T + np.eye(variables), rng.standard_normal(variables), A, upper, lower, sense


def solved_both_ways(H, f, A, upper, lower, sense):
    """(flag, x, multipliers) from the kernel's call and from daqp.solve."""
    x, multipliers = np.empty(len(f)), np.empty(len(lower))
    flag = kernel_quadprog(H, f, A, upper, lower, sense, x, multipliers, np.zeros(1, PROBLEM),
                           np.zeros(1, RESULT))
    their_x, _, their_flag, info = daqp.solve(H, f, A, upper, lower, sense)
    return (flag, x, multipliers), (their_flag, their_x, info["lam"])


def test_the_records_are_laid_out_as_daqps_structs():
    """DAQPProblem (80 bytes, H at 16) and DAQPResult (64 bytes, exitflag at 32) on LP64."""
    assert PROBLEM.itemsize == 80 and PROBLEM.fields["H"][1] == 16
    assert PROBLEM.fields["problem_type"][1] == 76
    assert RESULT.itemsize == 64 and RESULT.fields["exitflag"][1] == 32
    assert RESULT.fields["setup_time"][1] == 56


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), variables=st.integers(1, 30),
       equalities=st.integers(0, 6), inequalities=st.integers(0, 40))
def test_the_kernels_call_answers_as_daqp_solve(seed, variables, equalities, inequalities):
    equalities = min(equalities, variables)
    ours, theirs = solved_both_ways(*random_programme(seed, variables, equalities,
                                                      inequalities))
    assert ours[0] == theirs[0]
    if ours[0] == SOLVED:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(ours[2], theirs[2], rtol=0, atol=1e-12)


def test_an_infeasible_programme_gets_daqps_flag():
    """x ≥ 1 and −x ≥ 0 on one variable."""
    H, f, A = np.eye(1), np.zeros(1), np.array([[1.0], [-1.0]])
    upper, lower = np.full(2, NO_BOUND), np.array([1.0, 0.0])
    ours, theirs = solved_both_ways(H, f, A, upper, lower, np.zeros(2, dtype=np.int32))
    assert ours[0] == theirs[0] == INFEASIBLE


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), started=st.lists(st.booleans(), min_size=30,
                                                          max_size=30))
def test_rows_started_active_reach_the_cold_answer(seed, started):
    """Any set of inequality rows marked ACTIVE_AT_LOWER, right or wrong, ends at the answer
    of a cold start: the warm start only changes where DAQP's iterations begin."""
    H, f, A, upper, lower, sense = random_programme(seed, 20, 4, 30)
    cold, _ = solved_both_ways(H, f, A, upper, lower, sense)
    warm_sense = sense.copy()
    warm_sense[4:][np.array(started)] = ACTIVE_AT_LOWER
    warm, _ = solved_both_ways(H, f, A, upper, lower, warm_sense)
    assert warm[0] == cold[0]
    if cold[0] == SOLVED:
        np.testing.assert_allclose(warm[1], cold[1], rtol=0, atol=1e-9)


@pytest.mark.parametrize("part", ["H", "f", "A", "upper", "lower"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_programme_not_finite_is_refused_not_solved(part, value):
    """One entry of one part NaN or infinite (an inequality row's, where DAQP itself would
    drop the row and answer SOLVED): NOT_FINITE, whatever DAQP would say."""
    H, f, A, upper, lower, sense = random_programme(7, 12, 3, 20)
    parts = {"H": H, "f": f, "A": A, "upper": upper, "lower": lower}
    parts[part].flat[-1] = value  # the last inequality row's entry in A and the bounds
    x, multipliers = np.zeros(len(f)), np.zeros(len(lower))
    flag = kernel_quadprog(H, f, A, upper, lower, sense, x, multipliers,
                           np.zeros(1, PROBLEM), np.zeros(1, RESULT))
    assert flag == NOT_FINITE
