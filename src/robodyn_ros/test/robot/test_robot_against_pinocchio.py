"""Every Robot function against Pinocchio, on real robots and generated chains and trees, and
the batch semantics: a (B, n) batch gives exactly the stack of the single-state results.

Tolerance (`assert_close`): max |robodyn − Pinocchio| ≤ RTOL × max(max |reference|, FLOOR), i.e.
relative to the largest magnitude of the reference (not elementwise, so small entries of a big
matrix are judged on the matrix's scale), with an absolute floor so that references that are
near zero (a gravity torque, a potential energy) are held to RTOL × FLOOR = 1e-12 in SI units
rather than to a meaningless relative bound. Measured agreement is 1e-16 … 1e-10.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.dynamics import kernel_cache_dir, state_entries

from helpers.tolerances import BATCH_RTOL, KAPPA_REF, assert_close

STATES = 3  # random states per robot and function


# -- inverse dynamics -------------------------------------------------------------------------


@pytest.mark.parametrize("with_wrenches", [False, True], ids=["no_fext", "fext"])
def test_inverse_dynamics(case, with_wrenches: bool) -> None:
    q, qd, qdd, f_ext = case.states(STATES, seed=1)
    for i in range(STATES):
        f = f_ext[i] if with_wrenches else None
        tau = case.robot.inverse_dynamics(q[i], qd[i], qdd[i], f_ext=f)
        expected = case.oracle.rnea(q[i], qd[i], qdd[i], f)
        assert_close(tau, expected, f"{case.name} state {i} tau")


def test_bias_forces_and_gravity(case) -> None:
    q, qd, _, _ = case.states(STATES, seed=2)
    for i in range(STATES):
        assert_close(
            case.robot.bias_forces(q[i], qd[i]),
            case.oracle.bias_forces(q[i], qd[i]),
            f"{case.name} state {i} bias forces",
        )
        assert_close(
            case.robot.gravity_torques(q[i]),
            case.oracle.gravity_torques(q[i]),
            f"{case.name} state {i} gravity",
        )


# -- joint-space inertia ----------------------------------------------------------------------


def test_mass_matrix(case) -> None:
    q, _, _, _ = case.states(STATES, seed=3)
    for i in range(STATES):
        M = case.robot.mass_matrix(q[i], method="crba")
        assert_close(M, case.oracle.mass_matrix(q[i]), f"{case.name} state {i} M")


def test_mass_matrix_inverse(case) -> None:
    q, _, _, _ = case.states(STATES, seed=4)
    for i in range(STATES):
        Minv = case.robot.mass_matrix_inverse(q[i], method="ltdl")
        assert_close(Minv, case.oracle.mass_matrix_inverse(q[i]), f"{case.name} state {i} Minv")


# -- forward dynamics -------------------------------------------------------------------------


@pytest.mark.parametrize("with_wrenches", [False, True], ids=["no_fext", "fext"])
@pytest.mark.parametrize("method", ["aba", "cholesky"])
def test_forward_dynamics(case, method: str, with_wrenches: bool) -> None:
    """τ = RNEA(q, q̇, q̈) with q̈ of order 1, so the expected q̈ is of order 1 too."""
    q, qd, qdd, f_ext = case.states(STATES, seed=5)
    for i in range(STATES):
        f = f_ext[i] if with_wrenches else None
        tau = case.oracle.rnea(q[i], qd[i], qdd[i])
        acc = case.robot.forward_dynamics(q[i], qd[i], tau, method=method, f_ext=f)
        expected = case.oracle.aba(q[i], qd[i], tau, f)
        M = case.oracle.mass_matrix(q[i])
        what = f"{case.name} state {i} qdd ({method})"
        kappa = np.linalg.cond(M)
        assert_close(acc, expected, what, scale=max(1.0, kappa / KAPPA_REF))
        # backward error, never scaled: the q̈ difference costs at most RTOL |τ| in torque
        assert_close(tau + M @ (acc - expected), tau, what + " torque residual")


# -- kinematics -------------------------------------------------------------------------------


def test_frame_poses(case) -> None:
    q, _, _, _ = case.states(STATES, seed=6)
    robot, oracle = case.robot, case.oracle
    for i in range(STATES):
        poses = robot.frame_poses(q[i])
        expected = np.array([oracle.frame_pose(q[i], frame) for frame in robot.frame_names])
        assert_close(poses, expected, f"{case.name} state {i} frame_poses")
        tip = robot.frame_pose(q[i], case.tip)
        assert_close(tip, oracle.frame_pose(q[i], case.tip), f"{case.name} state {i} {case.tip}")


def test_jacobian(case) -> None:
    q, _, _, _ = case.states(STATES, seed=7)
    for i in range(STATES):
        J = case.robot.jacobian(q[i], case.tip)
        assert_close(J, case.oracle.jacobian(q[i], case.tip), f"{case.name} state {i} J")


# -- energy -----------------------------------------------------------------------------------


def test_energies(case) -> None:
    q, qd, _, _ = case.states(STATES, seed=8)
    for i in range(STATES):
        T = case.robot.kinetic_energy(q[i], qd[i])
        V = case.robot.potential_energy(q[i])
        assert np.shape(T) == np.shape(V) == ()
        assert_close(T, case.oracle.kinetic_energy(q[i], qd[i]), f"{case.name} state {i} T")
        assert_close(V, case.oracle.potential_energy(q[i]), f"{case.name} state {i} V")


# -- operational space ------------------------------------------------------------------------


def test_operational_space_inertia(arm_case) -> None:
    """Λ of a tip frame whose Jacobian has full row rank 6 (checked: σ_min/σ_max > 1e-4)."""
    case = arm_case
    q, _, _, _ = case.states(STATES, seed=9)
    for i in range(STATES):
        J = case.oracle.jacobian(q[i], case.tip)
        sigma = np.linalg.svd(J, compute_uv=False)
        assert sigma[5] > 1e-4 * sigma[0], f"{case.name} state {i}: J of {case.tip} near singular"
        Lambda = case.robot.operational_space_inertia(q[i], case.tip, method="dense")
        expected = case.oracle.operational_space_inertia(q[i], case.tip)
        assert_close(Lambda, expected, f"{case.name} state {i} Lambda of {case.tip}")


def test_inverse_operational_space_inertia(case) -> None:
    """Λ⁻¹ = J M⁻¹ Jᵀ, defined also where J is rank deficient (the shallow 12-joint trees)."""
    q, _, _, _ = case.states(STATES, seed=10)
    for i in range(STATES):
        J = case.oracle.jacobian(q[i], case.tip)
        expected = J @ case.oracle.mass_matrix_inverse(q[i]) @ J.T
        inverse = case.robot.operational_space_inertia(q[i], case.tip, inverse=True)
        assert_close(inverse, expected, f"{case.name} state {i} Lambda^-1 of {case.tip}")


# -- batch semantics --------------------------------------------------------------------------

BATCH = 4


def _lambda(case, q):
    return case.robot.operational_space_inertia(q, case.tip, inverse=not case.tip_has_full_rank)


# name → f(case, q, qd, qdd, f_ext), each argument one state or a batch of them
FUNCTIONS: dict[str, Callable] = {
    "inverse_dynamics": lambda c, q, qd, qdd, f: c.robot.inverse_dynamics(q, qd, qdd),
    "inverse_dynamics_fext": lambda c, q, qd, qdd, f: c.robot.inverse_dynamics(q, qd, qdd, f),
    "bias_forces": lambda c, q, qd, qdd, f: c.robot.bias_forces(q, qd),
    "gravity_torques": lambda c, q, qd, qdd, f: c.robot.gravity_torques(q),
    "mass_matrix": lambda c, q, qd, qdd, f: c.robot.mass_matrix(q),
    "mass_matrix_inverse": lambda c, q, qd, qdd, f: c.robot.mass_matrix_inverse(q),
    "forward_dynamics_aba": lambda c, q, qd, tau, f: c.robot.forward_dynamics(q, qd, tau),
    "forward_dynamics_aba_fext": lambda c, q, qd, tau, f: c.robot.forward_dynamics(
        q, qd, tau, f_ext=f
    ),
    "forward_dynamics_cholesky": lambda c, q, qd, tau, f: c.robot.forward_dynamics(
        q, qd, tau, method="cholesky"
    ),
    "forward_dynamics_cholesky_fext": lambda c, q, qd, tau, f: c.robot.forward_dynamics(
        q, qd, tau, method="cholesky", f_ext=f
    ),
    "frame_pose": lambda c, q, qd, qdd, f: c.robot.frame_pose(q, c.tip),
    "frame_poses": lambda c, q, qd, qdd, f: c.robot.frame_poses(q),
    "jacobian": lambda c, q, qd, qdd, f: c.robot.jacobian(q, c.tip),
    "kinetic_energy": lambda c, q, qd, qdd, f: c.robot.kinetic_energy(q, qd),
    "potential_energy": lambda c, q, qd, qdd, f: c.robot.potential_energy(q),
    "operational_space_inertia": lambda c, q, qd, qdd, f: _lambda(c, q),
    "operational_space_inertia_inverse": lambda c, q, qd, qdd, f: (
        c.robot.operational_space_inertia(q, c.tip, inverse=True)
    ),
}


# The functions that solve with M (q̈, M⁻¹, Λ⁻¹ = J M⁻¹ Jᵀ); Λ solves with M, then inverts Λ⁻¹.
SOLVE_WITH_M = {name for name in FUNCTIONS if name.startswith("forward_dynamics")} | {
    "mass_matrix_inverse", "operational_space_inertia_inverse", "operational_space_inertia"}


def _solve_condition(case, function: str, q: np.ndarray) -> float:
    """The product of the condition numbers of the matrices `function` solves with or inverts,
    at the worst of the states q (1 for a direct computation): κ(M), times κ(Λ⁻¹) for Λ."""
    if function not in SOLVE_WITH_M:
        return 1.0
    condition = float(np.max(np.linalg.cond(case.robot.mass_matrix(q))))
    if function == "operational_space_inertia" and case.tip_has_full_rank:
        inverses = case.robot.operational_space_inertia(q, case.tip, inverse=True)
        condition *= float(np.max(np.linalg.cond(inverses)))
    return condition


@pytest.mark.parametrize("function", FUNCTIONS)
def test_batch_is_the_stack_of_single_states(case, function: str) -> None:
    """The batch kernel and the single-state C entry agree to BATCH_RTOL, times the condition
    numbers of the matrices they solve with (tolerances.BATCH_RTOL says why)."""
    call = FUNCTIONS[function]
    q, qd, qdd, f_ext = case.states(BATCH, seed=11)
    qdd = 10.0 * qdd  # doubles as τ for forward dynamics
    batch = call(case, q, qd, qdd, f_ext)
    singles = np.stack([call(case, q[i], qd[i], qdd[i], f_ext[i]) for i in range(BATCH)])
    assert singles.shape[0] == BATCH and np.all(np.isfinite(singles))
    condition = _solve_condition(case, function, q)
    assert_close(batch, singles, f"{case.name} {function} batch", rtol=BATCH_RTOL,
                 scale=condition)
    one = call(case, q[:1], qd[:1], qdd[:1], f_ext[:1])  # a batch of one keeps its axis
    assert_close(one, singles[:1], f"{case.name} {function} batch of one", rtol=BATCH_RTOL,
                 scale=condition)


# The batch kernels of the functions that solve with M, each over a routine the C entries call.
BATCH_KERNELS = {
    "operational_space_inertia": "task_space.operational_space_inertia_recursive",
    "operational_space_inertia_inverse": "task_space.operational_space_inertia_recursive",
    "forward_dynamics_aba": "forward_dynamics.forward_dynamics",
    "mass_matrix_inverse": "inertia_inverse.mass_matrix_inverse",
}


def test_batches_agree_in_a_process_that_compiles_the_kernels_over_cached_routines(
        tmp_path: Path) -> None:
    """The batch tests in the order a cold `make test` can give them: a process that loads the
    C entries and the routines they call (articulated_task_inverse, aba_state, minv_aba) from
    the cache, built by another process, and compiles the batch kernels itself. Its kernels
    then run the routines' own builds, its C entries their copies (tolerances.BATCH_RTOL)."""
    for entry in state_entries().ENTRIES.values():  # in the cache, with the routines they call
        assert entry.compiled is not None
    cache = tmp_path / "cache"
    shutil.copytree(kernel_cache_dir(), cache / kernel_cache_dir().name,
                    ignore=shutil.ignore_patterns("*.tmp.*"))  # builds another worker is writing
    for kernel in set(BATCH_KERNELS.values()):
        for build in cache.rglob(f"{kernel}-*"):
            build.unlink()
    tests = [f"{__file__}::test_batch_is_the_stack_of_single_states[{name}-{function}]"
             for name in ("chain32", "chain128", "tree40_seed1") for function in BATCH_KERNELS]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
         *tests], env={**os.environ, "NUMBA_CACHE_DIR": str(cache)}, cwd=Path(__file__).parents[2],
        capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
