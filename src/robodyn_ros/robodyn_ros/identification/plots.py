"""PNG plots of an identification: per joint, the measured efforts of a run beside those the
description and the identified model predict, and under them the residuals (measured −
predicted) of both, their RMS over the whole run above them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from robodyn_ros.figures import plotting
from robodyn_ros.identification.from_bag import BagIdentification, RunEquations

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure

MODELS = (("description", "tab:blue", "--"), ("identified", "tab:orange", "-"))
"""The predictions drawn: name (a key of BagIdentification.predicted_efforts), colour, line."""


def write_identification_plots(folder: Path, result: BagIdentification) -> list[Path]:
    """efforts_fit.png and, with a validation run, efforts_validation.png (efforts_figure of
    each run) in `folder`.

    Args:
        folder: an existing folder.
        result: the identification.

    Returns:
        The written paths.
    """
    runs = {"fit": result.fit}
    if result.validation is not None:
        runs["validation"] = result.validation
    return [plotting.saved(efforts_figure(result, run, label), folder / f"efforts_{label}.png",
                           dpi=100) for label, run in runs.items()]


def efforts_figure(result: BagIdentification, run: RunEquations, label: str) -> Figure:
    """Per joint two panels sharing time: the measured effort with the description's and the
    identified model's predictions, and under it their residuals (measured − predicted), the
    y-range of each set by the bulk of its samples, the Savitzky–Golay edge samples shaded.

    Args:
        result: the identification.
        run: one of its runs (result.fit or result.validation).
        label: what the run is, for the title ("fit", "validation").

    Returns:
        The figure.
    """
    names, kinds = result.robot.joint_names, result.robot.model.joint_kinds
    figure: Figure
    figure, axes = plotting.pyplot().subplots(
        2 * len(names), 1, figsize=(11, 2.6 * len(names) + 1.2), sharex=True,
        layout="constrained", gridspec_kw={"height_ratios": [2, 1] * len(names)})
    t = run.run.times[run.shown]
    measured = run.samples.effort
    predicted = result.predicted_efforts(run)
    rms = result.rms_residuals(run)
    edge = plotting.edge_samples(len(run.run), result.options.window // 2)[run.shown]
    units = plotting.row_units("effort", kinds)
    for k, (joint, unit) in enumerate(zip(names, units, strict=True)):
        efforts, residuals = axes[2 * k], axes[2 * k + 1]
        efforts.plot(t, measured[:, k], color="0.55", lw=0.7, label="measured")
        for model, color, style in MODELS:
            efforts.plot(t, predicted[model][:, k], style, color=color, lw=1.0, label=model)
            residuals.plot(t, measured[:, k] - predicted[model][:, k], style, color=color,
                           lw=0.7, label=model)
        for ax, percentiles in ((efforts, (0.0, 100.0)), (residuals, plotting.BULK)):
            plotting.mark_edges(ax, t, edge)
            plotting.set_robust_ylim(ax, ax.get_lines(), ~edge, percentiles)
            ax.grid(alpha=0.3)
        efforts.set_title(joint, loc="left", fontsize=8)
        efforts.set_ylabel(plotting.axis_label("effort", unit), fontsize=8)
        residuals.set_ylabel(plotting.axis_label("residual", unit), fontsize=8)
        residuals.set_title("RMS over the run: " + ", ".join(
            f"{model} {rms[model][k]:.3g} {unit}" for model, _, _ in MODELS),
            loc="right", fontsize=7)
    axes[-1].set_xlabel(plotting.axis_label("time", "s"))
    entries: dict[str, Artist] = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(name, handle)
    figure.legend(list(entries.values()), list(entries), loc="outside lower center",
                  ncol=len(entries), fontsize=8)
    figure.suptitle(f"{label} run ({run.run.bag.name}): measured and predicted efforts, and "
                    "under each joint the residual measured - predicted", fontsize=10)
    return figure
