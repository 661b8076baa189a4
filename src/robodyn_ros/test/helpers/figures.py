"""Reading matplotlib figures in the plot tests: what their legends say and which artists a
plotting rule drew (robodyn_ros.figures.plotting marks them with a gid)."""

from __future__ import annotations


def legend_labels(figure) -> set[str]:
    """Every entry of the figure's legends and of its axes' legends."""
    legends = [*figure.legends, *(axes.get_legend() for axes in figure.axes)]
    return {text.get_text() for legend in legends if legend is not None
            for text in legend.get_texts()}


def drawn(axes, gid: str) -> list:
    """The lines and patches of `axes` with that gid."""
    return [artist for artist in [*axes.get_lines(), *axes.patches] if artist.get_gid() == gid]
