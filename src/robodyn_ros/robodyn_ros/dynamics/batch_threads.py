"""A kernel over a batch of states on several threads at once.

The batch is cut into contiguous chunks, a few per thread, and each thread runs the kernel's
GIL-free build (dynamics.jit.kernel's `released`) on the next chunk nobody has taken, writing
into its slice of the outputs: the calling thread works along, helper threads from a shared
pool join it. A helper that starts late (its core busy with another process) takes fewer
chunks instead of holding the others up. Chunks hold whole states and every kernel treats the
states of a batch independently, so the answer is the serial one bit for bit. An error in a
chunk reaches the caller as the same error naming the state of the batch that raised it.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

# Joint-states (states x joints) per chunk below which a helper thread costs more than it
# saves: handing work to a waiting thread and back costs as much as a few hundred
# joint-states of ABA (benchmarks/parallel.py measures both).
MIN_CHUNK = 1024
CHUNKS_PER_THREAD = 4

_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()
# a forked child has none of the parent's threads: it makes pools of its own
os.register_at_fork(after_in_child=_pools.clear)


def run_batch(
    kernel: Callable[..., None], constants: Sequence[Any], per_state: Sequence[Any], threads: int
) -> None:
    """kernel(*constants, *per_state) over a batch: each array of `per_state` has the batch
    as its leading axis (inputs and outputs alike); anything else in it (None, numbers, flags)
    goes to every chunk as it is, and a tuple in it (a record) is cut as per_state is; the first
    is q, (B, n). A batch that makes one chunk runs on the arguments as they are."""
    size, joints = per_state[0].shape
    most = threads * CHUNKS_PER_THREAD if threads > 1 else 1
    count = max(1, min(most, size * joints // MIN_CHUNK))
    if count == 1:  # the batch is one chunk, run here: nothing to cut or hand out
        _work(kernel, constants, iter([(0, per_state)]))
        return
    bounds = np.linspace(0, size, count + 1).astype(int)
    chunks = [
        (lo, per_state_part(per_state, slice(lo, hi)))
        for lo, hi in itertools.pairwise(bounds)
    ]
    untaken = iter(chunks)  # next() on a list iterator is atomic under the GIL
    helper_count = min(threads, count) - 1
    helpers = [
        _pool(helper_count).submit(_work, kernel, constants, untaken)
        for _ in range(helper_count)
    ]
    try:
        _work(kernel, constants, untaken)
    finally:
        for helper in helpers:
            helper.result()


def _work(kernel: Callable[..., None], constants: Sequence[Any],
          untaken: Iterator[tuple[int, Sequence[Any]]]) -> None:
    for first, chunk in untaken:
        try:
            kernel(*constants, *chunk)
        except Exception as error:
            raise _naming_the_state(error, kernel, constants, chunk, first) from error


def _naming_the_state(
    error: Exception, kernel: Callable[..., None], constants: Sequence[Any], chunk: Sequence[Any],
    first: int,
) -> Exception:
    """The error again, its message naming the state of the batch that raised it (also its
    `state` attribute): the chunk's states run once more one at a time, up to the first that
    raises the same error."""
    for k in range(chunk[0].shape[0]):
        try:
            kernel(*constants, *per_state_part(chunk, slice(k, k + 1)))
        except type(error):
            where = f"state {first + k} of the batch"
            break
    else:
        where = f"states {first} to {first + chunk[0].shape[0] - 1} of the batch"
    try:
        named = type(error)(f"{error} ({where})")
    except TypeError:  # an error type that does not take a message alone
        named = error
        named.add_note(where)
    named.state = where  # type: ignore[attr-defined]  # an attribute of our own: Robot reads it
    return named


def per_state_part(per_state: Sequence[Any], index: slice | None) -> list[Any]:
    """per_state with each array indexed by `index` on its leading axis, the batch's (a slice
    for a chunk, None, numpy.newaxis, to make one state a batch of one), and so each array of
    a tuple in it (a record's fields); anything else as it is."""
    return [
        x[index] if isinstance(x, np.ndarray)
        else _record_part(x, index) if isinstance(x, tuple)
        else x
        for x in per_state
    ]


def _record_part(record: tuple[Any, ...], index: slice | None) -> tuple[Any, ...]:
    """The record, of its own type (a plain tuple or a namedtuple), with its arrays indexed."""
    fields = [x[index] if isinstance(x, np.ndarray) else x for x in record]
    return tuple(fields) if type(record) is tuple else type(record)(*fields)


def _pool(helpers: int) -> ThreadPoolExecutor:
    """The pool of `helpers` threads, shared by every batch run on helpers + 1 threads."""
    with _pools_lock:
        pool = _pools.get(helpers)
        if pool is None:
            pool = _pools[helpers] = ThreadPoolExecutor(helpers, "robodyn-batch")
        return pool
