"""The articulated pivots D_i = S_iᵀ I^A_i S_i + armature_i of ABA's backward pass
(Featherstone, RBDA Table 7.1): the inertia joint i moves, its subtree articulated through the
joints below it, and its rotor's.

They are the pivots of M(q)'s LᵀDL factorization taken from the leaves, so M(q) is singular
exactly where one of them vanishes, and the joints whose pivot vanished are the ones to name:
a joint that moves no mass, or joints that turn about one axis with nothing between them.
"""

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.jit import kernel
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import (
    dot6,
    inertia_to_world,
    matrix_times,
    pose_at,
    store_inertia_matrix,
    vector6,
)
from robodyn_ros.dynamics.tree import POSE, armature, body_inertia, parent_of


@kernel
def articulated_pivots(tree: PackedTree, Q: FloatArray, floor: FloatArray,
                       D: FloatArray) -> None:
    """D (B, n), the pivots at the states Q (B, n), world frame about the world origin.

    A pivot at or below floor[b] counts as zero: its subtree passes its inertia on whole
    (U_i = I^A_i S_i vanishes with D_i, I^A_i being positive semi-definite), so one singular
    joint leaves the pivots of the others exact.
    """
    B, n = Q.shape[0], tree.shape[0]
    X_world, S_world, IA = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6, 6))
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        for i in range(n):
            store_inertia_matrix(
                IA, i, inertia_to_world(pose_at(X_world, i, 0), body_inertia(tree, i))
            )
        for i in range(n - 1, -1, -1):
            S = vector6(S_world, i)
            U_i = matrix_times(IA, i, S)
            D[b, i] = dot6(S, U_i) + armature(tree, i)  # the rotor's inertia, on M's diagonal
            parent = parent_of(tree, i)
            if parent >= 0:
                inverse = 1.0 / D[b, i] if D[b, i] > floor[b] else 0.0
                for r in range(6):
                    U_D = U_i[r] * inverse
                    for k in range(6):
                        IA[parent, r, k] += IA[i, r, k] - U_D * U_i[k]
