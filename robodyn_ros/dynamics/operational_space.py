"""Operational-space inertia Λ = (J M⁻¹ Jᵀ)⁻¹ of a frame by the dense route: CRBA, the LᵀDL
factor of M, six solves and a 6x6 inverse (Khatib 1987). The reference for faster methods.
"""

import numpy as np

from robodyn_ros.dynamics.factorization import factor_mass_matrix, ltdl_solve
from robodyn_ros.dynamics.jit import kernel
from robodyn_ros.dynamics.kinematics import frame_jacobian_into, frame_pose_into
from robodyn_ros.dynamics.tree import FRAME_BODY, POSE


@kernel
def operational_space_inertia(tree, frame, q, inverse, out):
    """Λ (or Λ⁻¹ when `inverse`) of one frame (a 13-row), world-aligned axes at the frame
    origin, for a state (n,) or a batch (B, n); out is (..., 6, 6)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape
    OUT = out.reshape((B, 6, 6))
    X_world, S_world, Ic = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6, 6))
    LD, J, MinvJt, pose = np.empty((n, n)), np.empty((6, n)), np.empty((6, n)), np.empty((4, 4))
    for b in range(B):
        factor_mass_matrix(tree, Q[b], LD, X_world, S_world, Ic)
        frame_pose_into(X_world, frame, pose)
        frame_jacobian_into(tree, S_world, int(frame[FRAME_BODY]), pose[:3, 3], J)
        MinvJt[:, :] = J
        for r in range(6):
            ltdl_solve(LD, tree, MinvJt[r])
        Lambda_inv = J @ MinvJt.T
        OUT[b] = Lambda_inv if inverse else np.linalg.inv(Lambda_inv)
