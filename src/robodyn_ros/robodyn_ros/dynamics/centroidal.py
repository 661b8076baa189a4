"""The centroidal momentum matrix A_g and the centre of mass, by the composite-rigid-body pass
(Orin, Briggs & Goswami 2013, "Centroidal dynamics of a humanoid robot", eq. 24 through the
composite inertias of CRBA; Pinocchio's computeCentroidalMap).

h_G = A_g q̇ is the robot's momentum, [linear; angular about its centre of mass c] in world
axes. Column j is the momentum of joint j's subtree per unit velocity of the joint, F_j = I^c_j S_j
in world coordinates about the world origin (inertia_matrix.composite_forces), its angular part
moved to c: A_g[:, j] = [F_j,lin; F_j,ang − c × F_j,lin]. c = Σ h / Σ m over the root subtrees'
composite inertias.
"""

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.fixed_frame import world_inertias
from robodyn_ros.dynamics.inertia_matrix import composite_forces, crba_workspace
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import cross, vector6
from robodyn_ros.dynamics.tree import parent_of


@kernel_helper
def centroidal_map(tree, q, A, com, workspace):
    """A_g (6 x n) into A and the centre of mass (3,) into com, for one state; workspace a
    CrbaWorkspace (inertia_matrix.crba_workspace)."""
    X_world, S_world, Ic, F = workspace.X_world, workspace.S_world, workspace.Ic, workspace.F
    forward_kinematics(tree, q, X_world, S_world)
    world_inertias(tree, X_world, Ic)
    composite_forces(tree, S_world, Ic, F)
    mass, hx, hy, hz = 0.0, 0.0, 0.0, 0.0  # the whole robot's: Ic of its root subtrees
    for i in range(tree.shape[0]):
        if parent_of(tree, i) < 0:
            mass += Ic[i, 0]
            hx, hy, hz = hx + Ic[i, 1], hy + Ic[i, 2], hz + Ic[i, 3]
    c = (hx / mass, hy / mass, hz / mass)
    com[0], com[1], com[2] = c
    for j in range(tree.shape[0]):
        F_j = vector6(F, j)
        moment = cross(c, F_j[0:3])
        A[0, j], A[1, j], A[2, j] = F_j[0], F_j[1], F_j[2]
        A[3, j], A[4, j], A[5, j] = F_j[3] - moment[0], F_j[4] - moment[1], F_j[5] - moment[2]


@kernel
def centroidal_momentum_matrix(tree: PackedTree, q: FloatArray, A: FloatArray,
                               com: FloatArray) -> None:
    """A_g (..., 6, n) and the centre of mass (..., 3) for a state (nq,) or a batch (B, nq)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    AA, COM = A.reshape((B, 6, n)), com.reshape((B, 3))
    workspace = crba_workspace(tree, n)
    for b in range(B):
        centroidal_map(tree, Q[b], AA[b], COM[b], workspace)
