"""How the kernels are compiled.

Every kernel uses numpy's error model: a division by zero gives inf or NaN instead of raising.
A kernel never raises for arithmetic (a C entry could not pass the exception on, and a batch
would stop at its first bad state); what it computed travels to the facade, which checks that
finite inputs gave finite results and raises the error that names the cause (robodyn_ros.errors).
"""

from numba import njit

# Floating-point contraction (FMA) and reassociation, which let LLVM fuse and vectorize; not
# the flags that assume finite values, so NaN and inf still propagate to the results.
FASTMATH = {"contract", "reassoc", "arcp"}
ERROR_MODEL = "numpy"

kernel = njit(cache=True, fastmath=FASTMATH, nogil=True, error_model=ERROR_MODEL)
"""A kernel called from Python: compiled on first use, cached on disk, releasing the GIL.

Robot calls it for a batch (B, n) on several threads at once (robodyn_ros.batch_threads), and
for one state as a batch of one, so that one build serves both: a second, GIL-holding build
for single states compiled every kernel twice. The many short single-state calls of a control
or simulation loop enter through state_entry's C entries instead, which keep the GIL (taking
it back after each call made sim_node wait behind the node's other threads)."""

kernel_helper = njit(cache=True, inline="always", fastmath=FASTMATH, error_model=ERROR_MODEL)
"""A piece of a kernel, inlined into the kernels that call it."""

long_kernel = njit(cache=True, nogil=True, fastmath=FASTMATH, error_model=ERROR_MODEL)
"""A kernel that runs long (a whole rollout) per call: it releases the GIL, so threads run
several side by side, and one call's dispatch is nothing beside its work."""


routine = njit(cache=True, fastmath=FASTMATH, error_model=ERROR_MODEL)
"""A long piece of several kernels (an O(N) sweep called once a state), compiled once on its
own and called rather than inlined into each: inlined, it made each kernel that uses it
compile for a minute longer. Not for the hot inner loop of an iterative solver: with the
constraint-force sweeps in routines, J-CG ran markedly slower than with them inlined into the
kernel that allocates their arrays (benchmarks/fd_study.py). There a rarely taken branch (a
row on a branching body) can call a routine instead."""
