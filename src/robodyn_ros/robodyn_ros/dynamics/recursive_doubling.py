"""Joint-space inertia matrix M(q) of a serial chain by recursive doubling in ⌈log₂N⌉ levels
(Amin-Javaheri & Orin, "Parallel algorithms for computation of the manipulator inertia matrix",
Table 2).

At level l (width w = 2^l) the links form blocks {i .. i+w−1}. Stage A: every link a in the
first half of a block has the composite (mass, centre of mass, inertia about it, in body a's
frame) of the set {a .. j−1}, j the start of the second half, and the pose of body j in body a;
it combines them with the second half's composite {j .. k}: afterwards it holds {a .. k}, and
after the last level {a .. N}. The diagonal follows from these composites. Stage B: the force
F_x that accelerates {x .. N} along joint x is known at the start j of x's half-block; every
link a of the first half gets M[a, x] = S_aᵀ (ᵃX*ⱼ F_x) from the same level's pose, and F_x
moves on to the block's start. Within a level every combination (stage A) and every pair
(a, x) (stage B) is independent of the others: each level is one loop over independent items,
the unit of work a parallel machine would spread over its processors.
"""

import math
from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.moments import add9, load9, rotate_inertia, scale3, skew_product
from robodyn_ros.dynamics.spatial import (
    add3,
    body_inertia_times,
    compose,
    dot6,
    force_to_parent,
    joint_pose,
    motion_to_child,
    pose_at,
    rotate,
    store,
)
from robodyn_ros.dynamics.tree import (
    BODY_SIZE,
    PLACEMENT,
    POSE,
    armature,
    configuration_index,
    frame_axis,
    is_chain,
    subspace,
)
from robodyn_ros.dynamics.tree import INERTIA as BODY

IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
COMPOSITE = BODY_SIZE  # mass, centre of mass (3), inertia about it (9): a body's layout


def level_count(n: int) -> int:
    """⌈log₂ n⌉, the levels of recursive doubling over n links (0 for a single link)."""
    return math.ceil(math.log2(n)) if n > 1 else 0


CHAIN_ONLY = (
    "mass_matrix: method 'recursive_doubling' needs a serial chain (the parent of joint i is "
    "joint i-1): it combines contiguous link sets {i .. k}; this robot is a tree, use 'gdahj' "
    "or 'crba'"
)


# What recursive_doubling needs besides the state.
DoublingWorkspace = namedtuple("DoublingWorkspace", (
    "levels",  # ⌈log₂ n⌉, the levels of the doubling
    "Y",       # (levels + 1, n, POSE) the pose of each set's next body at every level
    "C",       # (n, COMPOSITE) the composites
    "SP",      # (6, n) the joint motions
    "F",       # (6, n) the joint forces
))


@kernel_helper
def doubling_workspace(n):
    """A DoublingWorkspace of n links."""
    levels = 0
    while (1 << levels) < n:
        levels += 1
    return DoublingWorkspace(
        levels, np.empty((levels + 1, n, POSE)), np.empty((n, COMPOSITE)),
        np.empty((6, n)), np.empty((6, n)),
    )


@kernel_helper
def composite_at(C, i):
    """The composite in row i: mass, centre of mass (3), inertia about it (9)."""
    return (C[i, 0], C[i, 1], C[i, 2], C[i, 3], *load9(C, i, 4))


@kernel_helper
def combine(first, X, second):
    """Amin-Javaheri & Orin Table 2, stage A: the composite of two link sets, the second's
    (mass, centre of mass, inertia about it) given in its own frame at pose X in the first's."""
    m1, c1, m2 = first[0], first[1:4], second[0]
    c2 = add3(X[9:12], rotate(X, second[1:4]))
    mass = m1 + m2
    c = scale3(1.0 / mass, add3(scale3(m1, c1), scale3(m2, c2))) if mass > 0.0 else c1
    d1 = (c1[0] - c[0], c1[1] - c[1], c1[2] - c[2])
    d2 = (c2[0] - c[0], c2[1] - c[1], c2[2] - c[2])
    E = add9(first[4:13], rotate_inertia(X, second[4:13]))
    E = add9(E, add9(skew_product(d1, d1, -m1), skew_product(d2, d2, -m2)))
    return (mass, *c, *E)


@kernel_helper
def stage_a(tree, q, Y, C, levels):
    """Level 0: each link alone and the pose of the next body; then the levels of doubling."""
    n = tree.shape[0]
    for a in range(n):
        store(C, a, tree[a, BODY : BODY + COMPOSITE])
        if a + 1 < n:
            X = joint_pose(pose_at(tree, a + 1, PLACEMENT), subspace(tree, a + 1),
                           frame_axis(tree, a + 1), q, configuration_index(tree, a + 1))
            store(Y[0], a, X)
        else:
            store(Y[0], a, IDENTITY)
    for level in range(1, levels + 1):
        half, w = 1 << (level - 1), 1 << level
        Y[level, :, :] = Y[level - 1]
        for i in range(0, n - half, w):  # blocks with a second half
            j = i + half
            second = composite_at(C, j)
            for a in range(i, j):
                X = pose_at(Y[level - 1], a, 0)
                store(C, a, combine(composite_at(C, a), X, second))
                store(Y[level], a, compose(X, pose_at(Y[level - 1], j, 0)))


@kernel_helper
def stage_b(tree, Y, SP, F, M, levels):
    """The off-diagonal elements, level by level, F (6 x n) holding F_x at x's block start.

    M[a, x] = S_aᵀ ᵃX*ⱼ F_x = (ʲXₐ S_a)ᵀ F_x: the joint motion moves into body j's frame
    once per link and level (SP), instead of every column's force once per link."""
    n = M.shape[0]
    for level in range(1, levels + 1):
        half, w = 1 << (level - 1), 1 << level
        for i in range(0, n - half, w):
            j, k = i + half, min(i + w, n)
            for a in range(i, j):
                S = motion_to_child(pose_at(Y[level - 1], a, 0), subspace(tree, a))
                for r in range(6):
                    SP[r, a] = S[r]
            for a in range(i, j):  # row a, columns j .. k − 1
                s0, s1, s2, s3, s4, s5 = SP[0, a], SP[1, a], SP[2, a], SP[3, a], SP[4, a], SP[5, a]
                for t in range(k - j):
                    x = j + t
                    M[a, x] = (
                        s0 * F[0, x] + s1 * F[1, x] + s2 * F[2, x]
                        + s3 * F[3, x] + s4 * F[4, x] + s5 * F[5, x]
                    )
            for x in range(j, k):  # row x, columns i .. j − 1
                f0, f1, f2, f3, f4, f5 = F[0, x], F[1, x], F[2, x], F[3, x], F[4, x], F[5, x]
                for t in range(half):
                    a = i + t
                    M[x, a] = (
                        f0 * SP[0, a] + f1 * SP[1, a] + f2 * SP[2, a]
                        + f3 * SP[3, a] + f4 * SP[4, a] + f5 * SP[5, a]
                    )
            X = pose_at(Y[level - 1], i, 0)  # body j in body i: F_x moves to the new block start
            for x in range(j, k):
                f = force_to_parent(X, (F[0, x], F[1, x], F[2, x], F[3, x], F[4, x], F[5, x]))
                for r in range(6):
                    F[r, x] = f[r]


@kernel_helper
def recursive_doubling(tree, q, M, workspace):
    """M(q) for one state into M (n x n); workspace from doubling_workspace."""
    levels, Y, C, SP, F = workspace.levels, workspace.Y, workspace.C, workspace.SP, workspace.F
    stage_a(tree, q, Y, C, levels)
    for x in range(tree.shape[0]):  # Table 2, BEGIN14: the diagonal (+ armature), stage B's forces
        S = subspace(tree, x)
        f = body_inertia_times(composite_at(C, x), S)
        M[x, x] = dot6(S, f) + armature(tree, x)
        for r in range(6):
            F[r, x] = f[r]
    stage_b(tree, Y, SP, F, M, levels)


@kernel
def mass_matrix(tree, q, M):
    """Recursive doubling for a state (n,) or a batch (B, n); M is (..., n, n). Returns the
    number of levels it ran, ⌈log₂ n⌉. ValueError for a tree."""
    if not is_chain(tree):
        raise ValueError(CHAIN_ONLY)
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    MM = M.reshape((B, n, n))
    workspace = doubling_workspace(n)
    for b in range(B):
        recursive_doubling(tree, Q[b], MM[b], workspace)
    return workspace.levels
