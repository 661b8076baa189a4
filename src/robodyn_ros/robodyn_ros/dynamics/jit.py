"""How the kernels are compiled."""

from types import FunctionType

from numba import njit
from numba.core.registry import CPUDispatcher

# Floating-point contraction (FMA) and reassociation, which let LLVM fuse and vectorize; not
# the flags that assume finite values, so NaN and inf still propagate to the results.
FASTMATH = {"contract", "reassoc", "arcp"}

_holding_the_gil = njit(cache=True, fastmath=FASTMATH)
_releasing_the_gil = njit(cache=True, fastmath=FASTMATH, nogil=True)


def kernel(function: FunctionType) -> CPUDispatcher:
    """A kernel called from Python: compiled on first use, cached on disk, in two builds.

    The kernel itself keeps the GIL, for one state: releasing it made each of the many short
    calls of a control or simulation loop wait for the GIL behind the node's other threads
    (sim_node ran at a third of real time). Its `released` build releases the GIL, for
    batches, which are long enough to pay for taking it back: Robot calls it for (B, n)
    states, on several threads at once (robodyn_ros.batch_threads). Each build compiles only
    for what it is called with, so the two add no compilation."""
    holding = _holding_the_gil(function)
    holding.released = _releasing_the_gil(_renamed(function, "released"))
    return holding


def _renamed(function: FunctionType, suffix: str) -> FunctionType:
    """A copy of the function under another qualified name: numba's disk cache keys a
    function by its name and not by the nogil flag, so the two builds need two names."""
    copy = FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__,
        function.__closure__,
    )
    copy.__qualname__ = f"{function.__qualname__}_{suffix}"
    copy.__doc__ = function.__doc__
    return copy


kernel_helper = njit(cache=True, inline="always", fastmath=FASTMATH)
"""A piece of a kernel, inlined into the kernels that call it."""

long_kernel = njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
"""A kernel that runs long (a whole rollout) per call: it releases the GIL, so threads run
several side by side, and one call's dispatch is nothing beside its work. Division by zero
gives inf or NaN as in numpy instead of raising, which spares a test on every division of
the inner loops (6 % of a rollout)."""


routine = njit(cache=True, fastmath=FASTMATH)
"""A long piece of several kernels (an O(N) sweep called once a state), compiled once on its
own and called rather than inlined into each: inlined, it made each kernel that uses it
compile for a minute longer."""
