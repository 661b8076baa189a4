"""OperationalSpaceDynamics: what an operational-space controller needs at one state, for the
stacked task of one or more frames (``Robot.operational_space``).

The task has m = 6 F rows, frame by frame, each ``[linear; angular]`` about the frame origin in
world-aligned axes (Pinocchio's LOCAL_WORLD_ALIGNED). With ẍ = J q̈ + J̇ q̇ the task
acceleration, the joint-space dynamics M q̈ + C q̇ + g = τ seen from the task are
Λ ẍ + μ + p = F for τ = Jᵀ F (Khatib 1987).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Λ from Λ⁻¹ = V diag(s) Vᵀ: eigenvalues below SINGULAR_THRESHOLD · s_max are damped (see
# dynamics.operational_space.damped_task_inertia), which bounds Λ by about
# 1 / (SINGULAR_THRESHOLD · s_max). The default treats a condition number above 1e8 as
# singular: Λ⁻¹ mixes 1/kg (linear) and 1/(kg m²) (angular), so ordinary postures already reach
# 1e3 to 1e6 (the Panda's tcp). A controller wants a larger threshold (the operational-space
# controller's default is 1e-4).
SINGULAR_THRESHOLD = 1e-8


@dataclass(frozen=True, eq=False)
class OperationalSpaceDynamics:
    """The operational-space dynamics of a task at one state (a batch adds a leading B).

    frames: the task frames, in row order. J (m, n): the task Jacobian. Lambda_inv (m, m):
    Λ⁻¹ = J M⁻¹ Jᵀ, defined everywhere. Lambda (m, m): Λ, exact where Λ⁻¹ is well conditioned,
    damped near a singularity (never NaN or infinite). Jbar (n, m): the dynamically consistent
    inverse J̄ = M⁻¹ Jᵀ Λ. mu (m,): μ = J̄ᵀ C q̇ − Λ J̇ q̇, the task's Coriolis and centrifugal
    force. p (m,): p = J̄ᵀ g, its gravity force. Jdot_qd (m,): J̇ q̇, the classical acceleration
    of each frame origin and the angular acceleration at q̈ = 0. rank: eigenvalues of Λ⁻¹
    inverted exactly, m unless near a singularity (then Λ is damped). condition: the
    condition number of Λ⁻¹ (inf where it is singular).
    """

    frames: tuple[str, ...]
    J: np.ndarray
    Lambda_inv: np.ndarray
    Lambda: np.ndarray
    Jbar: np.ndarray
    mu: np.ndarray
    p: np.ndarray
    Jdot_qd: np.ndarray
    rank: np.ndarray
    condition: np.ndarray

    @property
    def singular(self) -> np.ndarray:
        """True where Λ is damped: the task has lost rank (to the threshold)."""
        return self.rank < self.J.shape[-2]

    def null_space_projector(self) -> np.ndarray:
        """Nᵀ = 1 − Jᵀ J̄ᵀ (n, n): a joint torque τ₀ applied as Nᵀ τ₀ gives no task acceleration."""
        n = self.J.shape[-1]
        return np.eye(n) - np.swapaxes(self.J, -1, -2) @ np.swapaxes(self.Jbar, -1, -2)
