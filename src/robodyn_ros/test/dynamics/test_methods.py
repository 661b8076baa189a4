"""The joint-space inertia methods (issue 4) against CRBA and Pinocchio on the real robots and
generated chains and trees of helpers/cases.py: GDAHJ, recursive doubling, RNEA columns, the O(n)
diagonal, and the branch-sparse LᵀDL factor behind mass_matrix_inverse("ltdl") and
forward_dynamics("cholesky").

Two error measures: max |M − M_ref| ≤ RTOL · max |M_ref| (as helpers.tolerances.assert_close),
and Safeea's eq. 32, e = Σ |M − M_ref| / max |(M + M_ref)/2|, which sums n² entries and so is
held to n² · MEAN_RTOL.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.dynamics import factorization, recursive_doubling
from robodyn_ros.dynamics.gdahj import safeea_error
from robodyn_ros.model.generate import random_chain_urdf

RTOL = 1e-10
MEAN_RTOL = 1e-14
STATES = 2
BATCH = 3
METHODS = ("gdahj", "recursive_doubling", "rnea_columns")


def is_chain(robot: Robot) -> bool:
    return bool(np.all(robot.model.parent == np.arange(robot.nv) - 1))


def assert_close(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} ≠ {expected.shape}"
    error = float(np.max(np.abs(actual - expected)))
    bound = RTOL * float(np.max(np.abs(expected)))
    assert error <= bound, f"{what}: max |error| {error:.3e} > {bound:.3e}"


@pytest.mark.parametrize("method", METHODS)
def test_method_equals_crba_and_pinocchio(case, method: str) -> None:
    robot = case.robot
    q, _, _, _ = case.states(STATES, seed=40)
    if method == "recursive_doubling" and not is_chain(robot):
        with pytest.raises(ValueError, match=r"recursive_doubling.*serial chain"):
            robot.mass_matrix(q[0], method=method)
        return
    for i in range(STATES):
        M = robot.mass_matrix(q[i], method=method)
        crba = robot.mass_matrix(q[i], method="crba")
        what = f"{case.name} state {i} {method}"
        assert_close(M, crba, what + " vs crba")
        assert_close(M, case.oracle.mass_matrix(q[i]), what + " vs Pinocchio")
        assert safeea_error(M, crba) <= robot.nv**2 * MEAN_RTOL, what + " eq. 32"


def test_diagonal_equals_pinocchio(case) -> None:
    q, _, _, _ = case.states(STATES, seed=41)
    for i in range(STATES):
        diag = case.robot.mass_matrix_diagonal(q[i])
        expected = np.diagonal(case.oracle.mass_matrix(q[i]))
        assert_close(diag, expected, f"{case.name} state {i} diag M")


BATCH_CASES = [
    (name, method)
    for name in ("panda", "chain32", "tree40_seed1")
    for method in (*METHODS, "diagonal")
    if not (name.startswith("tree") and method == "recursive_doubling")  # chains only
]


@pytest.mark.parametrize(("name", "method"), BATCH_CASES)
def test_batch_is_the_stack_of_single_states(load_robot, name: str, method: str) -> None:
    robot = load_robot(name)
    call = robot.mass_matrix_diagonal if method == "diagonal" else (
        lambda q: robot.mass_matrix(q, method=method)
    )
    q = np.random.default_rng(42).uniform(-np.pi, np.pi, (BATCH, robot.nv))
    batch = call(q)
    np.testing.assert_array_equal(batch, np.stack([call(x) for x in q]))
    np.testing.assert_array_equal(call(q[:1]), batch[:1])


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 33])
def test_recursive_doubling_runs_ceil_log2_levels(n: int) -> None:
    robot = Robot.from_urdf_string(random_chain_urdf(n, seed=n))
    q = np.random.default_rng(n).uniform(-np.pi, np.pi, n)
    M = np.empty((n, n))
    levels = recursive_doubling.mass_matrix(robot._tree, q[np.newaxis], M[np.newaxis])
    assert levels == recursive_doubling.level_count(n) == (math.ceil(math.log2(n)) if n > 1 else 0)
    assert_close(M, robot.mass_matrix(q), f"chain{n} recursive doubling")


def test_unknown_method(load_robot) -> None:
    with pytest.raises(ValueError, match=r"unknown method 'cholesky'.*gdahj"):
        load_robot("panda").mass_matrix(np.zeros(7), method="cholesky")


@pytest.mark.parametrize("name", ["chain32", "tree40_seed1", "talos"])
def test_ltdl_factor_keeps_branch_sparsity(load_robot, name: str) -> None:
    """M = Lᵀ D L with L unit lower triangular and L[i, j] = 0 unless j is an ancestor of i:
    no fill-in, the factor behind mass_matrix_inverse("ltdl") and forward_dynamics("cholesky")."""
    robot = load_robot(name)
    n, parent = robot.nv, robot.model.parent
    q = np.random.default_rng(43).uniform(-1.0, 1.0, n)
    M = robot.mass_matrix(q)
    LD = M.copy()
    factorization.ltdl(LD, np.asarray(parent, dtype=np.int64))
    L = np.tril(LD, -1) + np.eye(n)
    ancestor = np.eye(n, dtype=bool)
    for i in range(n):
        j = parent[i]
        while j >= 0:
            ancestor[i, j] = True
            j = parent[j]
    assert np.all(L[~ancestor] == 0.0), f"{name}: fill-in off the ancestor pattern"
    assert_close(L.T @ np.diag(np.diagonal(LD)) @ L, M, f"{name} LᵀDL")
