"""The algorithms: numba kernels over a Model's arrays, one module per family.

The kernels compile on first call and are cached on disk in kernel_cache_dir(), a folder keyed
by the source of every kernel module of the package (jit.py). The single-state C entries
(``state_entry``; constrained dynamics', ``contact_state_entry``, each module imported by
``state_entries()`` or ``contact_state_entries()``) compile, or load from the cache,
each the first time it is used.
"""

import importlib
from functools import cache
from types import ModuleType

from robodyn_ros.dynamics.jit import kernel_cache_dir

ENTRY_MODULE = "state_entry"
CONTACT_ENTRY_MODULE = "contact_state_entry"


@cache
def state_entries() -> ModuleType:
    """The module of single-state C entries (each compiled or loaded on first use)."""
    return importlib.import_module(f"{__name__}.{ENTRY_MODULE}")


@cache
def contact_state_entries() -> ModuleType:
    """The module of constrained dynamics' single-state C entry, as state_entries()."""
    return importlib.import_module(f"{__name__}.{CONTACT_ENTRY_MODULE}")


__all__ = ["contact_state_entries", "kernel_cache_dir", "state_entries"]
