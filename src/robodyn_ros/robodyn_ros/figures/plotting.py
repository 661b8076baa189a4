"""The rules every PNG plot of the package follows: SI units on every axis, joint limits drawn
as lines, and y-ranges set by the bulk of the data, the few samples beyond it marked at the
edge they cross instead of setting the range; the edge samples of a numerical derivative
shaded and left out of that bulk.

Each rule marks what it draws with a gid (LIMIT, CLIPPED, EDGE, START, TARGET), so that a
figure can be checked for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

BULK = (0.5, 99.5)
"""The percentiles of the data that span its bulk."""
MARGIN = 0.15
"""Share of the bulk's span left free above and below it."""
NEAR_LIMIT = 0.25
"""A limit closer to the data than this share of the joint's range is brought into view."""
LIMIT, CLIPPED, EDGE, START, TARGET = "limit", "clipped", "edge", "start", "target"
UNITS = {
    "position": {"revolute": "rad", "continuous": "rad", "prismatic": "m"},
    "velocity": {"revolute": "rad/s", "continuous": "rad/s", "prismatic": "m/s"},
    "effort": {"revolute": "N·m", "continuous": "N·m", "prismatic": "N"},
}
"""The SI unit of a joint quantity, by joint kind (model.JOINT_KINDS)."""


def pyplot() -> ModuleType:
    """matplotlib's pyplot on the Agg backend: files only, no display needed."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as module

    return module


def saved(figure: Figure, path: Path, dpi: int = 110) -> Path:
    """Write `figure` to `path` as a PNG and free it.

    Returns:
        path.
    """
    figure.savefig(path, dpi=dpi)
    pyplot().close(figure)
    return path


def axis_label(quantity: str, unit: str) -> str:
    """"quantity [unit]", the label of every axis ("-" for a pure number)."""
    return f"{quantity} [{unit}]"


def joint_unit(quantity: str, kind: str) -> str:
    """The SI unit of a joint's "position", "velocity" or "effort".

    Args:
        quantity: a key of UNITS.
        kind: the joint's kind (model.JOINT_KINDS).

    Raises:
        KeyError: an unknown quantity or kind.
    """
    return UNITS[quantity][kind]


ROW_KINDS = {"floating": ("prismatic",) * 3 + ("revolute",) * 3,
             "planar": ("prismatic", "prismatic", "revolute")}
"""The single-DOF kind each velocity row of a multi-DOF joint moves like: a linear row like a
prismatic joint's, an angular one like a revolute's."""


def row_units(quantity: str, joint_kinds: Sequence[str]) -> list[str]:
    """The SI unit of a "velocity" or "effort" on each velocity row of joints of these kinds
    (model.joint_kinds, a multi-DOF joint's kind on each of its rows).

    Raises:
        KeyError: an unknown quantity or kind.
    """
    units: list[str] = []
    while len(units) < len(joint_kinds):
        kind = joint_kinds[len(units)]
        units += [UNITS[quantity][like] for like in ROW_KINDS.get(kind, (kind,))]
    return units


def robust_range(values: np.ndarray, percentiles: tuple[float, float] = BULK,
                 margin: float = MARGIN) -> tuple[float, float]:
    """The span of the bulk of `values` with a margin: from the `percentiles` of the finite
    values, widened by `margin` of that span on each side (a flat bulk by a share of its size).

    Args:
        values: any shape; NaN and inf are left out.
        percentiles: (low, high), 0–100.
        margin: share of the span added on each side.

    Returns:
        (low, high), low < high; (-1, 1) without a finite value.
    """
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return -1.0, 1.0
    low, high = (float(value) for value in np.percentile(finite, percentiles))
    span = high - low if high > low else max(abs(high), 1.0) * 0.1
    return low - margin * span, high + margin * span


def set_robust_ylim(axes: Axes, lines: Sequence[Line2D], bulk: np.ndarray | None = None,
                    percentiles: tuple[float, float] = BULK) -> tuple[float, float]:
    """Set the y-range of `axes` from the bulk of the drawn `lines` (robust_range of their
    samples where `bulk` is true) and mark every sample beyond it with a triangle at the edge
    it crosses (gid CLIPPED, in the legend as "beyond the axis").

    Args:
        axes: where the lines are drawn.
        lines: the lines whose data set the range.
        bulk: (samples,) bool, which samples count; None: all.
        percentiles: see robust_range.

    Returns:
        The (low, high) set.
    """
    ys = [np.asarray(line.get_ydata(), dtype=float) for line in lines]
    chosen = [y if bulk is None else y[bulk] for y in ys]
    low, high = robust_range(np.concatenate(chosen) if chosen else np.empty(0), percentiles)
    axes.set_ylim(low, high)
    beyond = [(np.asarray(line.get_xdata(), dtype=float), y) for line, y in zip(lines, ys,
                                                                              strict=True)]
    label = "beyond the axis"
    edges: tuple[tuple[float, str, Callable[[np.ndarray], np.ndarray]], ...] = (
        (high, "^", lambda y: y > high), (low, "v", lambda y: y < low))
    for edge, marker, outside in edges:
        times = np.concatenate([x[outside(y)] for x, y in beyond]) if beyond else np.empty(0)
        if times.size:
            axes.plot(times, np.full(times.size, edge), marker, color="black", ms=4,
                      ls="none", clip_on=False, gid=CLIPPED, label=label, zorder=5)
            label = "_beyond the axis"
    return low, high


def edge_samples(samples: int, half_window: int) -> np.ndarray:
    """(samples,) bool: the first and last `half_window` samples, where a Savitzky–Golay
    derivative is extrapolated from a one-sided fit rather than centred."""
    edge = np.zeros(samples, dtype=bool)
    edge[:half_window] = True
    edge[max(samples - half_window, 0):] = True
    return edge


def mark_edges(axes: Axes, t: np.ndarray, edge: np.ndarray) -> None:
    """Shade the leading and trailing runs of `edge` (gid EDGE, in the legend as
    "derivative edge").

    Args:
        axes: the axes.
        t: (samples,) the plotted times.
        edge: (samples,) bool, edge_samples of the plotted samples.
    """
    inside = np.flatnonzero(~edge)
    if inside.size == 0:
        axes.axvspan(t[0], t[-1], color="0.5", alpha=0.2, gid=EDGE, label="derivative edge")
        return
    spans = [(t[0], t[inside[0]]) if edge[0] else None,
             (t[inside[-1]], t[-1]) if edge[-1] else None]
    label = "derivative edge"
    for span in spans:
        if span is not None:
            axes.axvspan(*span, color="0.5", alpha=0.2, lw=0, gid=EDGE, label=label)
            label = "_derivative edge"


def draw_limits(axes: Axes, lower: float, upper: float, unit: str,
                data: tuple[float, float]) -> None:
    """Draw a joint's finite limits as dashed red lines (gid LIMIT, in the legend as
    "limit") and set the y-range to the data's (low, high), widened to each limit within
    NEAR_LIMIT of the joint's range; the limits are written above the axes, with those left
    out of view said so.

    Args:
        axes: the axes.
        lower, upper: the joint's limits (±inf: none).
        unit: their unit.
        data: (low, high) of the data, e.g. robust_range's.
    """
    low, high = data
    near = NEAR_LIMIT * (upper - lower) if np.isfinite(upper - lower) else 0.0
    label = "limit"
    off_view = []
    for side, limit, is_near in (("lower", lower, low - lower <= near),
                                 ("upper", upper, upper - high <= near)):
        if not np.isfinite(limit):
            continue
        axes.axhline(limit, color="tab:red", ls="--", lw=1.0, gid=LIMIT, label=label)
        label = "_limit"
        if is_near:
            span = max(high, limit) - min(low, limit)
            low, high = min(low, limit - 0.05 * span), max(high, limit + 0.05 * span)
        else:
            off_view.append(side)
    axes.set_ylim(low, high)
    if np.isfinite(lower) or np.isfinite(upper):
        note = f"limits {lower:.3g} … {upper:.3g} {unit}"
        if off_view:
            note += f" ({' and '.join(off_view)} out of view)"
        axes.set_title(note, loc="right", fontsize=7, color="tab:red")


__all__ = ["BULK", "CLIPPED", "EDGE", "LIMIT", "MARGIN", "NEAR_LIMIT", "START", "TARGET",
           "UNITS", "axis_label", "draw_limits", "edge_samples", "joint_unit", "mark_edges",
           "pyplot", "robust_range", "saved", "set_robust_ylim"]
