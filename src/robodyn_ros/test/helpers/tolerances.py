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
# Batch vs single state: the batch kernel and the single-state C entry are two builds of one
# algorithm, and a routine both call (task_space.articulated_task_inverse, forward_dynamics.
# aba_state, ...) is linked into each build as a copy of its own, optimised there with fastmath
# (contraction, reassociation), so the copies differ in their last bits; which copy a call runs
# is bound when the process loads the builds, so it depends on what the process compiled or
# loaded first (a process that compiles a kernel over a routine loaded from the cache runs the
# routine's own build in the kernel and a C entry's copy in the C entries). The two agree to
# BATCH_RTOL where they compute directly, and to κ × BATCH_RTOL where they solve with a matrix
# of condition number κ, which magnifies the difference of two roundings as it magnifies any
# perturbation: κ(M) for q̈, M⁻¹ and Λ⁻¹ = J M⁻¹ Jᵀ (measured on chain128 in that order: Λ⁻¹
# 2e-13 apart, κ(M) 2.6e6), and κ(M) κ(Λ⁻¹) for Λ = (Λ⁻¹)⁻¹ (a relative change δ in Λ⁻¹ changes
# Λ by up to κ(Λ⁻¹) δ; chain32: Λ⁻¹ 7e-15 apart, Λ 2.7e-13, κ(Λ⁻¹) 362).
BATCH_RTOL = 1e-14
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


# A backend whose workers are other processes may compile the kernels there itself, and what a
# kernel computes can differ in its last bits with the order the process compiled and loaded
# the kernels in (which copy of a routine its calls run, as for BATCH_RTOL); the parallel
# issue's bound for those backends.
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
