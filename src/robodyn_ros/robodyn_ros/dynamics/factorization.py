"""Sparse LᵀDL factorization of the joint-space inertia matrix, M = Lᵀ D L with L unit lower
triangular, and the solves it gives. M[i, j] = 0 unless one joint is an ancestor of the
other, so the factor has no fill-in and every loop runs along paths to the root only.
Featherstone, RBDA §6.5, Table 6.3 (LTDL, mpyLi, mpyLit).
"""

import numpy as np

from robodyn_ros.dynamics.inertia_matrix import crba
from robodyn_ros.dynamics.jit import kernel_helper


@kernel_helper
def ltdl(M, parent):
    """Factor M in place, parent from parent_indices: D on the diagonal, L's strictly lower
    part below it; False (M left part factored) at a pivot that is not positive: M is not
    positive definite."""
    for k in range(M.shape[0] - 1, -1, -1):
        if not M[k, k] > 0.0:
            return False
        i = parent[k]
        while i >= 0:
            a = M[k, i] / M[k, k]
            j = i
            while j >= 0:
                M[i, j] -= a * M[k, j]
                j = parent[j]
            M[k, i] = a
            i = parent[i]
    return True


@kernel_helper
def ltdl_solve(LD, parent, x):
    """Solve Lᵀ D L x = b in place (x holds b on entry): x ← L⁻¹ D⁻¹ L⁻ᵀ b."""
    n = x.shape[0]
    for i in range(n - 1, -1, -1):  # Lᵀ y = b, from the leaves to the root
        j = parent[i]
        while j >= 0:
            x[j] -= LD[i, j] * x[i]
            j = parent[j]
    for i in range(n):  # D z = y
        x[i] /= LD[i, i]
    for i in range(n):  # L x = z, from the root to the leaves
        j = parent[i]
        while j >= 0:
            x[i] -= LD[i, j] * x[j]
            j = parent[j]


@kernel_helper
def ltdl_inverse(LD, parent, end, Minv):
    """Minv = (Lᵀ D L)⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ I, row by row, each step an axpy along memory; `end`
    from subtree_ends. Solving Lᵀ Y = I from the leaves, row i of Y is nonzero only in the
    columns of i's subtree, i .. end[i] − 1, so that sweep and D's run over those alone."""
    n = LD.shape[0]
    Minv[:, :] = 0.0
    for i in range(n):
        Minv[i, i] = 1.0
    for i in range(n - 1, -1, -1):  # Lᵀ Y = I, from the leaves to the root
        j = parent[i]
        while j >= 0:
            a = LD[i, j]
            for c in range(i, end[i]):
                Minv[j, c] -= a * Minv[i, c]
            j = parent[j]
    for i in range(n):  # D Z = Y
        d = 1.0 / LD[i, i]
        for c in range(i, end[i]):
            Minv[i, c] *= d
    for i in range(n):  # L X = Z, from the root to the leaves
        j = parent[i]
        while j >= 0:
            a = LD[i, j]
            for c in range(n):
                Minv[i, c] -= a * Minv[j, c]
            j = parent[j]


@kernel_helper
def factor_mass_matrix(tree, parent, q, LD, workspace):
    """M(q) by CRBA, factored in place into LD; parent from parent_indices, workspace from
    crba_workspace. NaN where M is not positive definite, so that every solve with it is
    NaN."""
    crba(tree, q, LD, workspace)
    if not ltdl(LD, parent):
        LD[:, :] = np.nan

