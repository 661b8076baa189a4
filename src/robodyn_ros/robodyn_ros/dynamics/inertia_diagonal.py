"""The diagonal of the joint-space inertia matrix, diag M(q), in O(n) by the composite first
and second moments of mass (Fijany & Scheid, "Efficient conjugate gradient algorithms for
computation of the manipulator forward dynamics", eqs. 64–67), the preconditioner of PCG-DS.

M_i, H_i and K_i are the mass and the first and second moments of mass of joint i's subtree
(the paper's composite system i) about the joint's origin O_i, all projected in one fixed frame:
world axes here, the end-effector frame in the paper; any fixed frame gives the same numbers.
Trees: a joint's composite gathers all its children's. Prismatic joints: a unit acceleration
along u moves the composite as a whole, so a_ii = M_i.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
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
from robodyn_ros.dynamics.spatial import add3, dot3, pose_at, rotate
from robodyn_ros.dynamics.tree import POSE, armature, body_inertia, parent_of, subspace

MASS, H, K = 0, 1, 4  # columns of a composite: M_i, H_i (3), K_i (9, row-major)
MOMENTS = 13


# What inertia_diagonal needs besides the state.
DiagonalWorkspace = namedtuple("DiagonalWorkspace", (
    "X_world",  # (n, POSE) each link's pose
    "S_world",  # (n, 6) each joint's motion axis
    "moments",  # (n, MOMENTS) each subtree's composite: M_i, H_i, K_i
))


@kernel_helper
def diagonal_workspace(n):
    """A DiagonalWorkspace of n links."""
    return DiagonalWorkspace(np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, MOMENTS)))


@kernel_helper
def inertia_diagonal(tree, q, diag, workspace):
    """diag M(q) for one state into diag (n), armature included; workspace from
    diagonal_workspace."""
    X_world, S_world, moments = workspace.X_world, workspace.S_world, workspace.moments
    n = tree.shape[0]
    forward_kinematics(tree, q, X_world, S_world)
    # forward pass: each body's own moments about its joint's origin, h_i = m_i r_i and
    # k_i = R I_c Rᵀ − m_i r̂_i r̂_i, r_i the centre of mass from O_i
    for i in range(n):
        X, body = pose_at(X_world, i, 0), body_inertia(tree, i)
        r = rotate(X, body[1:4])
        moments[i, MASS] = body[0]
        store_at(moments, i, H, scale3(body[0], r))
        store_at(moments, i, K, add9(rotate_inertia(X, body[4:13]), skew_product(r, r, -body[0])))
    # backward pass: a_ii from the composite, which then moves to the parent's origin,
    # p = O_i − O_λ
    for i in range(n - 1, -1, -1):
        mass, Hi, Ki = moments[i, MASS], load3(moments, i, H), load9(moments, i, K)
        if is_revolute(subspace(tree, i)):
            z = load3(S_world, i, 3)
            diag[i] = dot3(z, rotate(Ki, z))  # Fijany & Scheid eq. 67: a_ii = z_iᵀ K_i z_i
        else:
            diag[i] = mass
        diag[i] += armature(tree, i)
        parent = parent_of(tree, i)
        if parent >= 0:
            p = sub3(load3(X_world, i, 9), load3(X_world, parent, 9))
            # Fijany & Scheid eqs. 64–66: M += M_i, H += H_i + M_i p,
            # K += K_i − M_i p̂ p̂ − Ĥ_i p̂ − p̂ Ĥ_i
            moments[parent, MASS] += mass
            store_at(moments, parent, H, add3(load3(moments, parent, H), add3(Hi, scale3(mass, p))))
            shift = add9(skew_product(p, p, -mass),
                         add9(skew_product(Hi, p, -1.0), skew_product(p, Hi, -1.0)))
            store_at(moments, parent, K, add9(load9(moments, parent, K), add9(Ki, shift)))


@kernel
def mass_matrix_diagonal(tree: PackedTree, q: FloatArray, diag: FloatArray) -> None:
    """diag M(q) for a state (n,) or a batch (B, n); diag like q."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    OUT = diag.reshape((B, n))
    workspace = diagonal_workspace(n)
    for b in range(B):
        inertia_diagonal(tree, Q[b], OUT[b], workspace)
