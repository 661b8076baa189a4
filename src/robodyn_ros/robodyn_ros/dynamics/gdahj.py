"""Joint-space inertia matrix M(q) by GDAHJ (Safeea, Neto & Béarée, "Efficient calculation of
the joint space inertia matrix for high DOF robots"): O(n) recursions for d_i = D_iᵀ k_i and
y_i = b̂_i k_i, then the minimal O(n²) loop A_ij = k_jᵀ d_i + t_jᵀ y_i, t_j = k_j × p_j.

All vectors are in world axes. Generalized beyond the paper's revolute chains:
- prismatic joints: a joint is the pair (k_j, t_j) = (ω_j, −v_j) of its world motion [v_j; ω_j]
  about the world origin (for a revolute joint v_j = p_j × k_j, so t_j = k_j × p_j as in the
  paper); a prismatic joint along u_j is (0, −u_j). A prismatic joint i projects the force on
  its subtree instead of the moment: d_i = h_i × u_i, y_i = −M_i u_i (h_i the subtree's first
  moment of mass about the world origin, M_i its mass).
- trees: the sums over "links i+1 … n" of eqs. 23–28 become sums over joint i's subtree, so
  the recursions add each child's terms to its parent; A_ij ≠ 0 only for j an ancestor of i.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.moments import (
    add9,
    is_revolute,
    load3,
    load9,
    rotate_inertia,
    scale3,
    skew_product,
    store_at,
    sub3,
)
from robodyn_ros.dynamics.spatial import add3, cross, pose_at, rotate, rotate_back, vector6
from robodyn_ros.dynamics.tree import (
    POSE,
    armature,
    body_inertia,
    parent_of,
    subspace,
    subtree_ends,
)

MASS, B, D = 0, 1, 4  # columns of a subtree's terms: M_i, b_i (3), D_i (9, row-major)
TERMS = 13


# What gdahj needs besides the state.
GdahjWorkspace = namedtuple("GdahjWorkspace", (
    "end",      # (n,) one past the last body of each body's subtree (subtree_ends)
    "X_world",  # (n, POSE) each link's pose
    "S_world",  # (n, 6) each joint's motion axis
    "terms",    # (n, TERMS) each subtree's terms
    "KT",       # (6, n) a column per joint
    "DY",       # (6, n) a column per joint
))


@kernel_helper
def gdahj_workspace(tree, n):
    """A GdahjWorkspace of the tree's n bodies."""
    end = np.empty(n, dtype=np.int64)
    subtree_ends(tree, end)
    return GdahjWorkspace(end, np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, TERMS)),
                          np.empty((6, n)), np.empty((6, n)))


@kernel_helper
def gdahj(tree, q, M, workspace):
    """M(q) for one state into M (n x n); workspace from gdahj_workspace."""
    end, X_world, S_world, terms = workspace.end, workspace.X_world, workspace.S_world, \
        workspace.terms
    KT, DY = workspace.KT, workspace.DY
    forward_kinematics(tree, q, X_world, S_world)
    forward_pass(tree, X_world, S_world, terms, KT)
    backward_pass(tree, X_world, S_world, terms, DY)
    fill(M, end, KT, DY)
    for i in range(tree.shape[0]):
        M[i, i] += armature(tree, i)


@kernel_helper
def forward_pass(tree, X_world, S_world, terms, KT):
    """Each body's own terms of b_i and D_i, and (k_j, t_j) of each joint into KT."""
    for i in range(X_world.shape[0]):
        X, body = pose_at(X_world, i, 0), body_inertia(tree, i)
        m, p = body[0], X[9:12]
        c = add3(p, rotate(X, body[1:4]))  # centre of mass p_Ci
        r = sub3(c, p)  # p_Cii
        # Safeea eqs. 23, 24, 27, 28, this body's term: b = m p_Cii, D = R I Rᵀ − m p̂_Cii p̂_Ci
        terms[i, MASS] = m
        store_at(terms, i, B, scale3(m, r))
        store_at(terms, i, D, add9(rotate_inertia(X, body[4:13]), skew_product(r, c, -m)))
        S = vector6(S_world, i)
        KT[0, i], KT[1, i], KT[2, i] = S[3], S[4], S[5]
        KT[3, i], KT[4, i], KT[5, i] = -S[0], -S[1], -S[2]


@kernel_helper
def backward_pass(tree, X_world, S_world, terms, DY):
    """d_i and y_i into DY, each subtree's terms handed to the parent."""
    for i in range(X_world.shape[0] - 1, -1, -1):
        mass, b, Di = terms[i, MASS], load3(terms, i, B), load9(terms, i, D)
        p = load3(X_world, i, 9)
        h = add3(b, scale3(mass, p))  # first moment of the subtree about the world origin
        if is_revolute(subspace(tree, i)):
            k = load3(S_world, i, 3)
            d, y = rotate_back(Di, k), cross(b, k)  # Safeea eq. 31: d_i = D_iᵀ k_i, y_i = b̂_i k_i
        else:
            u = load3(S_world, i, 0)
            d, y = cross(h, u), scale3(-mass, u)
        DY[0, i], DY[1, i], DY[2, i], DY[3, i], DY[4, i], DY[5, i] = *d, *y
        parent = parent_of(tree, i)
        if parent >= 0:
            # Safeea eqs. 23, 24 (κ's −l̂ Σ m_k p̂_Ck term), 27, 28 over a subtree, l = p_i − p_λ
            link = sub3(p, load3(X_world, parent, 9))
            terms[parent, MASS] += mass
            store_at(terms, parent, B, add3(load3(terms, parent, B), add3(b, scale3(mass, link))))
            D_parent = add9(load9(terms, parent, D), add9(Di, skew_product(link, h, -1.0)))
            store_at(terms, parent, D, D_parent)


@kernel_helper
def fill(M, end, KT, DY):
    """Safeea eq. 31 / Algorithm 1: A_ij = k_jᵀ d_i + t_jᵀ y_i for j an ancestor of i (or i),
    zero off the ancestor relation. Written row by row, the upper triangle by the same formula
    as A_ji, so that every store is contiguous and every row loop vectorizes (the loops count
    from zero: a loop over range(i, n) does not vectorize in numba)."""
    n = M.shape[0]
    for i in range(n):
        d0, d1, d2, y0, y1, y2 = DY[0, i], DY[1, i], DY[2, i], DY[3, i], DY[4, i], DY[5, i]
        for j in range(i):  # j is an ancestor of i when i lies in j's subtree
            a = (
                KT[0, j] * d0 + KT[1, j] * d1 + KT[2, j] * d2
                + KT[3, j] * y0 + KT[4, j] * y1 + KT[5, j] * y2
            )
            M[i, j] = a if end[j] > i else 0.0
        k0, k1, k2, t0, t1, t2 = KT[0, i], KT[1, i], KT[2, i], KT[3, i], KT[4, i], KT[5, i]
        for s in range(end[i] - i):  # i's subtree
            j = i + s
            M[i, j] = (
                k0 * DY[0, j] + k1 * DY[1, j] + k2 * DY[2, j]
                + t0 * DY[3, j] + t1 * DY[4, j] + t2 * DY[5, j]
            )
        for s in range(n - end[i]):
            M[i, end[i] + s] = 0.0


@kernel
def mass_matrix(tree, q, M):
    """GDAHJ for a state (n,) or a batch (B, n); M is (..., n, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    MM = M.reshape((B, n, n))
    workspace = gdahj_workspace(tree, n)
    for b in range(B):
        gdahj(tree, Q[b], MM[b], workspace)


def safeea_error(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Safeea eq. 32, the error between two joint-space inertia matrices (..., n, n):
    e = Σ |A − B| / max |(A + B) / 2| over each matrix; shape (...)."""
    return np.abs(A - B).sum(axis=(-2, -1)) / np.abs((A + B) / 2).max(axis=(-2, -1))
