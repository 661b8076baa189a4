"""What the dynamics say about a recorded run, per sample: inverse-dynamics torques and their
residual against the measured efforts, cond(M), kinetic and potential energy, and for chosen
frames the eigenvalues of Λ and the manipulability. Computed in time chunks, each chunk's
states split over the workers of a parallel backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robodyn_ros.bag.derivatives import velocities_and_accelerations
from robodyn_ros.bag.reading import RecordedRun
from robodyn_ros.parallel import Backend, SerialBackend
from robodyn_ros.parallel.base import BoundRobot
from robodyn_ros.robot import Robot

CHUNK = 50_000  # samples per time chunk: bounds the memory of M and Λ (≈ 20 MB for 7 joints)
WINDOW = 11  # samples in the default differentiation window


@dataclass(frozen=True, eq=False)
class FrameMeasures:
    """Per sample for one frame: the eigenvalues of Λ (B, 6), ascending, inf where Λ⁻¹ is
    singular (Λ mixes kg and kg·m² since Λ⁻¹ is [linear; angular]); the manipulability
    √det(J Jᵀ) (Yoshikawa) (B,)."""

    frame: str
    inertia_eigenvalues: np.ndarray
    manipulability: np.ndarray


@dataclass(frozen=True, eq=False)
class Analysis:
    """The dynamics of a recorded run, sample by sample, in the robot's joint order.

    velocity, acceleration (B, n): those used (recorded, or Savitzky–Golay derivatives).
    torque (B, n): τ = M q̈ + C q̇ + g by RNEA. residual (B, n): measured effort − τ (NaN where
    a message had no effort), or None without efforts. mass_matrix_condition (B,): the
    condition number of M. kinetic_energy, potential_energy (B,): J.
    """

    run: RecordedRun
    joint_names: tuple[str, ...]
    velocity: np.ndarray
    acceleration: np.ndarray
    torque: np.ndarray
    residual: np.ndarray | None
    mass_matrix_condition: np.ndarray
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    frames: tuple[FrameMeasures, ...]
    mass_matrix_method: str
    window: int

    def rms_residual(self) -> np.ndarray:
        """Root mean square of the residual per joint (n,), over the samples with efforts."""
        if self.residual is None:
            raise ValueError(f"bag {self.run.bag}: no efforts recorded, so no residual")
        return np.sqrt(np.nanmean(self.residual**2, axis=0))

    def worst_instants(self, count: int = 5) -> np.ndarray:
        """Sample indices of the `count` largest residual norms, largest first."""
        if self.residual is None:
            raise ValueError(f"bag {self.run.bag}: no efforts recorded, so no residual")
        norms = np.nan_to_num(np.linalg.norm(self.residual, axis=1), nan=-1.0)
        return np.argsort(norms)[::-1][: min(count, len(norms))]


def analyze(
    robot: Robot,
    run: RecordedRun,
    *,
    frames: Sequence[str] = (),
    window: int = WINDOW,
    pool: Backend | None = None,
    mass_matrix_method: str = "crba",
    chunk: int = CHUNK,
    progress: Callable[[int], None] | None = None,
) -> Analysis:
    """The Analysis of `run` on `pool` (default serial); `progress(samples)` after each chunk."""
    for frame in frames:
        robot.model.frame_index(frame)  # raises, listing the frames
    velocity, acceleration = velocities_and_accelerations(run, window)
    size, n = len(run), robot.nv
    torque = np.empty((size, n))
    condition, kinetic, potential = np.empty(size), np.empty(size), np.empty(size)
    eigenvalues = {frame: np.empty((size, 6)) for frame in frames}
    manipulability = {frame: np.empty(size) for frame in frames}
    bound = (pool or SerialBackend()).bind(robot)
    for lo in range(0, size, chunk):
        part = slice(lo, min(lo + chunk, size))
        q, qd, qdd = run.position[part], velocity[part], acceleration[part]
        torque[part] = bound.inverse_dynamics(q, qd, qdd)
        condition[part] = matrix_condition(bound.mass_matrix(q, method=mass_matrix_method))
        kinetic[part] = bound.kinetic_energy(q, qd)
        potential[part] = bound.potential_energy(q)
        for frame in frames:
            eigenvalues[frame][part], manipulability[frame][part] = frame_measures(bound, q, frame)
        if progress is not None:
            progress(part.stop - part.start)
    measures = tuple(FrameMeasures(f, eigenvalues[f], manipulability[f]) for f in frames)
    residual = None if run.effort is None else run.effort - torque
    return Analysis(
        run, tuple(robot.joint_names), velocity, acceleration, torque, residual, condition,
        kinetic, potential, measures, mass_matrix_method, window,
    )


def matrix_condition(M: np.ndarray) -> np.ndarray:
    """The 2-norm condition number of symmetric positive definite matrices (..., n, n)."""
    eigenvalues = np.linalg.eigvalsh(M)
    return eigenvalues[..., -1] / eigenvalues[..., 0]


def frame_measures(bound: BoundRobot, q: np.ndarray, frame: str) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvalues of Λ (B, 6) ascending, manipulability (B,)) of a frame, Λ's from Λ⁻¹'s,
    which exists everywhere: inf where Λ⁻¹ has a zero eigenvalue."""
    inverse_eigenvalues = np.linalg.eigvalsh(
        bound.operational_space_inertia(q, frame=frame, inverse=True)
    )
    with np.errstate(divide="ignore"):
        eigenvalues = np.where(inverse_eigenvalues > 0.0, 1.0 / inverse_eigenvalues, np.inf)
    J = bound.jacobian(q, frame=frame)
    manipulability = np.sqrt(np.clip(np.linalg.det(J @ np.swapaxes(J, -1, -2)), 0.0, None))
    return eigenvalues[:, ::-1], manipulability
