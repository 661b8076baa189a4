"""OperationalSpaceDynamics: what an operational-space controller needs at one state, for the
stacked task of one or more frames (``Robot.operational_space``).

The task has m = 6 F rows, frame by frame, each ``[linear; angular]`` about the frame origin in
world-aligned axes (Pinocchio's LOCAL_WORLD_ALIGNED). With ẍ = J q̈ + J̇ q̇ the task
acceleration, the joint-space dynamics M q̈ + C q̇ + g = τ seen from the task are
Λ ẍ + μ + p = F for τ = Jᵀ F (Khatib 1987).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robodyn_ros.model import Model

# Λ from Λ⁻¹ = V diag(s) Vᵀ: eigenvalues below SINGULAR_THRESHOLD · s_max are damped (see
# dynamics.task_space.damped_task_inertia), which bounds Λ by about
# 1 / (SINGULAR_THRESHOLD · s_max). The default treats a condition number above 1e8 as
# singular: Λ⁻¹ mixes 1/kg (linear) and 1/(kg m²) (angular), so ordinary postures already reach
# 1e3 to 1e6 (the Panda's tcp). A controller wants a larger threshold (the operational-space
# controller's default is 1e-4).
SINGULAR_THRESHOLD = 1e-8

# The methods of Robot.operational_space_inertia that serve only frames on one body.
SCHUR_METHODS = ("schur", "schur_bcr")

# The six task axes of a frame, [linear; angular], by name.
TASK_AXES = ("x", "y", "z", "rx", "ry", "rz")


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
    condition number of Λ⁻¹ (inf where it is singular). axes: the task axes of each frame
    (indices into [linear; angular]), m = len(axes) rows per frame.
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
    axes: tuple[int, ...] = (0, 1, 2, 3, 4, 5)

    @property
    def singular(self) -> np.ndarray:
        """True where Λ is damped: the task has lost rank (to the threshold)."""
        damped: np.ndarray = self.rank < self.J.shape[-2]
        return damped

    def null_space_projector(self) -> np.ndarray:
        """Nᵀ = 1 − Jᵀ J̄ᵀ (n, n): a joint torque τ₀ applied as Nᵀ τ₀ gives no task acceleration."""
        n = self.J.shape[-1]
        projector: np.ndarray = np.eye(n) - np.swapaxes(self.J, -1, -2) @ np.swapaxes(
            self.Jbar, -1, -2)
        return projector


def stacked_task_rows(matrix_of: Callable[[str], np.ndarray], frames: str | Sequence[str],
                      axes: str | Sequence[int | str] | None) -> np.ndarray:
    """Each frame's (..., 6, n) matrix (its J or J̇) cut to the task axes (task_axes) and
    stacked frame by frame: the task's (..., m, n)."""
    names = (frames,) if isinstance(frames, str) else tuple(frames)
    chosen = list(task_axes(axes))
    return np.concatenate([matrix_of(name)[..., chosen, :] for name in names], axis=-2)


def task_axes(axes: str | Sequence[int | str] | None) -> tuple[int, ...]:
    """The task axes of each frame, as indices into [linear; angular]: None (all six), indices
    0–5, names from TASK_AXES, or one string of names ("xyz", "xy rz"); ValueError naming
    what is wrong."""
    if axes is None:
        return (0, 1, 2, 3, 4, 5)
    items = re.findall(r"r?[xyz]|\S", axes) if isinstance(axes, str) else list(axes)
    chosen = []
    for item in items:
        if isinstance(item, str) and item in TASK_AXES:
            chosen.append(TASK_AXES.index(item))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool) and 0 <= item < 6:
            chosen.append(int(item))
        else:
            raise ValueError(
                f"axes: {item!r} is not a task axis; give indices 0-5 into [linear; angular] or "
                f"names from {', '.join(TASK_AXES)} (e.g. 'xyz')"
            )
    if not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"axes must name at least one task axis, each once; got {axes!r}")
    return tuple(chosen)


def check_schur_task(model: Model, frames: Sequence[str], function: str, method: str) -> None:
    """ValueError unless every frame is on one moving body, as the Schur-complement routes
    (SCHUR_METHODS) Λ⁻¹ = D − Eᵀ 𝒜⁻¹ E need: the constraint forces of the joints from the base
    to that body, the rest of the tree eliminated."""
    bodies = {frame: model.frame_body[model.frame_index(frame)] for frame in frames}
    for frame, body in bodies.items():
        if body < 0 or body != bodies[frames[0]]:
            on = "the fixed base" if body < 0 else f"the body of joint '{model.joint_names[body]}'"
            first = bodies[frames[0]]
            where = (
                f"frame '{frame}' is on {on}" if body < 0 or first < 0 else
                f"frame '{frame}' is on {on}, frame '{frames[0]}' on the body of joint "
                f"'{model.joint_names[first]}'"
            )
            raise ValueError(
                f"{function}: method '{method}' (the Schur complement of the constraint-force "
                f"matrix) needs every frame on one moving body; {where}. Use 'recursive' (any "
                "frames) or 'dense'"
            )
