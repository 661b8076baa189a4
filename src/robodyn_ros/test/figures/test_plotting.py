"""The rules every plot follows (robodyn_ros.figures.plotting), on matplotlib figures: a spike does
not set the y-range and is marked where it leaves the axis, derivative edges are shaded and
left out of the range, joint limits are drawn and brought into view when the data come near."""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros.figures.plotting import (
    CLIPPED,
    EDGE,
    LIMIT,
    axis_label,
    draw_limits,
    edge_samples,
    joint_unit,
    mark_edges,
    pyplot,
    robust_range,
    set_robust_ylim,
)

from helpers.figures import drawn

SAMPLES = 2000


@pytest.fixture
def axes():
    figure, axes = pyplot().subplots()
    yield axes
    pyplot().close(figure)


def noise(spike_at: int, spike: float = -22.0) -> tuple[np.ndarray, np.ndarray]:
    """Times and a residual of σ = 0.2 with one spike."""
    t = np.linspace(0.0, 4.0, SAMPLES)
    y = np.random.default_rng(0).normal(0.0, 0.2, SAMPLES)
    y[spike_at] = spike
    return t, y


def bulk_share(axes, y: np.ndarray) -> float:
    """The share of the y-axis that the 1st–99th percentiles of y span."""
    low, high = axes.get_ylim()
    return float(np.diff(np.percentile(y, [1, 99]))[0] / (high - low))


def clipped_times(axes) -> np.ndarray:
    marks = drawn(axes, CLIPPED)
    return np.concatenate([line.get_xdata() for line in marks]) if marks else np.empty(0)


@pytest.mark.parametrize("spike_at", [0, SAMPLES // 2], ids=["edge", "inside"])
def test_a_spike_does_not_set_the_range_and_is_marked(axes, spike_at) -> None:
    t, y = noise(spike_at)
    edge = edge_samples(SAMPLES, 5)
    line = axes.plot(t, y)[0]
    mark_edges(axes, t, edge)
    set_robust_ylim(axes, [line], ~edge)
    assert bulk_share(axes, y) > 0.6, axes.get_ylim()
    assert axes.get_ylim()[0] > -2.0
    assert t[spike_at] in clipped_times(axes)
    assert "beyond the axis" in axes.get_legend_handles_labels()[1]


def test_edge_samples_are_left_out_of_the_range_however_many(axes) -> None:
    """A short run: its 10 edge samples (5 %) all spike, more than the percentiles drop;
    left out as edges, they still do not set the range."""
    t, y = noise(0)
    t, y = t[:200], y[:200]
    edge = edge_samples(200, 5)
    y[edge] = np.linspace(-22.0, 22.0, 10)
    set_robust_ylim(axes, [axes.plot(t, y)[0]], ~edge)
    assert bulk_share(axes, y[~edge]) > 0.6, axes.get_ylim()
    assert sorted(clipped_times(axes)) == sorted(t[edge])


def test_without_the_rule_the_spike_sets_the_range(axes) -> None:
    """The check above fails on matplotlib's own range: the test sees the flat line."""
    t, y = noise(0)
    axes.plot(t, y)
    assert bulk_share(axes, y) < 0.1


def test_edges_are_shaded_and_left_out(axes) -> None:
    t = np.linspace(0.0, 1.0, 100)
    edge = edge_samples(100, 5)
    assert edge[:5].all() and edge[-5:].all() and not edge[5:-5].any()
    mark_edges(axes, t, edge)
    spans = drawn(axes, EDGE)
    assert len(spans) == 2
    xs = sorted(tuple(np.round(span.get_x() + np.array([0.0, span.get_width()]), 9))
                for span in spans)
    assert xs == [(0.0, round(t[5], 9)), (round(t[94], 9), 1.0)]


def test_robust_range_of_a_flat_or_empty_signal() -> None:
    low, high = robust_range(np.full(10, 3.0))
    assert low < 3.0 < high
    assert robust_range(np.array([np.nan, np.inf])) == (-1.0, 1.0)


def limit_lines(axes) -> list[float]:
    return sorted(line.get_ydata()[0] for line in drawn(axes, LIMIT))


def test_a_near_limit_is_in_view_and_a_far_one_is_named(axes) -> None:
    """Data from -2.5 to -2.0 rad in limits ±2.9: the lower limit in view, the upper said
    out of view above the axes."""
    draw_limits(axes, -2.9, 2.9, "rad", (-2.5, -2.0))
    assert limit_lines(axes) == [-2.9, 2.9]
    low, high = axes.get_ylim()
    assert low < -2.9 and high < 0.0
    assert "upper out of view" in axes.get_title(loc="right")
    assert "rad" in axes.get_title(loc="right")


def test_no_limit_lines_for_a_continuous_joint(axes) -> None:
    draw_limits(axes, -np.inf, np.inf, "rad", (-1.0, 1.0))
    assert limit_lines(axes) == []
    assert axes.get_ylim() == (-1.0, 1.0)


def test_units_by_joint_kind() -> None:
    assert joint_unit("effort", "revolute") == "N·m"
    assert joint_unit("effort", "prismatic") == "N"
    assert joint_unit("position", "continuous") == "rad"
    assert axis_label("q", "rad") == "q [rad]"
    with pytest.raises(KeyError):
        joint_unit("effort", "planar")
