"""Operational-space inertia Λ = (J M⁻¹ Jᵀ)⁻¹ of a frame by the dense route (Khatib 1987): M⁻¹
by the O(n²) recursion, the frame Jacobian, J M⁻¹ Jᵀ and a 6x6 inverse. The reference for
faster methods.
"""

import numpy as np

from robodyn_ros.dynamics.inertia_inverse import minv_aba, minv_workspace
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import frame_jacobian_into, frame_pose_into
from robodyn_ros.dynamics.tree import FRAME_BODY

# Λ⁻¹ with a condition number above this counts as singular: the frame's Jacobian has lost
# rank, and Λ does not exist there.
SINGULAR_CONDITION = 1e12


@kernel_helper
def norm1(A):
    """The 1-norm of a matrix: its largest absolute column sum."""
    return np.abs(A).sum(axis=0).max()


@kernel_helper
def invert_task_inertia(Lambda_inv, out):
    """out = Λ = (Λ⁻¹)⁻¹, refusing a Λ⁻¹ that is singular to working precision."""
    out[:, :] = np.linalg.inv(Lambda_inv)
    if not norm1(Lambda_inv) * norm1(out) < SINGULAR_CONDITION:
        raise np.linalg.LinAlgError("J M⁻¹ Jᵀ is singular")


@kernel
def operational_space_inertia(tree, frame, q, inverse, out):
    """Λ (or Λ⁻¹ when `inverse`) of one frame (a 13-row), world-aligned axes at the frame
    origin, for a state (n,) or a batch (B, n); out is (..., 6, 6)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape
    OUT = out.reshape((B, 6, 6))
    workspace = minv_workspace(tree, n)
    _, X_world, S_world, _, _, _, _, _ = workspace
    Minv, J, pose = np.empty((n, n)), np.empty((6, n)), np.empty((4, 4))
    for b in range(B):
        minv_aba(tree, Q[b], Minv, workspace)
        frame_pose_into(X_world, frame, pose)
        frame_jacobian_into(tree, S_world, int(frame[FRAME_BODY]), pose[:3, 3], J)
        Lambda_inv = J @ (Minv @ J.T)
        if inverse:
            OUT[b] = Lambda_inv
        else:
            invert_task_inertia(Lambda_inv, OUT[b])
