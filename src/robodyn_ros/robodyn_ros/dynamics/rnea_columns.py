"""Joint-space inertia matrix M(q) column by column from inverse dynamics: column j is RNEA's τ
for q̇ = 0, no gravity and q̈ = e_j, n inverse-dynamics calls in all (Walker & Orin, "Efficient
dynamic computer simulation of robotic mechanisms", 1982, method 1). The O(n²) baseline with
RNEA's large constant; M is symmetric, so column j is stored as row j.
"""

import numpy as np

from robodyn_ros.dynamics.inverse_dynamics import rnea, rnea_workspace
from robodyn_ros.dynamics.jit import kernel


@kernel
def mass_matrix(tree, q, M):
    """M(q) by n RNEA calls, for a state (n,) or a batch (B, n); M is (..., n, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    MM = M.reshape((B, n, n))
    workspace = rnea_workspace(n)
    no_gravity, zero, unit = np.zeros(3), np.zeros(n), np.zeros(n)
    for b in range(B):
        for j in range(n):
            unit[j] = 1.0
            rnea(tree, no_gravity, Q[b], zero, unit, None, MM[b, j], workspace)
            unit[j] = 0.0
