"""PNG plots of an analysis over time: torque residual per joint, cond(M), energy and the
eigenvalues of Λ per frame. Long runs are drawn from every k-th sample (at most MAX_POINTS)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from robodyn_ros.bag.analysis import Analysis, FrameMeasures

if TYPE_CHECKING:
    from matplotlib.axes import Axes

MAX_POINTS = 20_000


def write_plots(folder: str | Path, analysis: Analysis) -> list[Path]:
    """The PNGs written into `folder`."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    folder = Path(folder)
    every = max(1, -(-len(analysis.run) // MAX_POINTS))
    t = analysis.run.times[::every]
    written = []
    for name, draw in _figures(analysis).items():
        figure, axes = pyplot.subplots(figsize=(10, 4.5), layout="constrained")
        draw(axes, t, every)
        axes.set_xlabel("time, s")
        axes.grid(alpha=0.3)
        path = folder / f"{name}.png"
        figure.savefig(path, dpi=110)
        pyplot.close(figure)
        written.append(path)
    return written


def _figures(analysis: Analysis) -> dict[str, Callable[..., None]]:
    """File name → a function drawing that figure on (axes, times, stride)."""
    figures: dict[str, Callable[..., None]] = {
        "mass_matrix_condition": lambda ax, t, k: _condition(ax, t, k, analysis),
        "energy": lambda ax, t, k: _energy(ax, t, k, analysis),
    }
    if analysis.residual is not None:
        figures["torque_residual"] = lambda ax, t, k: _residual(ax, t, k, analysis)
    for measures in analysis.frames:
        figures[f"inertia_eigenvalues_{measures.frame}"] = (
            lambda ax, t, k, m=measures: _eigenvalues(ax, t, k, m)
        )
    return figures


def _residual(axes: Axes, t: np.ndarray, every: int, analysis: Analysis) -> None:
    rms = analysis.rms_residual()  # raises without a residual
    assert analysis.residual is not None
    for k, name in enumerate(analysis.joint_names):
        axes.plot(t, analysis.residual[::every, k], lw=0.6, label=f"{name} (RMS {rms[k]:.3g})")
    axes.set_ylabel("effort - inverse dynamics, N·m | N")
    axes.set_title("torque residual per joint")
    axes.legend(fontsize=7, ncol=2)


def _condition(axes: Axes, t: np.ndarray, every: int, analysis: Analysis) -> None:
    axes.semilogy(t, analysis.mass_matrix_condition[::every], lw=0.8)
    axes.set_ylabel("cond(M)")
    axes.set_title(f"condition number of the joint-space inertia M ({analysis.mass_matrix_method})")


def _energy(axes: Axes, t: np.ndarray, every: int, analysis: Analysis) -> None:
    kinetic, potential = analysis.kinetic_energy[::every], analysis.potential_energy[::every]
    axes.plot(t, kinetic, lw=0.8, label="kinetic")
    axes.plot(t, potential, lw=0.8, label="potential")
    axes.plot(t, kinetic + potential, lw=0.8, label="total")
    axes.set_ylabel("energy, J")
    axes.set_title("kinetic and potential energy")
    axes.legend(fontsize=8)


def _eigenvalues(axes: Axes, t: np.ndarray, every: int, measures: FrameMeasures) -> None:
    eigenvalues = measures.inertia_eigenvalues[::every]
    for k in range(eigenvalues.shape[1]):
        axes.semilogy(t, np.where(np.isfinite(eigenvalues[:, k]), eigenvalues[:, k], np.nan),
                      lw=0.8, label=f"λ{k}")
    axes.set_ylabel("eigenvalues of Λ (kg | kg·m²)")
    axes.set_title(f"operational-space inertia Λ of {measures.frame}")
    axes.legend(fontsize=8, ncol=3)
