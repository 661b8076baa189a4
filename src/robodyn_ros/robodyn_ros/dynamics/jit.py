"""How the kernels are compiled."""

from numba import njit

# Floating-point contraction (FMA) and reassociation, which let LLVM fuse and vectorize; not
# the flags that assume finite values, so NaN and inf still propagate to the results.
FASTMATH = {"contract", "reassoc", "arcp"}

kernel = njit(cache=True, nogil=True, fastmath=FASTMATH)
"""A kernel called from Python: compiled on first use, cached on disk. It releases the GIL,
so threads run kernels on every core at once (the threads backend of robodyn_ros.parallel)."""

kernel_helper = njit(cache=True, inline="always", fastmath=FASTMATH)
"""A piece of a kernel, inlined into the kernels that call it."""
