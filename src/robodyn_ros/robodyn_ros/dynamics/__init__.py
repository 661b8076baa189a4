"""The algorithms: numba kernels over a Model's arrays, one module per family.

Compiled kernels are cached on disk. numba checks a cached kernel only against its own source
file, not against the helpers inlined into it, so the cache folder is keyed by a digest of every
module here (and the numba version): editing any kernel starts a fresh cache. The folder is
``$NUMBA_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/robodyn_ros`` (``~/.cache/robodyn_ros``).

The kernels compile on first call. The single-state C entries (``state_entry``) compile, or
load from the cache, all at once when ``state_entries()`` is first called.
"""

import hashlib
import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import ModuleType

import numba

KERNEL_MODULES = (
    "jit",
    "tree",
    "spatial",
    "linalg",
    "moments",
    "kinematics",
    "inverse_dynamics",
    "inertia_matrix",
    "coriolis",
    "gdahj",
    "inertia_diagonal",
    "recursive_doubling",
    "rnea_columns",
    "factorization",
    "inertia_inverse",
    "forward_dynamics",
    "pivots",
    "energy",
    "task_space",
    "fixed_frame",
    "conjugate_gradient",
    "constraint_system",
    "constraint_iterations",
    "cyclic_reduction",
    "schur",
    "schur_link_frames",
    "rotation",
    "rollout",
)
ENTRY_MODULE = "state_entry"


def kernel_cache_dir() -> Path:
    """The on-disk cache folder for this exact version of the kernels."""
    digest = hashlib.sha256(numba.__version__.encode())
    for module in (*KERNEL_MODULES, ENTRY_MODULE):
        digest.update(Path(__file__).with_name(f"{module}.py").read_bytes())
    base = os.environ.get("NUMBA_CACHE_DIR") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "robodyn_ros"
    )
    return Path(base, f"kernels-{digest.hexdigest()[:16]}")


@contextmanager
def _kernel_cache() -> Iterator[None]:
    """numba caches what is compiled (or decorated, for cfuncs) inside in kernel_cache_dir()."""
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(kernel_cache_dir())
    try:
        yield
    finally:
        numba.config.CACHE_DIR = previous


@cache
def state_entries() -> ModuleType:
    """The module of single-state C entries, compiled or loaded from the cache on first use."""
    with _kernel_cache():
        return importlib.import_module(f"{__name__}.{ENTRY_MODULE}")


with _kernel_cache():
    for _module in KERNEL_MODULES:
        importlib.import_module(f"{__name__}.{_module}")
