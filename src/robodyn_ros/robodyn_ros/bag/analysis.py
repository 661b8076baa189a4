"""What the dynamics say about a recorded run, per sample: inverse-dynamics torques and their
residual against the measured efforts, cond(M), kinetic and potential energy, and for chosen
frames the eigenvalues of Λ, of its translational and its rotational inertia, and the
manipulability. Computed in time chunks, one chunk per
task on a parallel backend, so that M and Λ are reduced where they are computed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, NamedTuple

import numpy as np

from robodyn_ros.bag.derivatives import velocities_and_accelerations
from robodyn_ros.bag.reading import RecordedRun
from robodyn_ros.parallel import Backend, SerialBackend
from robodyn_ros.robot import Robot

CHUNK = 50_000  # samples per time chunk: bounds the memory of M and Λ (≈ 20 MB for 7 joints)
WINDOW = 11  # samples in the default differentiation window


@dataclass(frozen=True, eq=False)
class FrameMeasures:
    """Per sample for one frame: the eigenvalues of Λ (B, 6), ascending, inf where Λ⁻¹ is
    singular (Λ mixes kg and kg·m² since Λ⁻¹ is [linear; angular]); the manipulability
    √det(J Jᵀ) (Yoshikawa) (B,); the eigenvalues of the translational inertia (B, 3), kg, and
    of the rotational inertia (B, 3), kg·m², each ascending: the inverses of Λ⁻¹'s linear and
    angular blocks, the mass (inertia) the frame's point presents to a force (torque) while
    it is free to turn (move) (Khatib 1995), inf where that block is singular."""

    frame: str
    inertia_eigenvalues: np.ndarray
    manipulability: np.ndarray
    translational_inertia: np.ndarray
    rotational_inertia: np.ndarray

    @staticmethod
    def joined(chunks: Sequence[FrameMeasures]) -> FrameMeasures:
        """One frame's measures over consecutive chunks as one, along the samples."""
        return replace(chunks[0], **_arrays_along_samples(chunks, {"frame"}))


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
        rms: np.ndarray = np.sqrt(np.nanmean(self.residual**2, axis=0))
        return rms

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
    """The Analysis of `run` on `pool` (default serial): time chunks of `chunk` samples, each
    computed whole (kernels and reductions) by one worker, `pool.workers` chunks at a time;
    `progress(samples)` after each round."""
    check_frames(robot, frames)
    velocity, acceleration = velocities_and_accelerations(run, window)
    pool = pool or SerialBackend()
    task = ChunkDynamics(robot, tuple(frames), mass_matrix_method)
    chunk = max(1, min(chunk, -(-len(run) // pool.workers)))  # every worker gets a chunk
    rows = [slice(lo, lo + chunk) for lo in range(0, len(run), chunk)]
    chunks = [StateChunk(run.position[at], velocity[at], acceleration[at]) for at in rows]
    results: list[ChunkResults] = []
    for first in range(0, len(chunks), pool.workers):
        results += pool.map(task, chunks[first : first + pool.workers])
        if progress is not None:
            progress(sum(len(each.position) for each in chunks[first : first + pool.workers]))
    whole = ChunkResults.joined(results)
    residual = None if run.effort is None else run.effort - whole.torque
    return Analysis(
        run, tuple(robot.joint_names), velocity, acceleration, whole.torque, residual,
        whole.mass_matrix_condition, whole.kinetic_energy, whole.potential_energy, whole.frames,
        mass_matrix_method, window,
    )


def check_frames(robot: Robot, frames: Sequence[str]) -> None:
    """A ValueError listing the robot's frames unless it has every one of `frames`."""
    for frame in frames:
        robot.model.frame_index(frame)


class StateChunk(NamedTuple):
    """The samples of one time chunk: q (B, nq), q̇ and q̈ (B, n)."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


@dataclass(frozen=True, eq=False)
class ChunkResults:
    """The per-sample results of one time chunk, or of the run (`joined`): τ, cond(M), T, V
    and each frame's measures."""

    torque: np.ndarray
    mass_matrix_condition: np.ndarray
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    frames: tuple[FrameMeasures, ...]

    @staticmethod
    def joined(chunks: Sequence[ChunkResults]) -> ChunkResults:
        """The results of consecutive chunks as one, along the samples."""
        frames = tuple(FrameMeasures.joined([chunk.frames[k] for chunk in chunks])
                       for k in range(len(chunks[0].frames)))
        return replace(chunks[0], frames=frames, **_arrays_along_samples(chunks, {"frames"}))


class ChunkDynamics:
    """The ChunkResults of one time chunk. Picklable, for process and Dask workers: the robot
    travels with it (about 10 kB)."""

    def __init__(self, robot: Robot, frames: tuple[str, ...], mass_matrix_method: str) -> None:
        self.robot, self.frames, self.mass_matrix_method = robot, frames, mass_matrix_method
        self.__name__ = "bag analysis chunk"

    def __call__(self, chunk: StateChunk) -> ChunkResults:
        robot = self.robot
        q, qd, qdd = (np.ascontiguousarray(x)
                      for x in (chunk.position, chunk.velocity, chunk.acceleration))
        return ChunkResults(
            robot.inverse_dynamics(q, qd, qdd),
            matrix_condition(robot.mass_matrix(q, method=self.mass_matrix_method)),
            robot.kinetic_energy(q, qd),
            robot.potential_energy(q),
            tuple(frame_measures(robot, q, frame) for frame in self.frames),
        )


def matrix_condition(M: np.ndarray) -> np.ndarray:
    """The 2-norm condition number of symmetric positive definite matrices (..., n, n)."""
    eigenvalues = np.linalg.eigvalsh(M)
    return eigenvalues[..., -1] / eigenvalues[..., 0]


def frame_measures(robot: Robot, q: np.ndarray, frame: str) -> FrameMeasures:
    """A frame's FrameMeasures: the eigenvalues of Λ (B, 6), the manipulability (B,), the
    translational (B, 3) and the rotational inertia's (B, 3) eigenvalues, all from Λ⁻¹, which
    exists everywhere: inf where it, or its block, has a zero eigenvalue."""
    inverse = robot.operational_space_inertia(q, frame, inverse=True)
    J = robot.jacobian(q, frame)
    manipulability = np.sqrt(np.clip(np.linalg.det(J @ np.swapaxes(J, -1, -2)), 0.0, None))
    return FrameMeasures(frame, _inverse_eigenvalues(inverse), manipulability,
                         _inverse_eigenvalues(inverse[:, :3, :3]),
                         _inverse_eigenvalues(inverse[:, 3:, 3:]))


def _arrays_along_samples(records: Sequence[Any], other: set[str]) -> dict[str, Any]:
    """Field name → that field of consecutive chunks' records (dataclasses of one kind)
    concatenated along the samples, for every field but the `other` ones."""
    return {field.name: np.concatenate([getattr(record, field.name) for record in records])
            for field in fields(records[0]) if field.name not in other}


def _inverse_eigenvalues(inverse: np.ndarray) -> np.ndarray:
    """The eigenvalues of the inverses of symmetric positive semidefinite matrices
    (B, m, m), ascending, inf for a zero eigenvalue: (B, m)."""
    eigenvalues = np.linalg.eigvalsh(inverse)
    with np.errstate(divide="ignore"):
        return np.where(eigenvalues > 0.0, 1.0 / eigenvalues, np.inf)[:, ::-1]
