"""The normal equations of a recorded run, accumulated chunk by chunk on a parallel backend:
the regressor of a chunk is formed, reduced to its sums and dropped, so memory stays O(p²) per
worker whatever the run's length."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


class ChunkEquations:
    """The NormalEquations of one chunk (q, q̇, q̈, τ), each (B, n). Picklable, for process
    and Dask workers: the robot travels with it."""

    def __init__(self, robot: Robot, unknowns: Unknowns) -> None:
        self.robot, self.unknowns = robot, unknowns
        self.__name__ = "identification chunk"

    def __call__(self, chunk: tuple[np.ndarray, ...]) -> NormalEquations:
        q, qd, qdd, tau = (np.ascontiguousarray(x) for x in chunk)
        Y = self.robot.inverse_dynamics_regressor(q, qd, qdd)
        if self.unknowns.known is not None:
            tau = tau - Y @ self.unknowns.known
        if self.unknowns.columns is not None:
            Y = Y @ self.unknowns.columns
        return NormalEquations.of(Y, tau)


def accumulate(
    robot: Robot,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    tau: np.ndarray,
    *,
    unknowns: Unknowns | None = None,
    pool: Backend | None = None,
    chunk: int = CHUNK,
    progress: Callable[[int], None] | None = None,
) -> NormalEquations:
    """The NormalEquations of a run of B samples (q (B, nq), the others (B, nv)) for
    `unknowns` (π by default), in chunks of `chunk` samples on `pool` (default serial),
    `pool.workers` chunks at a time; `progress(samples)` after each round.

    Raises:
        ValueError: no samples, or arrays of other shapes.
    """
    if (q.ndim != 2 or len(q) == 0 or q.shape != (len(q), robot.nq)
            or any(x.shape != (len(q), robot.nv) for x in (qd, qdd, tau))):
        raise ValueError(f"accumulate: q must be (B, {robot.nq}) and qd, qdd and tau "
                         f"(B, {robot.nv}) with B ≥ 1; got {[x.shape for x in (q, qd, qdd, tau)]}")
    pool = pool or SerialBackend()
    task = ChunkEquations(robot, unknowns or Unknowns())
    chunks = [(q[lo : lo + chunk], qd[lo : lo + chunk], qdd[lo : lo + chunk],
               tau[lo : lo + chunk]) for lo in range(0, len(q), chunk)]
    total: NormalEquations | None = None
    for first in range(0, len(chunks), pool.workers):
        for equations in pool.map(task, chunks[first : first + pool.workers]):
            total = equations if total is None else total + equations
        if progress is not None:
            progress(sum(len(c[0]) for c in chunks[first : first + pool.workers]))
    assert total is not None
    return total
