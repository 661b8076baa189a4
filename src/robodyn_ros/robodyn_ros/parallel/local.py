"""Backends on this machine: serial (the reference), threads (the kernels' GIL-free builds on
chunks of the batch on each thread) and processes (each worker gets the robot once)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn_ros.parallel.base import Backend, RobotCall, checked_batch, collect

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


def threaded_batch(
    robot: Robot, threads: int, function: str, states: tuple[np.ndarray, ...],
    options: dict[str, Any],
) -> np.ndarray:
    """robot.<function>(*states, **options) for (B, n) states, run on `threads` threads."""
    arrays = checked_batch(states)
    answer: np.ndarray = getattr(robot.with_threads(threads), function)(*arrays, **options)
    return answer


class SerialBackend(Backend):
    """Everything in the calling thread, in order: the reference the others must equal."""

    name = "serial"

    def __init__(self, workers: int = 1) -> None:
        super().__init__(workers)

    def batch(
        self, robot: Robot, function: str, *states: np.ndarray, **options: Any
    ) -> np.ndarray:
        return threaded_batch(robot, 1, function, states, options)

    def _submit(self, function: Callable[[Any], Any], item: Any) -> _Deferred:
        return _Deferred(function, item)


class _Deferred:
    """function(item) as a future that runs in the calling thread when collect asks for its
    result: the items run in order, one at a time, and collect checks the cancel event before
    each. It is never waited on, so it counts as done."""

    def __init__(self, function: Callable[[Any], Any], item: Any) -> None:
        self.function, self.item = function, item

    def done(self) -> bool:
        return True

    def result(self) -> Any:
        return self.function(self.item)

    def cancel(self) -> bool:
        return True


class _PoolBackend(Backend):
    """A concurrent.futures pool, made on first use."""

    def __init__(self, workers: int = 2) -> None:
        super().__init__(workers)
        self._pool: Executor | None = None

    def _executor(self) -> Executor:
        if self._pool is None:
            self._pool = self._make_pool()
        return self._pool

    def _make_pool(self) -> Executor:
        raise NotImplementedError

    def _submit(self, function: Callable[[Any], Any], item: Any) -> Future[Any]:
        return self._executor().submit(function, item)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class ThreadBackend(_PoolBackend):
    """Threads. A batch runs as the Robot's own threaded batch (Robot.threads = workers): the
    kernels' GIL-free builds on contiguous chunks of states, no Python per state.
    `map` runs its function on a thread pool; it overlaps what releases the GIL, which the
    Robot's batches (B, n) do and its single states do not."""

    name = "threads"

    def batch(
        self, robot: Robot, function: str, *states: np.ndarray, **options: Any
    ) -> np.ndarray:
        return threaded_batch(robot, self.workers, function, states, options)

    def _make_pool(self) -> Executor:
        return ThreadPoolExecutor(self.workers, thread_name_prefix="robodyn")


_WORKER_ROBOT: Robot | None = None  # in a process worker: the robot of its pool


def _set_worker_robot(robot: Robot) -> None:
    global _WORKER_ROBOT
    _WORKER_ROBOT = robot
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def _call_worker_robot(call: RobotCall, chunk: tuple[np.ndarray, ...]) -> np.ndarray:
    return call(chunk, _WORKER_ROBOT)


class ProcessBackend(_PoolBackend):
    """A process pool. For batches, each worker receives the robot once, when the pool starts
    (a new robot starts a new pool); `map` pickles its function and items. Workers are spawned,
    so each imports robodyn_ros (and loads the kernels) once, about a second."""

    name = "processes"

    def __init__(self, workers: int = 2) -> None:
        super().__init__(workers)
        self._robot: Robot | None = None

    def _make_pool(self) -> Executor:
        robot = self._robot
        initializer: Callable[..., None] | None = None if robot is None else _set_worker_robot
        initargs: tuple[Any, ...] = () if robot is None else (robot,)
        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),  # forking a process with threads
            initializer=initializer,  # (DDS, numba) can deadlock the child
            initargs=initargs,
        )

    def _map_robot(
        self, robot: Robot, call: RobotCall, chunks: list[tuple[np.ndarray, ...]]
    ) -> list[np.ndarray]:
        if robot is not self._robot:
            self.close()
            self._robot = robot
        pool = self._executor()
        futures = [pool.submit(_call_worker_robot, call, chunk) for chunk in chunks]
        return collect(futures, call, None)
