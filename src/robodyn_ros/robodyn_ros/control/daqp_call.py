"""DAQP's C entry point ``daqp_quadprog`` called from a kernel, without Python in between.

The daqp wheel's extension module exports DAQP's C functions. Its ``daqp_quadprog`` is
registered with LLVM under its C name when this module is imported, so a kernel that calls
it holds only the name: cached builds link to the address of the running process. The
problem and result structs (DAQP's api.h and types.h) are numpy records laid out as C lays
them out (``align=True``), their pointers set to the kernel's arrays at each call; the
settings are DAQP's defaults (a NULL pointer), as daqp.solve's are. DAQP passes over a
row whose coefficients or bound are NaN and reports the rest solved, so a programme that is
not finite is not handed to it: quadprog answers NOT_FINITE, as for an answer that is not
finite. The layout is DAQP 0.11's
(DAQP_SERIES), which setup.py asks for; another installed series is refused at import
rather than handed structs it may read differently.
"""

import ctypes
from importlib.metadata import version
from typing import Any

import daqp
import numpy as np
import numpy.typing as npt
from llvmlite import binding
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from robodyn_ros.dynamics.arrays import FloatArray
from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.linalg import all_finite

DAQP_SERIES = "0.11."  # the daqp releases whose structs PROBLEM and RESULT lay out
NOT_FINITE = -100  # quadprog's flag for a programme or an answer that is not finite

if not version("daqp").startswith(DAQP_SERIES):
    raise ImportError(
        f"robodyn_ros calls DAQP's C API with the structs of daqp {DAQP_SERIES}x; daqp "
        f"{version('daqp')} is installed (pip install 'daqp=={DAQP_SERIES}*')")

PROBLEM = np.dtype([
    ("n", np.int32), ("m", np.int32), ("ms", np.int32),
    ("H", np.uintp), ("f", np.uintp), ("A", np.uintp), ("bupper", np.uintp),
    ("blower", np.uintp), ("sense", np.uintp), ("break_points", np.uintp),
    ("nh", np.int32), ("problem_type", np.int32)], align=True)
"""DAQPProblem: min ½ xᵀ H x + fᵀ x, blower ≤ A x ≤ bupper (A row-major, a row for each
constraint after the ms simple bounds)."""

RESULT = np.dtype([
    ("x", np.uintp), ("lam", np.uintp), ("fval", np.float64), ("soft_slack", np.float64),
    ("exitflag", np.int32), ("iter", np.int32), ("nodes", np.int32),
    ("solve_time", np.float64), ("setup_time", np.float64)], align=True)
"""DAQPResult: the solution x and multipliers lam (written where the pointers say), the exit
flag and the iterations."""

binding.add_symbol("daqp_quadprog", ctypes.cast(ctypes.CDLL(daqp.__file__).daqp_quadprog,
                                                ctypes.c_void_p).value)
daqp_quadprog = types.ExternalFunction(
    "daqp_quadprog", types.void(types.voidptr, types.voidptr, types.voidptr))


def _pointer(typingctx: Any, address: Any) -> tuple[Any, Any]:
    """An address (an integer: an array's ctypes.data, or 0 for NULL) as a C pointer."""
    def codegen(context: Any, builder: Any, signature: Any, arguments: Any) -> Any:
        return builder.inttoptr(arguments[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


pointer: Any = intrinsic(_pointer)  # called from kernels only


@kernel_helper
def quadprog(H: FloatArray, f: FloatArray, A: FloatArray, upper: FloatArray, lower: FloatArray,
             sense: npt.NDArray[np.int32], x: FloatArray, multipliers: FloatArray,
             problem: npt.NDArray[np.void], result: npt.NDArray[np.void]) -> int:
    """DAQP on min ½ xᵀ H x + fᵀ x, lower ≤ A x ≤ upper (each row's DAQP sense), the
    solution into x and the rows' multipliers into `multipliers`; `problem` and `result` are
    one-record arrays of PROBLEM and RESULT. Returns DAQP's exit flag, or NOT_FINITE for a
    programme or a solution that is not finite (x is then not an answer)."""
    if not (all_finite(H) and all_finite(f) and all_finite(A) and all_finite(upper)
            and all_finite(lower)):
        return NOT_FINITE
    record = problem[0]
    record.n, record.m, record.ms = x.shape[0], A.shape[0], 0
    record.H, record.f, record.A = H.ctypes.data, f.ctypes.data, A.ctypes.data
    record.bupper, record.blower = upper.ctypes.data, lower.ctypes.data
    record.sense, record.break_points = sense.ctypes.data, 0
    record.nh, record.problem_type = 0, 0
    answer = result[0]
    answer.x, answer.lam, answer.exitflag = x.ctypes.data, multipliers.ctypes.data, 0
    daqp_quadprog(pointer(result.ctypes.data), pointer(problem.ctypes.data), pointer(0))
    if not all_finite(x):
        return NOT_FINITE
    return answer.exitflag


__all__ = ["NOT_FINITE", "PROBLEM", "RESULT", "quadprog"]
