"""Executor backends for independent work: batches of states, scenarios, bag chunks.

    with backend("threads", workers=2) as pool:
        qdd = pool.batch(robot, "forward_dynamics", Q, QD, TAU)  # chunks on the workers
        results = pool.map(simulate_scenario, scenarios)

Backends: "serial" (the reference), "threads" (batches as the kernels' GIL-free builds on
chunks of states on every thread, see Robot.threads; `map` on a thread pool), "processes" (a
spawned process pool; each worker gets the robot once) and "dask" (dask.distributed: a
LocalCluster, or a running cluster's `address`). Every backend answers as serial does; a
failing item raises ParallelError naming it; a set cancel event raises CancelledError.
"""

from __future__ import annotations

from typing import Any

from robodyn_ros.parallel.base import Backend, CancelledError, ParallelError
from robodyn_ros.parallel.local import ProcessBackend, SerialBackend, ThreadBackend

BACKENDS = ("serial", "threads", "processes", "dask")


def backend(name: str, workers: int = 2, **options: Any) -> Backend:
    """The backend called `name` (BACKENDS) with `workers` workers; "dask" also takes
    `address`, a running scheduler's."""
    if name == "serial":
        return SerialBackend(**options)
    if name == "threads":
        return ThreadBackend(workers, **options)
    if name == "processes":
        return ProcessBackend(workers, **options)
    if name == "dask":
        from robodyn_ros.parallel.dask_cluster import DaskBackend

        return DaskBackend(workers, **options)
    raise ValueError(f"unknown backend '{name}'; choose one of {', '.join(BACKENDS)}")


__all__ = [
    "BACKENDS",
    "Backend",
    "CancelledError",
    "ParallelError",
    "ProcessBackend",
    "SerialBackend",
    "ThreadBackend",
    "backend",
]
