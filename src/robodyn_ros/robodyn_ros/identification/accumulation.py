"""The normal equations of a recorded run, accumulated chunk by chunk on a parallel backend:
the regressor of a chunk is formed, reduced to its sums and dropped, so memory stays O(p²) per
worker whatever the run's length."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robodyn_ros.identification.normal_equations import NormalEquations
from robodyn_ros.parallel import Backend, SerialBackend
from robodyn_ros.robot import Robot

CHUNK = 4_000
"""Samples per chunk. A 7-joint robot's regressor of one chunk takes 22 MB: below the largest
size (32 MB) under which glibc's allocator keeps freed blocks for reuse, so chunk after chunk
writes into memory already mapped instead of faulting in fresh pages (larger chunks ran
slower, benchmarks/identification.py)."""


@dataclass(frozen=True, eq=False)
class Unknowns:
    """What a fit solves for: τ − Y π_known = (Y A) x, x the unknowns.

    Attributes:
        columns: A, (p, k): the unknowns' columns as combinations of π's; None for π itself.
        known: π_known, (p,): the part of τ the model already explains; None for nothing.
    """

    columns: np.ndarray | None = None
    known: np.ndarray | None = None


class RunSamples(NamedTuple):
    """Samples of a recorded run in the robot's order: q (B, nq), q̇, q̈ and τ (B, nv)."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    effort: np.ndarray

    def rows(self, rows: slice | np.ndarray) -> RunSamples:
        """The samples at `rows`: a slice (views) or indices (copies)."""
        return RunSamples(*(field[rows] for field in self))


class ChunkEquations:
    """The NormalEquations of one chunk of samples. Picklable, for process and Dask workers:
    the robot travels with it."""

    def __init__(self, robot: Robot, unknowns: Unknowns) -> None:
        self.robot, self.unknowns = robot, unknowns
        self.__name__ = "identification chunk"

    def __call__(self, chunk: RunSamples) -> NormalEquations:
        samples = RunSamples(*map(np.ascontiguousarray, chunk))
        Y = self.robot.inverse_dynamics_regressor(samples.position, samples.velocity,
                                                  samples.acceleration)
        tau = samples.effort
        if self.unknowns.known is not None:
            tau = tau - Y @ self.unknowns.known
        if self.unknowns.columns is not None:
            Y = Y @ self.unknowns.columns
        return NormalEquations.of(Y, tau)


def accumulate(
    robot: Robot,
    samples: RunSamples,
    *,
    unknowns: Unknowns | None = None,
    pool: Backend | None = None,
    chunk: int = CHUNK,
    progress: Callable[[int], None] | None = None,
) -> NormalEquations:
    """The NormalEquations of a run of B samples for `unknowns` (π by default), in chunks of
    `chunk` samples on `pool` (default serial), `pool.workers` chunks at a time;
    `progress(samples)` after each round.

    Raises:
        ValueError: no samples, or arrays of other shapes.
    """
    q = samples.position
    if (q.ndim != 2 or len(q) == 0 or q.shape != (len(q), robot.nq)
            or any(x.shape != (len(q), robot.nv)
                   for x in (samples.velocity, samples.acceleration, samples.effort))):
        raise ValueError(f"accumulate: position must be (B, {robot.nq}) and velocity, "
                         f"acceleration and effort (B, {robot.nv}) with B ≥ 1; got "
                         f"{[x.shape for x in samples]}")
    pool = pool or SerialBackend()
    task = ChunkEquations(robot, unknowns or Unknowns())
    chunks = [samples.rows(slice(lo, lo + chunk)) for lo in range(0, len(q), chunk)]
    total: NormalEquations | None = None
    for first in range(0, len(chunks), pool.workers):
        for equations in pool.map(task, chunks[first : first + pool.workers]):
            total = equations if total is None else total + equations
        if progress is not None:
            progress(sum(len(each.position) for each in chunks[first : first + pool.workers]))
    assert total is not None
    return total
