"""The array types the kernels take and give, as type checkers see them (numba reads no
annotations: it types each kernel from the arrays it is called with)."""

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

FloatArray: TypeAlias = npt.NDArray[np.float64]
"""A float64 array: a state, a batch of states, or what a kernel writes."""

IntArray: TypeAlias = npt.NDArray[np.int64]
"""An int64 array of indices."""

BoolArray: TypeAlias = npt.NDArray[np.bool_]
"""A boolean array of flags."""

PackedTree: TypeAlias = FloatArray
"""The tree as tree.pack_tree packs it, one row per joint: what every kernel takes first."""
