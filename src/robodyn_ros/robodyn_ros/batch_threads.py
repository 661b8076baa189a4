"""A kernel over a batch of states on several threads at once.

The batch is cut into one contiguous chunk per thread and each thread runs the kernel's
GIL-free build (dynamics.jit.kernel's `released`) on its chunk, writing into its slice of the
outputs: the calling thread takes the first chunk, a shared pool of helper threads the others.
Chunks hold whole states and every kernel treats the states of a batch independently, so the
answer is the serial one bit for bit.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# Joint-states (states x joints) per thread below which a helper thread costs more than it
# saves: handing a chunk to a waiting thread and back takes about 30 µs, and 1024 joint-states
# are about 100 µs of ABA (150 states of a 7-joint arm).
MIN_CHUNK = 1024

_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def run_batch(
    kernel: Callable[..., None], constants: Sequence, per_state: Sequence, threads: int
) -> None:
    """kernel(*constants, *per_state) over a batch: each array of `per_state` has the batch
    as its leading axis (inputs and outputs alike); anything else in it (None, numbers, flags)
    goes to every chunk as it is; the first is q, (B, n)."""
    size, joints = per_state[0].shape
    parts = max(1, min(threads, size * joints // MIN_CHUNK))
    bounds = np.linspace(0, size, parts + 1).astype(int)
    chunks = [_chunk(per_state, lo, hi) for lo, hi in itertools.pairwise(bounds)]
    if parts == 1:
        kernel(*constants, *chunks[0])
        return
    helpers = [_pool(parts - 1).submit(kernel, *constants, *chunk) for chunk in chunks[1:]]
    try:
        kernel(*constants, *chunks[0])
    finally:
        for helper in helpers:
            helper.result()


def _chunk(per_state: Sequence, lo: int, hi: int) -> tuple:
    return tuple(x[lo:hi] if isinstance(x, np.ndarray) else x for x in per_state)


def _pool(helpers: int) -> ThreadPoolExecutor:
    """The pool of `helpers` threads, shared by every batch cut into helpers + 1 chunks."""
    with _pools_lock:
        pool = _pools.get(helpers)
        if pool is None:
            pool = _pools[helpers] = ThreadPoolExecutor(helpers, "robodyn-batch")
        return pool
