"""The small dense solvers inside the kernels, each on its own against numpy: in linalg.py the
Cholesky factor with its substitutions and the trace of the inverse, Gauss–Jordan inversion of
a small symmetric positive-definite matrix, one block-elimination step, the finite check, the
5 x 5 pivot factor with its substitutions and downdate, and the unrolled 5 x 5 LDLᵀ (ldlt5);
the Gram matrices and the smallest singular value of the compiled rollout (sim/rollout.py) and
the task's Λ⁻¹ of its operational-space law (control/compiled_laws.py); the 3 x 3 inverse and
the Householder basis of the constraint-force system (constraint_system.py); the block LDLᵀ of
a block-tridiagonal matrix and the inverse of its last pivot (schur.py); block cyclic
reduction (cyclic_reduction.py); the branch-sparse LᵀDL of M (factorization.py); the 1-norm,
the task inertia's inversion and its damped inverse (task_space.py).

Robot's tests reach these only through whole algorithms; here each meets random symmetric
positive-definite or general matrices of several sizes and condition numbers (hypothesis draws
the size, the conditioning and the seed). The helpers are numba functions, called from Python
as they are (a kernel helper is inlined into the kernels that call it and compiled on its own
for a call from Python). Tolerances are relative to the reference's largest entry and scale
with the condition number κ: RTOL · κ, RTOL a few hundred ulps.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros.control.compiled_laws import task_inverse_inertia
from robodyn_ros.dynamics.constraint_system import householder, inverse3
from robodyn_ros.dynamics.cyclic_reduction import (
    cyclic_reduction,
    cyclic_reduction_solve,
    cyclic_reduction_workspace,
)
from robodyn_ros.dynamics.factorization import ltdl, ltdl_inverse, ltdl_solve
from robodyn_ros.dynamics.linalg import (
    all_finite,
    back_substitute,
    cholesky,
    cholesky_solve,
    downdate,
    eliminate,
    forward_substitute,
    inverse_trace,
    invert_spd,
    ldlt5,
    lower_solve,
    lower_solve5,
    pivot_factor,
    upper_solve,
    upper_solve5,
)
from robodyn_ros.dynamics.schur import block_ldlt, block_ldlt_solve, last_pivot_inverse
from robodyn_ros.dynamics.task_space import damped_task_inertia, invert_task_inertia, norm1
from robodyn_ros.sim.rollout import smallest_singular_value, store_gram

RTOL = 1e-13  # × κ: a few hundred ulps of the reference's largest entry
C = 5  # the blocks of the constraint-force system are 5 x 5
EXAMPLES = settings(max_examples=25, deadline=None)

sizes = st.integers(1, 12)
conditions = st.sampled_from([1.0, 1e2, 1e4, 1e6])
seeds = st.integers(0, 2**32 - 1)


def spd(rng: np.random.Generator, m: int, kappa: float = 1e2) -> np.ndarray:
    """A random symmetric positive-definite m x m matrix of condition number κ."""
    Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    eigenvalues = np.geomspace(1.0, 1.0 / kappa, m) if m > 1 else np.ones(1)
    A = (Q * rng.uniform(0.5, 2.0) * eigenvalues) @ Q.T
    return 0.5 * (A + A.T)


def indefinite(rng: np.random.Generator, m: int) -> np.ndarray:
    """A random symmetric m x m matrix with one negative eigenvalue."""
    Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    eigenvalues = rng.uniform(0.5, 2.0, m)
    eigenvalues[rng.integers(m)] *= -1.0
    A = (Q * eigenvalues) @ Q.T
    return 0.5 * (A + A.T)


def expect_close(actual, expected, kappa: float = 1.0, what: str = "") -> None:
    """max |actual − expected| ≤ RTOL · κ · max |expected| (an absolute floor of 1 for a
    reference near zero)."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} ≠ {expected.shape}"
    bound = RTOL * kappa * max(float(np.max(np.abs(expected), initial=0.0)), 1.0)
    error = float(np.max(np.abs(actual - expected), initial=0.0))
    assert error <= bound, f"{what}: max |error| {error:.3e} > bound {bound:.3e}"


def cholesky_factor(L: np.ndarray) -> np.ndarray:
    """The lower factor held as cholesky and pivot_factor keep it (1 / L_jj on the diagonal)."""
    full = np.tril(L, -1)
    full[np.diag_indices_from(full)] = 1.0 / np.diag(L)
    return full


# -- linalg.py, sim/rollout.py, control/compiled_laws.py: Cholesky, substitutions, trace of the
# inverse, Gram matrices, Λ⁻¹


@EXAMPLES
@given(st.integers(1, 6), st.integers(1, 6), seeds, st.sampled_from([np.nan, np.inf, -np.inf]),
       st.sampled_from([1.0, 1e300, 1e-300]))
def test_all_finite_finds_one_entry_that_is_not(rows, columns, seed, bad, scale) -> None:
    rng = np.random.default_rng(seed)
    a = scale * rng.uniform(-1.0, 1.0, (rows, columns))  # a sum of 1e300s would overflow
    assert all_finite(a) and all_finite(a[0]) and all_finite(a.T)
    a[rng.integers(rows), rng.integers(columns)] = bad
    assert not all_finite(a) and not all_finite(a.T)
    assert all_finite(np.zeros((0, columns)))


@EXAMPLES
@given(sizes, conditions, seeds)
def test_cholesky_factors_a_shifted_spd_matrix(m, kappa, seed) -> None:
    rng = np.random.default_rng(seed)
    A = spd(rng, m, kappa)
    shift = 0.25 * np.linalg.eigvalsh(A)[0]  # A − shift·1 stays positive definite
    L = np.zeros((m, m))
    assert cholesky(A, shift, L)
    full = cholesky_factor(L)
    expect_close(full @ full.T, A - shift * np.eye(m), kappa, "L Lᵀ")
    expect_close(full, np.linalg.cholesky(A - shift * np.eye(m)), kappa, "L")


@EXAMPLES
@given(st.integers(2, 12), seeds)
def test_cholesky_refuses_a_matrix_that_is_not_positive_definite(m, seed) -> None:
    rng = np.random.default_rng(seed)
    assert not cholesky(indefinite(rng, m), 0.0, np.zeros((m, m)))
    A = spd(rng, m)
    assert not cholesky(A, 1.5 * np.linalg.eigvalsh(A)[0], np.zeros((m, m)))  # shifted past 0


@EXAMPLES
@given(sizes, conditions, seeds, st.integers(1, 7))
def test_cholesky_solve_and_the_substitutions(m, kappa, seed, k) -> None:
    rng = np.random.default_rng(seed)
    A = spd(rng, m, kappa)
    L = np.zeros((m, m))
    assert cholesky(A, 0.0, L)
    full = cholesky_factor(L)
    x = rng.standard_normal(m)
    solved = x.copy()
    cholesky_solve(L, solved)
    expect_close(solved, np.linalg.solve(A, x), kappa, "(L Lᵀ)⁻¹ x")
    X = rng.standard_normal((m, k))
    forward, back = X.copy(), X.copy()
    forward_substitute(L, forward)
    back_substitute(L, back)
    expect_close(forward, np.linalg.solve(full, X), np.sqrt(kappa), "L⁻¹ X")
    expect_close(back, np.linalg.solve(full.T, X), np.sqrt(kappa), "L⁻ᵀ X")


@EXAMPLES
@given(sizes, conditions, seeds)
def test_inverse_trace_is_the_trace_of_the_inverse(m, kappa, seed) -> None:
    rng = np.random.default_rng(seed)
    A = spd(rng, m, kappa)
    L, L_inv = np.zeros((m, m)), np.zeros((m, m))
    assert cholesky(A, 0.0, L)
    inverse = np.linalg.inv(A)
    expect_close(inverse_trace(L, L_inv), np.trace(inverse), kappa, "trace(A⁻¹)")
    expect_close(np.tril(L_inv), np.linalg.inv(cholesky_factor(L)), kappa, "L⁻¹")


@EXAMPLES
@given(st.integers(1, 8), st.integers(1, 8), seeds)
def test_store_gram_is_the_smaller_gram_matrix(rows, columns, seed) -> None:
    J = np.random.default_rng(seed).standard_normal((rows, columns))
    m = min(rows, columns)
    out = np.zeros((m, m))
    store_gram(J, out)
    expect_close(out, J @ J.T if rows <= columns else J.T @ J, 1.0, "gram")


@EXAMPLES
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 5), seeds)
def test_smallest_singular_value_over_several_matrices(rows, columns, count, seed) -> None:
    rng = np.random.default_rng(seed)
    m = min(rows, columns)
    Js = rng.standard_normal((count, rows, columns))
    if count > 1:  # one nearly rank-deficient matrix among them
        U, s, Vt = np.linalg.svd(Js[0], full_matrices=False)
        s[-1] = 1e-3 * s[0]
        Js[0] = (U * s) @ Vt
    grams = np.zeros((count, m, m))
    for s, J in enumerate(Js):
        store_gram(J, grams[s])
    expected = min(np.linalg.svd(J, compute_uv=False)[-1] for J in Js)
    largest = max(np.linalg.svd(J, compute_uv=False)[0] for J in Js)
    found = smallest_singular_value(grams, np.zeros((m, m)))
    # √λ from the Gram matrix: an error of ε σ_max² / σ_min in σ_min
    assert abs(found - expected) <= 1e-12 * largest**2 / max(expected, 1e-300) + 1e-15


@EXAMPLES
@given(st.integers(1, 12), conditions, seeds)
def test_task_inverse_inertia_is_j_m_inverse_jt(n, kappa, seed) -> None:
    rng = np.random.default_rng(seed)
    M, J = spd(rng, n, kappa), rng.standard_normal((6, n))
    L = np.zeros((n, n))
    assert cholesky(M, 0.0, L)
    LinvJT, Lambda_inv = np.zeros((n, 6)), np.zeros((6, 6))
    task_inverse_inertia(J, L, LinvJT, Lambda_inv)
    expect_close(Lambda_inv, J @ np.linalg.solve(M, J.T), kappa, "J M⁻¹ Jᵀ")
    expect_close(LinvJT, np.linalg.solve(cholesky_factor(L), J.T), np.sqrt(kappa), "L⁻¹ Jᵀ")


# -- linalg.py, constraint_system.py: Gauss–Jordan, 3 x 3 inverse, elimination, Householder


@EXAMPLES
@given(sizes, conditions, seeds)
def test_invert_spd_inverts_a_positive_definite_matrix(m, kappa, seed) -> None:
    A = spd(np.random.default_rng(seed), m, kappa)
    out, work = np.zeros((m, m)), np.zeros((m, m))
    assert invert_spd(A, out, work)
    expect_close(out, np.linalg.inv(A), kappa, "A⁻¹")


@EXAMPLES
@given(st.integers(2, 12), seeds)
def test_invert_spd_refuses_a_matrix_that_is_not_positive_definite(m, seed) -> None:
    A = indefinite(np.random.default_rng(seed), m)
    assert not invert_spd(A, np.zeros((m, m)), np.zeros((m, m)))


@EXAMPLES
@given(seeds)
def test_inverse3_of_a_general_matrix(seed) -> None:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3, 3)) + 3.0 * np.eye(3)
    kappa = np.linalg.cond(A)
    expect_close(np.reshape(inverse3(tuple(A.ravel())), (3, 3)), np.linalg.inv(A), kappa, "A⁻¹")


@EXAMPLES
@given(conditions, seeds)
def test_eliminate_is_a_schur_complement_step(kappa, seed) -> None:
    rng = np.random.default_rng(seed)
    A, B = spd(rng, C, 1e2), rng.standard_normal((C, C))
    Zinv = np.linalg.inv(spd(rng, C, kappa))
    K, Z = np.zeros((C, C)), np.zeros((C, C))
    eliminate(A, B, Zinv, K, Z)
    expect_close(K, B @ Zinv, kappa, "K = B Zinv")
    expect_close(Z, A - B @ Zinv @ B.T, kappa, "A - B Zinv Bᵀ")


@EXAMPLES
@given(st.lists(st.floats(-10.0, 10.0), min_size=6, max_size=6).filter(
    lambda s: np.linalg.norm(s) > 1e-3))
def test_householder_basis_is_orthonormal_and_orthogonal_to_s(S) -> None:
    u, k = householder(tuple(S))
    u, s = np.array(u), np.array(S) / np.linalg.norm(S)
    assert k == int(np.argmax(np.abs(s)))
    expect_close(np.linalg.norm(u), 1.0, 1.0, "|u|")
    H = np.eye(6) - 2.0 * np.outer(u, u)
    mapped = H @ s
    expect_close(np.abs(mapped), np.eye(6)[k], 1.0, "H s/|s| = ∓e_k")
    W = np.delete(H, k, axis=1)  # the other five columns
    expect_close(W.T @ W, np.eye(5), 1.0, "WᵀW")
    expect_close(W.T @ s, np.zeros(5), 1.0, "Wᵀ s")


# -- schur.py: 5 x 5 pivots, block LDLᵀ of a block-tridiagonal matrix -------------------------


@EXAMPLES
@given(conditions, seeds)
def test_pivot_factor_and_its_substitutions(kappa, seed) -> None:
    rng = np.random.default_rng(seed)
    Z = spd(rng, C, kappa)
    L = np.zeros((C, C))
    pivot_factor(Z, L)
    full = cholesky_factor(L)
    expect_close(full @ full.T, Z, kappa, "L Lᵀ")
    v = rng.standard_normal((3, C))
    lower, upper = v.copy(), v.copy()
    lower_solve(L, lower, 1)
    upper_solve(L, upper, 1)
    expect_close(lower[1], np.linalg.solve(full, v[1]), np.sqrt(kappa), "L⁻¹ v")
    expect_close(upper[1], np.linalg.solve(full.T, v[1]), np.sqrt(kappa), "L⁻ᵀ v")
    expect_close(lower[[0, 2]], v[[0, 2]], 1.0, "the other rows")
    expect_close(upper[[0, 2]], v[[0, 2]], 1.0, "the other rows")


@EXAMPLES
@given(st.integers(1, 8), conditions, seeds)
def test_downdate_subtracts_e_z_inverse_et(m, kappa, seed) -> None:
    rng = np.random.default_rng(seed)
    Z, A, E = spd(rng, C, kappa), spd(rng, m), rng.standard_normal((m, C))
    L, out = np.zeros((C, C)), np.zeros((m, m))
    pivot_factor(Z, L)
    E_in = E.copy()
    downdate(A, L, E, out)
    expect_close(np.tril(out), np.tril(A - E_in @ np.linalg.solve(Z, E_in.T)), kappa,
                 "A - E Z⁻¹ Eᵀ")
    expect_close(E, np.linalg.solve(cholesky_factor(L), E_in.T).T, np.sqrt(kappa), "E L⁻ᵀ")


def block_tridiagonal(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    """(Ad, Ao, dense): a random symmetric positive-definite block-tridiagonal matrix of n
    blocks of 5 x 5, B Bᵀ for a block lower-bidiagonal B; Ad[i] = 𝒜_ii, Ao[i] = 𝒜_{i,i+1}
    (Ao[n − 1] unused, as in the kernels' workspaces)."""
    B = np.zeros((C * n, C * n))
    for i in range(n):
        B[C * i:C * i + C, C * i:C * i + C] = rng.standard_normal((C, C)) + 3.0 * np.eye(C)
        if i + 1 < n:
            B[C * i + C:C * i + 2 * C, C * i:C * i + C] = rng.standard_normal((C, C))
    dense = B @ B.T
    Ad = np.array([dense[C * i:C * i + C, C * i:C * i + C] for i in range(n)])
    Ao = np.zeros((n, C, C))
    for i in range(n - 1):
        Ao[i] = dense[C * i:C * i + C, C * i + C:C * i + 2 * C]
    return Ad, Ao, dense


@EXAMPLES
@given(st.integers(1, 9), seeds)
def test_block_ldlt_solves_a_block_tridiagonal_system(n, seed) -> None:
    rng = np.random.default_rng(seed)
    Ad, Ao, dense = block_tridiagonal(rng, n)
    kappa = np.linalg.cond(dense)
    L, F = np.zeros((n, C, C)), np.zeros((n, C, C))
    block_ldlt(Ad.copy(), Ao.copy(), L, F)
    b = rng.standard_normal((n, C))
    x = np.zeros((n, C))
    block_ldlt_solve(L, F, b.copy(), x)
    expect_close(x.ravel(), np.linalg.solve(dense, b.ravel()), kappa, "A⁻¹ b")


@EXAMPLES
@given(st.integers(1, 9), seeds)
def test_last_pivot_inverse_is_the_last_block_of_the_inverse(n, seed) -> None:
    rng = np.random.default_rng(seed)
    Ad, Ao, dense = block_tridiagonal(rng, n)
    Yinv, Y, K, work = (np.zeros((C, C)) for _ in range(4))
    last_pivot_inverse(Ad.copy(), Ao.copy(), Yinv, Y, K, work)
    expect_close(Yinv, np.linalg.inv(dense)[-C:, -C:], np.linalg.cond(dense), "(A⁻¹)_NN")


# -- cyclic_reduction.py ----------------------------------------------------------------------


@EXAMPLES
@given(st.integers(1, 17), seeds)
def test_cyclic_reduction_solves_a_block_tridiagonal_system(n, seed) -> None:
    rng = np.random.default_rng(seed)
    Ad, Ao, dense = block_tridiagonal(rng, n)
    kappa = np.linalg.cond(dense)
    cw = cyclic_reduction_workspace(n)
    cyclic_reduction(Ad, Ao, cw)  # Ad and Ao are overwritten by the reduction
    expect_close(cw[0][n - 1], np.linalg.inv(dense)[-C:, -C:], kappa, "Dinv[N-1]")
    b = rng.standard_normal((n, C))
    x = np.zeros((n, C))
    cyclic_reduction_solve(Ao, b.copy(), x, cw)
    expect_close(x.ravel(), np.linalg.solve(dense, b.ravel()), kappa, "A⁻¹ b")


# -- linalg.py: the unrolled 5 x 5 LDLᵀ of the link-frame elimination ----------------------


@EXAMPLES
@given(conditions, seeds)
def test_unrolled_ldlt_and_its_solves(kappa, seed) -> None:
    rng = np.random.default_rng(seed)
    Z = spd(rng, C, kappa)
    z = Z[np.tril_indices(C)]  # the lower triangle row by row
    low, d = ldlt5(z)
    L = np.eye(C)
    L[np.tril_indices(C, -1)] = low
    expect_close(L @ np.diag(1.0 / np.array(d)) @ L.T, Z, kappa, "L D Lᵀ")
    b = rng.standard_normal(C)
    expect_close(lower_solve5(low, b), np.linalg.solve(L, b), kappa, "L⁻¹ b")
    expect_close(upper_solve5(low, b), np.linalg.solve(L.T, b), kappa, "L⁻ᵀ b")
    x = upper_solve5(low, np.array(d) * np.array(lower_solve5(low, b)))
    expect_close(x, np.linalg.solve(Z, b), kappa, "Z⁻¹ b")


# -- factorization.py: the branch-sparse LᵀDL of M -------------------------------------------


def ancestors(parent: list[int], k: int) -> list[int]:
    found, i = [], parent[k]
    while i >= 0:
        found.append(i)
        i = parent[i]
    return found


@EXAMPLES
@given(st.integers(1, 12), seeds)
def test_ltdl_factors_a_matrix_with_the_sparsity_of_a_tree(n, seed) -> None:
    """M = Lᵀ D L with L unit lower triangular and nonzero only where one joint is an ancestor
    of the other (a random tree, parents before children): ltdl recovers D and L, ltdl_solve
    solves M x = b, ltdl_inverse gives M⁻¹; with one pivot made negative, ltdl answers
    False."""
    rng = np.random.default_rng(seed)
    parent = np.array([-1] + [int(rng.integers(-1, k)) for k in range(1, n)])
    L_ref = np.eye(n)
    for k in range(n):
        for i in ancestors(parent, k):
            L_ref[k, i] = rng.uniform(-1.0, 1.0)
    D_ref = rng.uniform(0.5, 2.0, n)
    M = L_ref.T @ np.diag(D_ref) @ L_ref
    kappa = np.linalg.cond(M)
    LD = M.copy()
    assert ltdl(LD, parent)
    expect_close(np.diag(LD), D_ref, kappa, "D")
    expect_close(np.tril(LD, -1), np.tril(L_ref, -1), kappa, "L")
    b = rng.standard_normal(n)
    x = b.copy()
    ltdl_solve(LD, parent, x)
    expect_close(x, np.linalg.solve(M, b), kappa, "M⁻¹ b")
    end = np.array([max([k for k in range(n) if k == i or i in ancestors(parent, k)]) + 1
                    for i in range(n)])
    Minv = np.full((n, n), np.nan)
    ltdl_inverse(LD, parent, end, Minv)
    expect_close(Minv, np.linalg.inv(M), kappa, "M⁻¹")
    D_ref[rng.integers(n)] *= -1.0
    assert not ltdl(L_ref.T @ np.diag(D_ref) @ L_ref, parent)


# -- task_space.py: the 1-norm, Λ from Λ⁻¹ --------------------------------------------


@EXAMPLES
@given(st.integers(1, 8), st.integers(1, 8), seeds)
def test_norm1_is_the_largest_absolute_column_sum(rows, columns, seed) -> None:
    A = np.random.default_rng(seed).standard_normal((rows, columns))
    expect_close(norm1(A), np.linalg.norm(A, 1), 1.0, "‖A‖₁")
    A[rows // 2, columns // 2] = np.nan
    assert np.isnan(norm1(A))


@EXAMPLES
@given(conditions, seeds)
def test_invert_task_inertia_inverts_and_refuses_a_singular_one(kappa, seed) -> None:
    rng = np.random.default_rng(seed)
    Lambda_inv = spd(rng, 6, kappa)
    out = np.zeros((6, 6))
    assert invert_task_inertia(Lambda_inv.copy(), out)
    expect_close(out, np.linalg.inv(Lambda_inv), kappa, "Λ")
    J = rng.standard_normal((6, 4))  # rank 4: J Jᵀ is singular
    assert not invert_task_inertia(J @ J.T, np.zeros((6, 6)))


@EXAMPLES
@given(conditions, seeds)
def test_damped_task_inertia_is_the_inverse_where_well_conditioned(kappa, seed) -> None:
    Lambda_inv = spd(np.random.default_rng(seed), 6, kappa)
    Lambda, info = np.zeros((6, 6)), np.zeros(2)
    damped_task_inertia(Lambda_inv, 1e-7, 1e-7, Lambda, info)
    expect_close(Lambda, np.linalg.inv(Lambda_inv), kappa, "Λ")
    assert info[0] == 6
    expect_close(info[1], np.linalg.cond(Lambda_inv), kappa, "condition number")


@pytest.mark.parametrize("rank", [0, 3, 5])
def test_damped_task_inertia_damps_as_its_formula_where_rank_is_lost(rank) -> None:
    """Below the threshold every direction gets s / (s² + λ²), λ² = (damping · s_max)² (1 −
    (s_min / (threshold · s_max))²): finite, and zero along a lost direction."""
    rng = np.random.default_rng(rank)
    Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    s = np.concatenate([np.geomspace(2.0, 0.5, rank), np.zeros(6 - rank)])
    Lambda_inv = (Q * s) @ Q.T
    threshold, damping = 1e-3, 1e-2
    Lambda, info = np.zeros((6, 6)), np.zeros(2)
    damped_task_inertia(Lambda_inv, threshold, damping, Lambda, info)
    assert np.isfinite(Lambda).all()
    if rank == 0:  # Λ⁻¹ = 0: no direction has a task inertia
        expect_close(Lambda, np.zeros((6, 6)), 1.0, "Λ")
        assert info[0] == 0
        return
    values, V = np.linalg.eigh(0.5 * (Lambda_inv + Lambda_inv.T))
    s_max, s_min = values[-1], max(values[0], 0.0)
    lam2 = (damping * s_max) ** 2 * (1.0 - (s_min / (threshold * s_max)) ** 2)
    expected = (V * (np.maximum(values, 0.0) / (values**2 + lam2))) @ V.T
    expect_close(Lambda, expected, 1e3, "damped Λ")
    assert info[0] == rank
