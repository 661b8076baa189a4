"""Small dense solvers: the Cholesky factor of a symmetric positive-definite matrix (M, Λ⁻¹ of
the rollout) with its substitutions and the trace of its inverse; the Cholesky and LDLᵀ
factors of the constraint-force pivots (5 x 5) and their triangular solves; a Gauss–Jordan
inverse of a small symmetric positive-definite matrix; the block elimination step
Z = A − B Z⁻¹ Bᵀ; workspaces carved from one block (carved); index ranges numba need not
wrap (unsigned_range); and whether an array is finite, without an array of flags (all_finite).
"""

import math

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray
from robodyn_ros.dynamics.jit import kernel_helper

LAMBDA_SIZE = 5  # the blocks of a one-degree-of-freedom joint's constraint forces


@kernel_helper
def carved(block: FloatArray, start: int, shape: tuple[int, ...]) -> tuple[FloatArray, int]:
    """(view, end): the C-contiguous view of block[start:] (1-D) shaped `shape`, and where the
    next view starts. A workspace made of views of one block is one allocation: a kernel
    called for one state at a time pays for each array it allocates."""
    size = 1
    for extent in shape:
        size *= extent
    return block[start:start + size].reshape(shape), start + size


@kernel_helper
def unsigned_range(start, stop):
    """range(start, stop) of unsigned indices, for a loop over a row from `start` >= 0. An
    index that might be negative is wrapped by numba (a select on every access), and that
    kept LLVM from vectorising such a loop; an unsigned one is not."""
    return range(np.uint64(start), np.uint64(stop))

@kernel_helper
def invert_spd(A, out, work):
    """out = A⁻¹ for a small symmetric positive-definite A, by Gauss–Jordan without pivoting;
    False (out undefined) when a pivot is not positive: A is not positive definite."""
    m = A.shape[0]
    work[:, :] = A
    out[:, :] = 0.0
    for p in range(m):
        out[p, p] = 1.0
    for p in range(m):
        if not work[p, p] > 0.0:
            return False
        d = 1.0 / work[p, p]
        for s in range(m):
            work[p, s] *= d
            out[p, s] *= d
        for r in range(m):
            e = work[r, p]
            if r != p and e != 0.0:
                for s in range(m):
                    work[r, s] -= e * work[p, s]
                    out[r, s] -= e * out[p, s]
    return True


@kernel_helper
def eliminate(A, B, Zinv, K, Z):
    """Z = A − B Zinv Bᵀ, one step of a block elimination (5 x 5 blocks; K = B Zinv)."""
    for r in range(LAMBDA_SIZE):
        for s in range(LAMBDA_SIZE):
            t = 0.0
            for m in range(LAMBDA_SIZE):
                t += B[r, m] * Zinv[m, s]
            K[r, s] = t
    for r in range(LAMBDA_SIZE):
        for s in range(LAMBDA_SIZE):
            t = A[r, s]
            for m in range(LAMBDA_SIZE):
                t -= K[r, m] * B[s, m]
            Z[r, s] = t


@kernel_helper
def pivot_factor(Z, L):
    """L (5 x 5) = the lower Cholesky factor of a pivot Z = L Lᵀ (symmetric positive definite,
    its lower triangle read; L may be Z), with 1 / L_aa on its diagonal: the form in which the
    block LDLᵀ keeps its pivots."""
    for a in range(LAMBDA_SIZE):
        for b in range(a + 1):
            t = Z[a, b]
            for c in range(b):
                t -= L[a, c] * L[b, c]
            L[a, b] = 1.0 / np.sqrt(t) if a == b else t * L[b, b]


@kernel_helper
def lower_solve(L, v, j):
    """v[j] ← L⁻¹ v[j] (forward substitution), L from pivot_factor, v (m x 5)."""
    for a in range(LAMBDA_SIZE):
        t = v[j, a]
        for c in range(a):
            t -= L[a, c] * v[j, c]
        v[j, a] = t * L[a, a]


@kernel_helper
def upper_solve(L, v, j):
    """v[j] ← L⁻ᵀ v[j] (back substitution), L from pivot_factor, v (m x 5)."""
    for a in range(LAMBDA_SIZE - 1, -1, -1):
        t = v[j, a]
        for c in range(a + 1, LAMBDA_SIZE):
            t -= L[c, a] * v[j, c]
        v[j, a] = t * L[a, a]


@kernel_helper
def downdate(A, L, E, out):
    """out = A − E Z⁻¹ Eᵀ (m x m, symmetric: its lower triangle; out may be A) for the pivot
    Z = L Lᵀ (pivot_factor) and E (m x 5), which becomes E L⁻ᵀ: the update of the blocks that
    meet an eliminated one."""
    m = E.shape[0]
    for r in range(m):
        lower_solve(L, E, r)
    for r in range(m):
        for s in range(r + 1):
            t = A[r, s]
            for c in range(LAMBDA_SIZE):
                t -= E[r, c] * E[s, c]
            out[r, s] = t


@kernel_helper
def ldlt5(z):
    """(low, d): Z = L D Lᵀ for the lower triangle z of a 5 x 5 Z (pivot), L unit lower
    triangular, low its strict lower triangle row by row (10), d = 1 / diag D (5)."""
    d0 = 1.0 / z[0]
    l10, l20, l30, l40 = z[1] * d0, z[3] * d0, z[6] * d0, z[10] * d0
    d1 = 1.0 / (z[2] - z[1] * l10)
    y21, y31, y41 = z[4] - z[3] * l10, z[7] - z[6] * l10, z[11] - z[10] * l10
    l21, l31, l41 = y21 * d1, y31 * d1, y41 * d1
    d2 = 1.0 / (z[5] - z[3] * l20 - y21 * l21)
    y32 = z[8] - z[6] * l20 - y31 * l21
    y42 = z[12] - z[10] * l20 - y41 * l21
    l32, l42 = y32 * d2, y42 * d2
    d3 = 1.0 / (z[9] - z[6] * l30 - y31 * l31 - y32 * l32)
    y43 = z[13] - z[10] * l30 - y41 * l31 - y42 * l32
    l43 = y43 * d3
    d4 = 1.0 / (z[14] - z[10] * l40 - y41 * l41 - y42 * l42 - y43 * l43)
    return (l10, l20, l21, l30, l31, l32, l40, l41, l42, l43), (d0, d1, d2, d3, d4)


@kernel_helper
def lower_solve5(low, b):
    """L⁻¹ b for L of ldlt5."""
    e1 = b[1] - low[0] * b[0]
    e2 = b[2] - low[1] * b[0] - low[2] * e1
    e3 = b[3] - low[3] * b[0] - low[4] * e1 - low[5] * e2
    e4 = b[4] - low[6] * b[0] - low[7] * e1 - low[8] * e2 - low[9] * e3
    return b[0], e1, e2, e3, e4


@kernel_helper
def upper_solve5(low, t):
    """L⁻ᵀ t for L of ldlt5."""
    x3 = t[3] - low[9] * t[4]
    x2 = t[2] - low[5] * x3 - low[8] * t[4]
    x1 = t[1] - low[2] * x2 - low[4] * x3 - low[7] * t[4]
    x0 = t[0] - low[0] * x1 - low[1] * x2 - low[3] * x3 - low[6] * t[4]
    return x0, x1, x2, x3, t[4]


@kernel_helper
def all_finite(a: FloatArray) -> bool:
    """Whether every entry of `a` is finite: x − x is 0 for a finite x and NaN for ±inf or
    NaN, and a sum that takes a NaN stays NaN (the kernels' fastmath flags keep NaN)."""
    total = 0.0
    for x in a.flat:
        total += x - x
    return total == 0.0


@kernel_helper
def copy_vector(source: FloatArray, out: FloatArray) -> None:
    """out[i] = source[i] for every i, element by element: an array assigned whole to another
    wants numba's reference counting (it may copy the source first), which a borrowing routine
    (jit.borrowing_routine) is built without."""
    for i in range(out.shape[0]):
        out[i] = source[i]


@kernel_helper
def cholesky(A: FloatArray, shift: float, L: FloatArray) -> bool:
    """A − shift·1 = L Lᵀ into the lower triangle of L, with 1 / L_jj on its diagonal (one
    division a column); False where it is not positive definite."""
    m = A.shape[0]
    for j in range(m):
        d = A[j, j] - shift
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return False
        inverse = 1.0 / math.sqrt(d)
        L[j, j] = inverse
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s * inverse
    return True


@kernel_helper
def cholesky_solve(L: FloatArray, x: FloatArray) -> None:
    """x ← (L Lᵀ)⁻¹ x in place, L from cholesky."""
    columns = x[:, np.newaxis]
    forward_substitute(L, columns)
    back_substitute(L, columns)


@kernel_helper
def forward_substitute(L: FloatArray, X: FloatArray) -> None:
    """X ← L⁻¹ X in place for X (m x k), L from cholesky."""
    m, k = X.shape
    for i in range(m):
        for j in range(i):
            for c in range(k):
                X[i, c] -= L[i, j] * X[j, c]
        for c in range(k):
            X[i, c] *= L[i, i]


@kernel_helper
def back_substitute(L: FloatArray, X: FloatArray) -> None:
    """X ← L⁻ᵀ X in place for X (m x k), L from cholesky."""
    m, k = X.shape
    for i in range(m - 1, -1, -1):
        for j in range(i + 1, m):
            for c in range(k):
                X[i, c] -= L[j, i] * X[j, c]
        for c in range(k):
            X[i, c] *= L[i, i]


@kernel_helper
def lower_inverse(L, L_inv):
    """L⁻¹ into the lower triangle of L_inv, L from cholesky."""
    m = L.shape[0]
    for j in range(m):
        for i in range(j, m):
            s = 1.0 if i == j else 0.0
            for k in range(j, i):
                s -= L[i, k] * L_inv[k, j]
            L_inv[i, j] = s * L[i, i]


@kernel_helper
def inverse_trace(L: FloatArray, L_inv: FloatArray) -> float:
    """trace((L Lᵀ)⁻¹) = ‖L⁻¹‖²_F, L from cholesky; L⁻¹ into the lower triangle of L_inv."""
    lower_inverse(L, L_inv)
    total = 0.0
    for j in range(L.shape[0]):
        for i in range(j, L.shape[0]):
            total += L_inv[i, j] * L_inv[i, j]
    return total


@kernel_helper
def cholesky_inverse(L, L_inv, A_inv):
    """A⁻¹ = L⁻ᵀ L⁻¹ (m x m, both triangles) for A = L Lᵀ, L from cholesky; L⁻¹ into the lower
    triangle of L_inv."""
    lower_inverse(L, L_inv)
    m = L.shape[0]
    for i in range(m):
        for j in range(i + 1):
            s = 0.0
            for k in range(i, m):
                s += L_inv[k, i] * L_inv[k, j]
            A_inv[i, j] = A_inv[j, i] = s
