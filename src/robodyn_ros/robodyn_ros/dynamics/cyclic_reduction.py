"""Block cyclic reduction of the block-tridiagonal constraint-force matrix 𝒜 (5 x 5 blocks,
constraint_system.py): Fijany's O(log N) route to the Schur-complement factorizations
(docs/algorithms.md), the parallel counterpart of the block LDLᵀ of schur.py.

Level l, of stride h = 2^l, keeps the blocks N−1, N−1−2h, N−1−4h, … and eliminates the ones
between them, j = N−1−h, N−1−3h, …; for a kept block i, with its eliminated neighbours i ± h,

    𝒜_ii ← 𝒜_ii − 𝒜_{i,i+h} 𝒜_{i+h}⁻¹ 𝒜_{i+h,i} − 𝒜_{i,i−h} 𝒜_{i−h}⁻¹ 𝒜_{i−h,i}
    𝒜_{i,i+2h} ← −𝒜_{i,i+h} 𝒜_{i+h}⁻¹ 𝒜_{i+h,i+2h}

and the right-hand side alike. The eliminations of one level are independent of one another,
and ⌈log₂N⌉ levels leave the last block alone: what is left of it is the Schur complement of
all the others, the last pivot Y_N of the elimination from the base. The eliminated unknowns
come back level by level in reverse, x_j = 𝒜_j⁻¹ (b_j − 𝒜_{j,j−h} x_{j−h} − 𝒜_{j,j+h} x_{j+h}).

Storage, in place: Ad[i] = 𝒜_ii and Ao[i] = 𝒜_{i,i+h} of the level at which i is eliminated
(the last block: its final pivot); Dinv[j] = that level's 𝒜_jj⁻¹ and L[j] = 𝒜_{j−h,j}.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.constraint_system import LAMBDA_SIZE, add_transposed_times, block_times
from robodyn_ros.dynamics.jit import kernel_helper, routine
from robodyn_ros.dynamics.linalg import eliminate, invert_spd

# The arrays of block cyclic reduction.
CyclicReductionWorkspace = namedtuple("CyclicReductionWorkspace", (
    "Dinv",  # (n, 5, 5) the inverses of the eliminated diagonal blocks 𝒜_j⁻¹
    "L",     # (n, 5, 5) the off-diagonal blocks eliminated, 𝒜_{i,j}
    "K",     # (5, 5) 𝒜_{i,j} 𝒜_j⁻¹
    "Z",     # (5, 5) the updated diagonal block
    "work",  # (5, 5) Gauss–Jordan's scratch
    "y",     # (n, 5) 𝒜_j⁻¹ b_j of the eliminated blocks
))


@kernel_helper
def cyclic_reduction_workspace(n):
    """A CyclicReductionWorkspace of n blocks."""
    block = (LAMBDA_SIZE, LAMBDA_SIZE)
    return CyclicReductionWorkspace(
        np.empty((n, *block)), np.empty((n, *block)), np.empty(block), np.empty(block),
        np.empty(block), np.empty((n, LAMBDA_SIZE)),
    )


@kernel_helper
def reduce_level(Ad, Ao, h, Dinv, L, K, Z, work):
    """One level of stride h (module docstring), each kept block on its own."""
    n = Ad.shape[0]
    for j in range(n - 1 - h, -1, -2 * h):
        invert_spd(Ad[j], Dinv[j], work)
    for i in range(n - 1, -1, -2 * h):
        if i + h < n:
            j = i + h
            L[j] = Ao[i]
            eliminate(Ad[i], L[j], Dinv[j], K, Z)
            Ad[i] = Z
            for r in range(LAMBDA_SIZE):  # 𝒜_{i,i+2h} = −K 𝒜_{j,j+h}, K = 𝒜_{i,j} 𝒜_j⁻¹
                for s in range(LAMBDA_SIZE):
                    t = 0.0
                    for m in range(LAMBDA_SIZE):
                        t += K[r, m] * Ao[j, m, s]
                    Ao[i, r, s] = -t
        if i - h >= 0:
            eliminate(Ad[i], Ao[i - h].T, Dinv[i - h], K, Z)
            Ad[i] = Z


@routine
def cyclic_reduction(Ad, Ao, cw):
    """Reduce 𝒜 (Ad, Ao; overwritten) level by level to its last block, Ad[N−1] = Y_N, with
    Dinv[N−1] = Y_N⁻¹; cw from cyclic_reduction_workspace."""
    Dinv, L, K, Z, work = cw.Dinv, cw.L, cw.K, cw.Z, cw.work
    n = Ad.shape[0]
    h = 1
    while h < n:
        reduce_level(Ad, Ao, h, Dinv, L, K, Z, work)
        h *= 2
    invert_spd(Ad[n - 1], Dinv[n - 1], work)


@kernel_helper
def store_times(x, i, A, b, j):
    """x[i] = A[j] b[j] (5 x 5 blocks, n x 5 vectors)."""
    Ab = block_times(A, j, b, j)
    for r in range(LAMBDA_SIZE):
        x[i, r] = Ab[r]


@routine
def cyclic_reduction_solve(Ao, b, x, cw):
    """x = 𝒜⁻¹ b with the reduction of cyclic_reduction; b (n x 5) is overwritten."""
    Dinv, L, y = cw.Dinv, cw.L, cw.y
    n = b.shape[0]
    h = 1
    while h < n:  # reduce b as 𝒜 was, y_j = 𝒜_j⁻¹ b_j of the eliminated blocks
        for j in range(n - 1 - h, -1, -2 * h):
            store_times(y, j, Dinv, b, j)
        for i in range(n - 1, -1, -2 * h):
            if i + h < n:
                Ly = block_times(L, i + h, y, i + h)
                for r in range(LAMBDA_SIZE):
                    b[i, r] -= Ly[r]
            if i - h >= 0:
                add_transposed_times(b, i, Ao, i - h, y, i - h, -1.0)
        h *= 2
    store_times(x, n - 1, Dinv, b, n - 1)
    while h > 1:  # back-substitute, the last level's eliminations first
        h //= 2
        for j in range(n - 1 - h, -1, -2 * h):
            Ax = block_times(Ao, j, x, j + h)
            for r in range(LAMBDA_SIZE):
                b[j, r] -= Ax[r]
            if j - h >= 0:
                add_transposed_times(b, j, L, j, x, j - h, -1.0)
            store_times(x, j, Dinv, b, j)
