"""PNG plots of an analysis over time: the torque residual of each joint, cond(M), energy and,
per frame, the translational and rotational inertia it presents. Long runs are drawn from
every k-th sample (at most MAX_POINTS). Every axis carries its SI unit; the residual and the
energy take their y-range from the bulk of the samples (plotting.set_robust_ylim), with the
Savitzky–Golay edge samples shaded and left out of it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from robodyn_ros.bag.analysis import Analysis, FrameMeasures
from robodyn_ros.figures.plotting import (
    axis_label,
    edge_samples,
    joint_unit,
    mark_edges,
    pyplot,
    saved,
    set_robust_ylim,
)
from robodyn_ros.robot import Robot

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure

MAX_POINTS = 20_000


def write_plots(folder: str | Path, robot: Robot, analysis: Analysis) -> list[Path]:
    """Each figure of analysis_figures as `<name>.png` in `folder`.

    Args:
        folder: an existing folder.
        robot: the robot analysed (its joints' kinds give the units).
        analysis: the analysis.

    Returns:
        The written paths.
    """
    return [saved(figure, Path(folder) / f"{name}.png")
            for name, figure in analysis_figures(robot, analysis).items()]


def analysis_figures(robot: Robot, analysis: Analysis) -> dict[str, Figure]:
    """The figures of an analysis by file name: "torque_residual" (with efforts),
    "mass_matrix_condition", "energy" and "inertia_eigenvalues_<frame>" per frame.

    Args:
        robot: the robot analysed.
        analysis: the analysis.

    Returns:
        File name (without .png) → figure.
    """
    every = max(1, -(-len(analysis.run) // MAX_POINTS))
    plotted = _Plotted(analysis.run.times[::every], every,
                       edge_samples(len(analysis.run), analysis.window // 2)[::every])
    draws: dict[str, tuple[int, Callable[[np.ndarray, _Plotted], None]]] = {}
    if analysis.residual is not None:
        draws["torque_residual"] = (robot.nv, partial(_residual, robot=robot, analysis=analysis))
    draws["mass_matrix_condition"] = (1, partial(_condition, analysis=analysis))
    draws["energy"] = (1, partial(_energy, analysis=analysis))
    for measures in analysis.frames:
        draws[f"inertia_eigenvalues_{measures.frame}"] = (2, partial(_inertia, measures=measures))
    return {name: _figure(panels, draw, plotted) for name, (panels, draw) in draws.items()}


class _Plotted(NamedTuple):
    """The plotted samples: times t (k,), the stride `every` from the run's samples and
    `edge` (k,), which of them are derivative edge samples."""

    t: np.ndarray
    every: int
    edge: np.ndarray


def _figure(panels: int, draw: Callable[[np.ndarray, _Plotted], None],
            plotted: _Plotted) -> Figure:
    """A figure of `panels` stacked axes sharing time, drawn by `draw`, its legend (the
    entries of every panel, once each) outside on the right."""
    figure: Figure
    figure, axes = pyplot().subplots(panels, 1, figsize=(11, max(4.5, 1.3 * panels + 1.2)),
                                     sharex=True, squeeze=False, layout="constrained")
    draw(axes[:, 0], plotted)
    axes[-1, 0].set_xlabel(axis_label("time", "s"))
    entries: dict[str, Artist] = {}
    for ax in axes[:, 0]:
        ax.grid(alpha=0.3)
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:
        figure.legend(list(entries.values()), list(entries), loc="outside right upper",
                      fontsize=8)
    return figure


def _residual(axes: np.ndarray, plotted: _Plotted, robot: Robot, analysis: Analysis) -> None:
    """A panel per joint: measured effort - inverse dynamics, the edges of q̈ shaded."""
    rms = analysis.rms_residual()  # raises without a residual
    assert analysis.residual is not None
    t, bulk = plotted.t, ~plotted.edge
    for k, (ax, name) in enumerate(zip(axes, analysis.joint_names, strict=True)):
        unit = joint_unit("effort", robot.model.joint_kinds[k])
        line = ax.plot(t, analysis.residual[:: plotted.every, k], lw=0.6, color="tab:blue")[0]
        mark_edges(ax, t, plotted.edge)
        set_robust_ylim(ax, [line], bulk)
        ax.set_ylabel(axis_label("residual", unit), fontsize=8)
        ax.set_title(name, loc="left", fontsize=8)
        ax.set_title(f"RMS {rms[k]:.3g} {unit}", loc="right", fontsize=8)
    axes[0].figure.suptitle("torque residual: measured effort - inverse dynamics", fontsize=10)


def _condition(panels: np.ndarray, plotted: _Plotted, analysis: Analysis) -> None:
    axes = panels[0]
    axes.semilogy(plotted.t, analysis.mass_matrix_condition[:: plotted.every], lw=0.8)
    axes.set_ylabel(axis_label("cond(M)", "-"))
    axes.set_title(f"condition number of the joint-space inertia M ({analysis.mass_matrix_method})")


def _energy(panels: np.ndarray, plotted: _Plotted, analysis: Analysis) -> None:
    """Kinetic, potential and total energy; the edges shaded where q̇ is differentiated."""
    axes = panels[0]
    every = plotted.every
    kinetic, potential = analysis.kinetic_energy[::every], analysis.potential_energy[::every]
    lines = [axes.plot(plotted.t, values, lw=0.8, label=label)[0]
             for label, values in (("kinetic", kinetic), ("potential", potential),
                                   ("total", kinetic + potential))]
    differentiated = analysis.run.velocity is None
    if differentiated:
        mark_edges(axes, plotted.t, plotted.edge)
    set_robust_ylim(axes, lines, ~plotted.edge if differentiated else None)
    axes.set_ylabel(axis_label("energy", "J"))
    axes.set_title("kinetic and potential energy")


def _inertia(axes: np.ndarray, plotted: _Plotted, measures: FrameMeasures) -> None:
    """The translational inertia's eigenvalues (kg) above the rotational inertia's (kg·m²)."""
    panels = ((axes[0], measures.translational_inertia, "mass", "kg", "translational"),
              (axes[1], measures.rotational_inertia, "inertia", "kg·m²", "rotational"))
    for ax, eigenvalues, quantity, unit, kind in panels:
        shown = eigenvalues[:: plotted.every]
        for k, which in enumerate(("smallest", "middle", "largest")):
            ax.semilogy(plotted.t, np.where(np.isfinite(shown[:, k]), shown[:, k], np.nan),
                        lw=0.8, color=f"C{k}", label=f"{which} eigenvalue")
        ax.set_ylabel(axis_label(quantity, unit))
        ax.set_title(f"{kind}: eigenvalues of the inverse of Λ⁻¹'s {kind} block", loc="left",
                     fontsize=9)
    axes[0].figure.suptitle(f"inertia that {measures.frame} presents (operational space)",
                            fontsize=10)
