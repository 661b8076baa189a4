"""One BLAS thread for a block of small linear algebra.

numpy and scipy each load an OpenBLAS that starts a thread per core. On products and
decompositions of a few dozen rows those threads mostly wait for each other, and on a machine
whose cores are busy with other work they wait for a core as well: `robodyn excite`'s
optimisation (SLSQP's subproblems, W_bᵀ W_b and its eigenvalues, 69 × 69 on the Panda) took
45 s with them and 5.5 s with one on two busy cores. `one_blas_thread` sets every OpenBLAS the
process has loaded to one thread for the block and restores each one's count after, through
OpenBLAS's own get and set functions (as threadpoolctl does). Where none can be found (another
BLAS, a platform without /proc/self/maps) it changes nothing.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

_MAPS = Path("/proc/self/maps")
_SUFFIXES = ("", "64_", "_64_")  # the symbol suffixes of OpenBLAS's builds (ILP64: 64_)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Every loaded OpenBLAS runs one thread inside the block; each one's count is restored
    after."""
    controls = _thread_controls()
    counts = [get() for get, _ in controls]
    for _, set_threads in controls:
        set_threads(1)
    try:
        yield
    finally:
        for (_, set_threads), count in zip(controls, counts, strict=True):
            set_threads(count)


def _thread_controls() -> list[tuple[Callable[[], int], Callable[[int], None]]]:
    """(get, set) of the thread count of each OpenBLAS mapped into the process."""
    try:
        maps = _MAPS.read_text()
    except OSError:
        return []
    paths = sorted({line.split()[-1] for line in maps.splitlines()
                    if "openblas" in line.rsplit("/", 1)[-1] and ".so" in line})
    controls = []
    for path in paths:
        library = ctypes.CDLL(path)  # already loaded: the same handle
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in _SUFFIXES:
                get = getattr(library, f"{prefix}_get_num_threads{suffix}", None)
                set_threads = getattr(library, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and set_threads is not None:
                    get.restype, set_threads.argtypes = ctypes.c_int, [ctypes.c_int]
                    controls.append((get, set_threads))
                    break
            else:
                continue
            break
    return controls
