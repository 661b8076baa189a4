"""The partial derivatives of the dynamics at one state or a batch, as Robot returns them
(``Robot.inverse_dynamics_derivatives``, ``Robot.forward_dynamics_derivatives``).

Each matrix is (..., nv, nv), rows the answer's coordinates and columns the coordinates of the
variable. A derivative in q is taken in the tangent space: column j is the answer's rate as q
moves along the j-th velocity coordinate, q ⊕ ε e_j (Robot.integrate); on a free flyer that is
the base's local velocity, as Pinocchio's computeRNEADerivatives and computeABADerivatives
define them. A fixed-base robot's tangent space is its joint space.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class InverseDynamicsDerivatives(NamedTuple):
    """The derivatives of τ = inverse_dynamics(q, q̇, q̈)."""

    dtau_dq: np.ndarray  # ∂τ/∂q, tangent space
    dtau_dv: np.ndarray  # ∂τ/∂q̇
    dtau_da: np.ndarray  # ∂τ/∂q̈ = M(q), armature included


class ForwardDynamicsDerivatives(NamedTuple):
    """The derivatives of q̈ = forward_dynamics(q, q̇, τ)."""

    dvdot_dq: np.ndarray  # ∂q̈/∂q, tangent space
    dvdot_dv: np.ndarray  # ∂q̈/∂q̇
    dvdot_dtau: np.ndarray  # ∂q̈/∂τ = M(q)⁻¹


def split_derivatives(out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three matrices of a kernel's answer (..., 3, nv, nv), as views."""
    return out[..., 0, :, :], out[..., 1, :, :], out[..., 2, :, :]
