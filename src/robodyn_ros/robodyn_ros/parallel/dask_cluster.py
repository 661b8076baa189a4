"""The distributed backend: a dask.distributed client, on a LocalCluster of its own or on a
running cluster's scheduler. Each robot is scattered to every worker once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn_ros.parallel.base import Backend, RobotCall, collect

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class DaskBackend(Backend):
    """Tasks on a Dask cluster. `address` (e.g. "tcp://scheduler:8786") joins a running
    cluster; without it the backend starts a LocalCluster of `workers` single-threaded worker
    processes and stops it on close()."""

    name = "dask"

    def __init__(self, workers: int = 2, address: str | None = None) -> None:
        super().__init__(workers)
        try:
            from distributed import Client, LocalCluster
        except ImportError as error:
            raise ImportError(
                "the dask backend needs dask.distributed: pip install 'dask[distributed]'"
            ) from error
        self._cluster = None
        if address is None:
            self._cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            address = self._cluster.scheduler_address
        self.client = Client(address)
        self._scattered: dict[int, tuple[Any, Any]] = {}  # id(robot) → (robot, its future)

    def _submit(self, function: Callable[[Any], Any], item: Any) -> Any:
        return self.client.submit(function, item, pure=False)

    def _map_robot(
        self, robot: Robot, call: RobotCall, chunks: list[tuple[np.ndarray, ...]]
    ) -> list[np.ndarray]:
        entry = self._scattered.get(id(robot))
        if entry is None or entry[0] is not robot:
            entry = (robot, self.client.scatter(robot, broadcast=True))
            self._scattered[id(robot)] = entry
        futures = [
            self.client.submit(_call_robot, entry[1], call, chunk, pure=False) for chunk in chunks
        ]
        return collect(futures, call, None)

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def _call_robot(robot: Robot, call: RobotCall, chunk: tuple[np.ndarray, ...]) -> np.ndarray:
    return call(chunk, robot)
