"""Joint-space inertia matrix M(q) by the composite-rigid-body algorithm (CRBA), in world
coordinates so that composite inertias add without transforms. Featherstone, RBDA, Table 6.2.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, IntArray, PackedTree
from robodyn_ros.dynamics.fixed_frame import world_inertias
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import dot6, inertia_at, inertia_times, store, vector6
from robodyn_ros.dynamics.tree import POSE, armature, parent_of, subtree_ends

INERTIA_SIZE = 10  # a rigid-body inertia (M, h, I_O), see spatial.py


# RBDA Table 6.2: I^c_λ(i) += I^c_i, F_i = I^c_i S_i, M_ij = S_iᵀ F_j for j in the subtree of i
CrbaWorkspace = namedtuple("CrbaWorkspace", "subtree_end X_world S_world Ic F")
CrbaWorkspace.__doc__ = """What crba needs besides the state: subtree_end from subtree_ends, the
world poses X_world (n x 12), motion subspaces S_world, composite inertias Ic (n x 10) and F."""


@kernel_helper
def crba_workspace(tree: PackedTree, n: int) -> CrbaWorkspace:
    """A CrbaWorkspace for the tree's n bodies."""
    subtree_end = np.empty(n, dtype=np.int64)
    subtree_ends(tree, subtree_end)
    return CrbaWorkspace(subtree_end=subtree_end, X_world=np.empty((n, POSE)),
                         S_world=np.empty((n, 6)), Ic=np.empty((n, INERTIA_SIZE)),
                         F=np.empty((n, 6)))


@kernel_helper
def crba(tree, q, M, workspace):
    """M(q) for one state, written into M (n x n); workspace from crba_workspace."""
    end, X_world, S_world = workspace.subtree_end, workspace.X_world, workspace.S_world
    Ic, F = workspace.Ic, workspace.F
    forward_kinematics(tree, q, X_world, S_world)
    world_inertias(tree, X_world, Ic)
    composite_inertia_matrix(tree, S_world, end, Ic, F, M)


@kernel_helper
def composite_forces(tree, S_world, Ic, F):
    """Backward pass: the bodies' world inertias Ic (n x 10) become the composite inertias of
    their subtrees, and F_i = Ic_i S_i (n x 6) the momentum [linear; angular about the world
    origin] each subtree has per unit velocity of its joint (RBDA Table 6.2)."""
    for i in range(Ic.shape[0] - 1, -1, -1):
        parent = parent_of(tree, i)
        if parent >= 0:
            for k in range(INERTIA_SIZE):
                Ic[parent, k] += Ic[i, k]
        store(F, i, inertia_times(inertia_at(Ic, i), vector6(S_world, i)))


@kernel_helper
def composite_inertia_matrix(tree: PackedTree, S_world: FloatArray, end: IntArray,
                             Ic: FloatArray, F: FloatArray, M: FloatArray) -> None:
    """M (n x n) from the world motion subspaces S_world and the bodies' world inertias Ic
    (n x 10), which become the composite inertias of their subtrees, the joints' armature on
    its diagonal; F (n x 6) a workspace."""
    n = M.shape[0]
    composite_forces(tree, S_world, Ic, F)
    # M[i, j] = Sᵢᵀ Fⱼ for j in the subtree of i, which is the index range i .. end[i] − 1;
    # entries of joints on different branches are zero
    M[:, :] = 0.0
    for i in range(n):
        S = vector6(S_world, i)
        for j in range(i, end[i]):
            M[i, j] = M[j, i] = dot6(S, vector6(F, j))
    for i in range(n):
        M[i, i] += armature(tree, i)


@kernel
def mass_matrix(tree, q, M):
    """CRBA for a state (n,) or a batch (B, n); M is (..., n, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    MM = M.reshape((B, n, n))
    workspace = crba_workspace(tree, n)
    for b in range(B):
        crba(tree, Q[b], MM[b], workspace)
