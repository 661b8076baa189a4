"""Joint-space inertia matrix M(q) by the composite-rigid-body algorithm (CRBA), in world
coordinates so that composite inertias add without transforms. Featherstone, RBDA, Table 6.2.
"""

import numpy as np

from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import dot6, inertia_to_world, matvec6
from robodyn_ros.dynamics.tree import INERTIA, POSE, WIDTH, parent_of


@kernel_helper
def crba(tree, q, M, X_world, S_world, Ic):
    """M(q) for one state, written into M (n x n); X_world, S_world, Ic (n x 6 x 6) workspaces."""
    n = q.shape[0]
    forward_kinematics(tree, q, X_world, S_world)
    for i in range(n):
        inertia_to_world(X_world[i], tree[i, INERTIA:WIDTH], Ic[i])
    F = np.empty(6)
    M[:, :] = 0.0  # entries of joints on different branches stay zero
    # backward pass: composite inertia of each subtree; column i is the force it needs to
    # accelerate along joint i, seen by each joint on the path to the root
    for i in range(n - 1, -1, -1):
        lam = parent_of(tree, i)
        if lam >= 0:
            for r in range(6):
                for k in range(6):
                    Ic[lam, r, k] += Ic[i, r, k]
        matvec6(Ic[i], S_world[i], F)
        j = i
        while j >= 0:
            M[i, j] = M[j, i] = dot6(S_world[j], F)
            j = parent_of(tree, j)


@kernel
def mass_matrix(tree, q, M):
    """CRBA for a state (n,) or a batch (B, n); M is (..., n, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape
    MM = M.reshape((B, n, n))
    X_world, S_world, Ic = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6, 6))
    for b in range(B):
        crba(tree, Q[b], MM[b], X_world, S_world, Ic)
