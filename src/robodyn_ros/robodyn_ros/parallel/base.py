"""The backend interface: map a function over items, or a Robot function over a batch of
states, on some set of workers; an error names the item, cancellation stops what is pending."""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

import numpy as np

from robodyn_ros.errors import NO_ANSWER_ERRORS, RobodynError

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class ParallelError(RobodynError, RuntimeError):
    """A task failed; the message names the item and the original error."""


class CancelledError(RobodynError, RuntimeError):
    """The caller's cancel event was set before every item was done."""


class Backend:
    """Runs independent work on `workers` workers. Use it as a context manager (or call
    close()) to release the workers."""

    name: ClassVar[str] = ""

    def __init__(self, workers: int = 2) -> None:
        if not (isinstance(workers, int) and workers >= 1):
            raise ValueError(f"{self.name} backend: workers must be an integer ≥ 1: {workers!r}")
        self.workers = workers

    def map(
        self,
        function: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        cancel: threading.Event | None = None,
    ) -> list[Any]:
        """[function(item) for item in items], in order. A failing item raises ParallelError
        naming its index; a set `cancel` event cancels what has not started and raises
        CancelledError. Processes and Dask need a picklable (module-level) function."""
        return collect([self._submit(function, item) for item in items], function, cancel)

    def _submit(self, function: Callable[[Any], Any], item: Any) -> Any:
        """A future of function(item), as collect takes it: concurrent.futures' or Dask's on
        a worker, or the serial backend's, run when collect asks for its result."""
        raise NotImplementedError

    def batch(
        self, robot: Robot, function: str, *states: np.ndarray, **options: Any
    ) -> Any:
        """robot.<function>(*states, **options) for a batch, its (B, n) states split into one
        contiguous chunk per worker; the chunks' answers joined in order (joined)."""
        chunks = split_batch(states, self.workers)
        return joined(self._map_robot(robot, RobotCall(robot, function, options), chunks))

    def _map_robot(
        self, robot: Robot, call: RobotCall, chunks: list[tuple[np.ndarray, ...]]
    ) -> list[np.ndarray]:
        return self.map(call, chunks)

    def bind(self, robot: Robot) -> BoundRobot:
        """The robot with its functions run as batches on this backend:
        ``pool.bind(robot).forward_dynamics(Q, QD, TAU)``."""
        return BoundRobot(self, robot)

    def close(self) -> None:
        """Release the workers (none here: a backend without workers has nothing to release)."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BoundRobot:
    """A Robot whose functions run on a backend: every positional argument is a (B, n) batch
    (give the others, such as `frame`, by keyword)."""

    def __init__(self, backend: Backend, robot: Robot) -> None:
        self.backend, self.robot = backend, robot

    def __getattr__(self, name: str) -> Callable[..., np.ndarray]:
        if name.startswith("_") or not callable(getattr(self.robot, name, None)):
            raise AttributeError(f"a Robot has no function '{name}' to run on a backend")
        return functools.partial(self.backend.batch, self.robot, name)


class RobotCall:
    """robot.<function>(*chunk, **options) for one chunk of a batch; pickled without its
    robot, which the process and Dask workers hold already."""

    def __init__(self, robot: Robot, function: str, options: dict[str, Any]) -> None:
        self.robot, self.function, self.options = robot, function, options
        self.__name__ = function

    def __call__(self, chunk: tuple[np.ndarray, ...], robot: Robot | None = None) -> np.ndarray:
        answer: np.ndarray = getattr(robot or self.robot, self.function)(*chunk, **self.options)
        return answer

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "robot": None}


def joined(answers: Sequence[Any]) -> Any:
    """The chunks' answers as one: arrays concatenated along the batch; a record of arrays
    (such as Robot.inverse_dynamics_derivatives') the same record, each field concatenated."""
    if isinstance(answers[0], tuple):
        fields = zip(*answers, strict=True)
        return type(answers[0])(*(np.concatenate(field) for field in fields))
    return np.concatenate(answers)


def split_batch(states: Sequence[np.ndarray], parts: int) -> list[tuple[np.ndarray, ...]]:
    """The states (each (B, ...), one B) cut into at most `parts` contiguous chunks."""
    arrays = checked_batch(states)
    size = arrays[0].shape[0]
    bounds = np.linspace(0, size, min(parts, max(size, 1)) + 1).astype(int)
    return [tuple(a[lo:hi] for a in arrays) for lo, hi in itertools.pairwise(bounds) if hi > lo]


def checked_batch(states: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The states as C-contiguous float arrays, or ValueError unless they are (B, n) arrays
    of one B."""
    if not states:
        raise ValueError("batch: give at least one batch of states")
    arrays = [np.ascontiguousarray(s, dtype=float) for s in states]
    size = arrays[0].shape[0] if arrays[0].ndim == 2 else 0
    if arrays[0].ndim != 2 or any(a.shape[0] != size for a in arrays):
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(f"batch: states must be (B, n) arrays with one B; got {shapes}")
    return arrays


def raise_failure(index: int, function: Callable[..., Any], error: Exception) -> NoReturn:
    """Raise for a failing item: ParallelError naming the item and the original error; the
    dynamics' own errors (robodyn_ros.errors: no answer at a state) keep their type, with the
    item in a note, so that a caller catches the same error on every backend."""
    name = getattr(function, "__name__", type(function).__name__)
    if isinstance(error, NO_ANSWER_ERRORS):
        error.add_note(f"raised by item {index} ({name}) of a parallel map")
        raise error
    raise ParallelError(f"item {index} ({name}) failed: {type(error).__name__}: {error}") \
        from error


def _done_unless_cancelled(future: Any, cancel: threading.Event) -> bool:
    """Wait for the future until it is done (True) or the cancel event is set (False)."""
    while not cancel.is_set():
        if future.done():
            return True
        cancel.wait(0.02)
    return False


def collect(
    futures: Sequence[Any], function: Callable[..., Any], cancel: threading.Event | None,
) -> list[Any]:
    """The futures' results in order (concurrent.futures or Dask futures, or any with done,
    result and cancel); a `cancel` event set before one is done cancels it and the rest."""
    results = []
    for index, future in enumerate(futures):
        if cancel is not None and not _done_unless_cancelled(future, cancel):
            for pending in futures[index:]:
                pending.cancel()
            raise CancelledError(f"cancelled with {index} items done (of {len(futures)})")
        try:
            results.append(future.result())
        except Exception as error:
            for pending in futures[index + 1 :]:
                pending.cancel()
            raise_failure(index, function, error)
    return results
