"""Sparse LᵀDL factorization of the joint-space inertia matrix, M = Lᵀ D L with L unit lower
triangular, and the solves it gives. M[i, j] = 0 unless one joint is an ancestor of the
other, so the factor has no fill-in and every loop runs along paths to the root only.
Featherstone, RBDA §6.5, Table 6.3 (LTDL, mpyLi, mpyLit).
"""

from robodyn_ros.dynamics.inertia_matrix import crba
from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.tree import parent_of


@kernel_helper
def ltdl(M, tree):
    """Factor M in place: D on the diagonal, L's strictly lower part below it."""
    for k in range(M.shape[0] - 1, -1, -1):
        i = parent_of(tree, k)
        while i >= 0:
            a = M[k, i] / M[k, k]
            j = i
            while j >= 0:
                M[i, j] -= a * M[k, j]
                j = parent_of(tree, j)
            M[k, i] = a
            i = parent_of(tree, i)


@kernel_helper
def ltdl_solve(LD, tree, x):
    """Solve Lᵀ D L x = b in place (x holds b on entry): x ← L⁻¹ D⁻¹ L⁻ᵀ b."""
    n = x.shape[0]
    for i in range(n - 1, -1, -1):  # Lᵀ y = b, from the leaves to the root
        j = parent_of(tree, i)
        while j >= 0:
            x[j] -= LD[i, j] * x[i]
            j = parent_of(tree, j)
    for i in range(n):  # D z = y
        x[i] /= LD[i, i]
    for i in range(n):  # L x = z, from the root to the leaves
        j = parent_of(tree, i)
        while j >= 0:
            x[i] -= LD[i, j] * x[j]
            j = parent_of(tree, j)


@kernel_helper
def factor_mass_matrix(tree, q, LD, workspace):
    """M(q) by CRBA, factored in place into LD; workspace from crba_workspace."""
    crba(tree, q, LD, workspace)
    ltdl(LD, tree)

