"""The algorithms: numba kernels over a Model's arrays, one module per family.

Compiled kernels are cached on disk. numba checks a cached kernel only against its own source
file, not against the helpers inlined into it, so the cache folder is keyed by a digest of every
module here (and the numba version): editing any kernel starts a fresh cache. The folder is
``$NUMBA_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/robodyn_ros`` (``~/.cache/robodyn_ros``).
"""

import hashlib
import importlib
import os
from pathlib import Path

import numba

KERNEL_MODULES = (
    "jit",
    "tree",
    "spatial",
    "moments",
    "kinematics",
    "inverse_dynamics",
    "inertia_matrix",
    "gdahj",
    "inertia_diagonal",
    "recursive_doubling",
    "rnea_columns",
    "factorization",
    "inertia_inverse",
    "forward_dynamics",
    "energy",
    "operational_space",
    "fixed_frame",
    "conjugate_gradient",
    "constraint_forces",
    "schur",
)


def kernel_cache_dir() -> Path:
    """The on-disk cache folder for this exact version of the kernels."""
    digest = hashlib.sha256(numba.__version__.encode())
    for module in KERNEL_MODULES:
        digest.update(Path(__file__).with_name(f"{module}.py").read_bytes())
    base = os.environ.get("NUMBA_CACHE_DIR") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "robodyn_ros"
    )
    return Path(base, f"kernels-{digest.hexdigest()[:16]}")


def _import_kernels() -> None:
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(kernel_cache_dir())
    try:
        for module in KERNEL_MODULES:
            importlib.import_module(f"{__name__}.{module}")
    finally:
        numba.config.CACHE_DIR = previous


_import_kernels()
