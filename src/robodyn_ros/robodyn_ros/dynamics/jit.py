"""How the kernels are compiled."""

from numba import njit

# Floating-point contraction (FMA) and reassociation, which let LLVM fuse and vectorize; not
# the flags that assume finite values, so NaN and inf still propagate to the results.
FASTMATH = {"contract", "reassoc", "arcp"}

kernel = njit(cache=True, fastmath=FASTMATH)
"""A kernel called from Python: compiled on first use, cached on disk. It keeps the GIL:
releasing it (nogil) let the threads backend run on every core, but made each of the many
short calls of a control or simulation loop wait for the GIL behind the node's other threads
(sim_node ran at a third of real time)."""

kernel_helper = njit(cache=True, inline="always", fastmath=FASTMATH)
"""A piece of a kernel, inlined into the kernels that call it."""

long_kernel = njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
"""A kernel that runs long (a whole rollout) per call: it releases the GIL, so threads run
several side by side, and one call's dispatch is nothing beside its work. Division by zero
gives inf or NaN as in numpy instead of raising, which spares a test on every division of
the inner loops (6 % of a rollout)."""
