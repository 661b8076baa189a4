"""Joint trajectories built off the control thread. A trajectory_msgs/JointTrajectory of
100,000 points takes seconds to deserialise, check and convert, and to interpolate; a control
loop that did it between two joint states would send no effort meanwhile.

The subscription takes the message serialized and hands it to a `TrajectoryBuilder`, whose
thread deserialises it with rosbags' CDR reader (Python, so the control thread keeps getting
its turns of the interpreter, where rclpy's reader would hold it throughout), and builds what
the node plays. The result waits until the control thread takes it at a cycle's start, so the
trajectory being played goes on until then and is swapped at once. A newer trajectory
supersedes the one being built; `cancel` drops both (a target that ends the trajectory).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from robodyn_ros.bag.typestore import typestore
from robodyn_ros.ros.conversions import POINTS_PER_CHUNK

JOINT_TRAJECTORY_TYPE = "trajectory_msgs/msg/JointTrajectory"
Request = TypeVar("Request")
Built = TypeVar("Built")


@dataclass(frozen=True)
class SerializedTrajectory:
    """A JointTrajectory as the middleware delivered it (CDR, with its encapsulation)."""

    data: bytes


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (for the process) while the block runs:
    deserialising a long trajectory makes objects by the hundred thousand, each batch of which
    would start a collection that walks them all with the interpreter held, stopping the
    control thread for a fifth of a second at a time. They are freed by reference counting."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def released_in_chunks(items: list[Any]) -> None:
    """Empty `items` from its end, POINTS_PER_CHUNK at a time: the last reference to a long
    trajectory's points, dropped at once, frees them all in one call that holds the
    interpreter for tens of milliseconds."""
    while items:
        del items[-POINTS_PER_CHUNK:]


def deserialize_trajectory(serialized: SerializedTrajectory) -> Any:
    """The rosbags JointTrajectory of a serialized one: the fields of rclpy's message, with
    numpy arrays for the numbers.

    Raises:
        rosbags.serde.SerdeError: the bytes are not a JointTrajectory.
    """
    return typestore().deserialize_cdr(serialized.data, JOINT_TRAJECTORY_TYPE)


class TrajectoryBuilder(Generic[Request, Built]):
    """Builds the newest request in a thread of its own and holds the result for `take`.

    Args:
        build: request → what it builds, or None when it failed (`build` reports why: it is
            the node's guarded callback).
        name: the thread's name.
    """

    def __init__(self, build: Callable[[Request], Built | None], name: str) -> None:
        self._build = build
        self._lock = threading.Condition()
        self._serial = 0  # counts requests and cancels: a build for an older one is dropped
        self._pending: Request | None = None
        self._built: Built | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, request: Request) -> None:
        """Build `request` next, instead of whatever was submitted before it."""
        with self._lock:
            self._serial += 1
            self._pending, self._built = request, None
            self._lock.notify()

    def cancel(self) -> None:
        """Drop the request being built or waiting, and a result not taken yet."""
        with self._lock:
            self._serial += 1
            self._pending = self._built = None

    def take(self) -> Built | None:
        """The newest result not taken yet (None: none)."""
        with self._lock:
            built, self._built = self._built, None
            return built

    def stop(self, timeout: float = 5.0) -> None:
        """End the thread (after the build under way, if any)."""
        with self._lock:
            self._stopped = True
            self._lock.notify()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                while self._pending is None and not self._stopped:
                    self._lock.wait()
                if self._stopped:
                    return
                request, serial = self._pending, self._serial
                self._pending = None
            assert request is not None
            built = self._build(request)
            with self._lock:
                if serial == self._serial:  # nothing newer came meanwhile
                    self._built = built
