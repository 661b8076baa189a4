"""The types of the C extension _state_call.c: StateCall and all_finite."""

from typing import Any

import numpy as np
import numpy.typing as npt

class StateCall:
    """A compiled kernel's C entry called on one state: its answer, or None where the call
    takes the Robot's general path (arguments that are not `inputs` float64 vectors of the
    right length, or an answer that is not finite). With a `record` the answer is that tuple
    subclass of views of the answer's parts, which its caller casts to."""

    def __new__(
        cls,
        address: int,
        tree: npt.NDArray[np.float64],
        constants: npt.NDArray[np.float64],
        inputs: int,
        out_shape: tuple[int, ...],
        first_extra: int = 0,
        symmetric: bool = False,
        record: type[tuple[Any, ...]] | None = None,
    ) -> StateCall: ...
    def __call__(self, *states: object) -> npt.NDArray[np.float64] | None: ...

def all_finite(*arrays: object) -> bool | None:
    """Whether every value of every array is finite; None when an argument is not a
    C-contiguous native float64 ndarray."""
