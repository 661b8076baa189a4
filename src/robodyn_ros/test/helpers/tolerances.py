"""How the tests compare robodyn's answers with a reference.

`assert_close`: max |robodyn − reference| ≤ RTOL × max(max |reference|, FLOOR), i.e. relative
to the largest magnitude of the reference (not elementwise, so small entries of a big matrix are
judged on the matrix's scale), with an absolute floor so that references that are near zero (a
gravity torque, a potential energy) are held to RTOL × FLOOR = 1e-12 in SI units rather than to
a meaningless relative bound. `close`: the same with a floor of 1. `assert_as_serial`: a
parallel backend's answer against the serial one.
"""

from __future__ import annotations

import numpy as np

RTOL = 1e-9
FLOOR = 1e-3
BATCH_RTOL = 1e-14  # batch vs single state: same arithmetic, fused differently at most
# q̈ solves M q̈ = τ − h: it inherits the condition number κ(M) of the problem, so the reference
# itself is known only to ≈ κ·1e-16 relative (Pinocchio's own ABA is 4e-9 off the exact q̈ on
# the 256-joint chain, κ ≈ 3e7). The forward-error tolerance RTOL holds up to κ = KAPPA_REF and
# grows with κ beyond (only chain256); the backward error (τ residual) is held to RTOL always.
KAPPA_REF = 1e6


def assert_close(actual, expected, what: str, rtol: float = RTOL, scale: float = 1.0) -> None:
    """max |actual − expected| ≤ rtol × scale × max(max |expected|, FLOOR), shapes equal."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} ≠ {expected.shape}"
    bound = rtol * scale * max(float(np.max(np.abs(expected))), FLOOR)
    error = float(np.max(np.abs(actual - expected)))
    assert error <= bound, f"{what}: max |error| {error:.3e} > bound {bound:.3e}"


def close(ours, reference) -> None:
    """max |ours − reference| ≤ RTOL × max(max |reference|, 1), entry by entry."""
    reference = np.asarray(reference)
    np.testing.assert_allclose(ours, reference, rtol=0,
                               atol=RTOL * max(np.abs(reference).max(), 1.0))


# A backend whose workers are other processes may compile the kernels there itself, and the
# machine code of a kernel can differ in its last bits with the order the kernels compiled in
# (LLVM inlines a routine into some callers); the parallel issue's bound for those backends.
OTHER_PROCESSES_TOLERANCE = 1e-12


def assert_as_serial(answer: np.ndarray, expected: np.ndarray, backend: str, what: str,
                     tolerance: float = OTHER_PROCESSES_TOLERANCE) -> None:
    """A backend's answer equals the serial one: bit for bit in this process (serial,
    threads), to `tolerance` of its largest entry from other processes."""
    assert answer.shape == expected.shape, f"{backend}: {what} has shape {answer.shape}"
    if backend in ("serial", "threads"):
        assert np.array_equal(answer, expected), f"{backend}: {what} differs from serial"
        return
    error = np.max(np.abs(answer - expected)) / max(np.max(np.abs(expected)), 1e-300)
    assert error <= tolerance, f"{backend}: {what} differs by {error:.1e}"
