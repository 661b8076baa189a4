"""Velocities and accelerations of a recorded run: the recorded ones where the bag has them,
else Savitzky–Golay derivatives (a least-squares polynomial over a sliding window, which
smooths while it differentiates; Savitzky & Golay 1964)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.signal import savgol_filter

from robodyn_ros.bag.errors import BagError, BagWarning
from robodyn_ros.bag.reading import RecordedRun

POLYORDER = 3  # cubic: exact for the second derivative of a cubic, within each window
IRREGULAR = 0.1  # sample intervals further than this from their median make a warning


def velocities_and_accelerations(run: RecordedRun, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(q̇, q̈), each (B, n): q̇ as recorded or dq/dt, q̈ = dq̇/dt of the recorded q̇ or
    d²q/dt², over `window` samples (odd, > POLYORDER)."""
    step = sample_interval(run)
    _check_window(window, len(run))
    if run.velocity is not None:
        return run.velocity, _derivative(run.velocity, window, step, 1)
    return _derivative(run.position, window, step, 1), _derivative(run.position, window, step, 2)


def time_derivative(values: np.ndarray, run: RecordedRun, window: int) -> np.ndarray:
    """d/dt of `values` (B, m) sampled at the run's stamps (a floating base's twist), over
    `window` samples, as velocities_and_accelerations differentiates."""
    step = sample_interval(run)
    _check_window(window, len(run))
    return _derivative(values, window, step, 1)


def sample_interval(run: RecordedRun) -> float:
    """The median interval between samples, s; a BagWarning when the intervals vary by more
    than IRREGULAR of it (the filter assumes a uniform one)."""
    intervals = np.diff(run.stamps) * 1e-9
    if intervals.size == 0:
        raise BagError(f"bag {run.bag}, topic '{run.topic}': one sample cannot be differentiated")
    median = float(np.median(intervals))
    spread = np.abs(intervals - median).max() / median
    if spread > IRREGULAR:
        warnings.warn(
            f"bag {run.bag}, topic '{run.topic}': irregular sampling, intervals from "
            f"{intervals.min() * 1e3:.3g} to {intervals.max() * 1e3:.3g} ms around a median "
            f"of {median * 1e3:.3g} ms; derivatives assume the median and are less accurate "
            "near the irregular samples",
            BagWarning, stacklevel=3,
        )
    return median


def _check_window(window: int, samples: int) -> None:
    if window % 2 == 0 or window <= POLYORDER or window > samples:
        raise BagError(
            f"differentiation window must be an odd number of samples above {POLYORDER} and "
            f"at most the {samples} samples; got {window}"
        )


def _derivative(values: np.ndarray, window: int, step: float, order: int) -> np.ndarray:
    return np.ascontiguousarray(
        savgol_filter(values, window, POLYORDER, deriv=order, delta=step, axis=0)
    )
