"""PNG plots of an identification: per joint, the measured efforts of a run beside those the
description and the identified model predict."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robodyn_ros.bag.identification import BagIdentification, RunEquations


def write_identification_plots(folder: Path, result: BagIdentification) -> list[Path]:
    """efforts_fit.png and, with a validation run, efforts_validation.png; the files."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    runs = {"fit": result.fit}
    if result.validation is not None:
        runs["validation"] = result.validation
    written = []
    names = result.robot.joint_names
    for label, run in runs.items():
        figure, axes = pyplot.subplots(len(names), 1, figsize=(10, 1.8 * len(names) + 1),
                                       sharex=True, layout="constrained", squeeze=False)
        _draw(axes[:, 0], run, result)
        axes[-1, 0].set_xlabel("time, s")
        figure.suptitle(f"{label} run: measured and predicted efforts ({run.run.bag.name})")
        path = folder / f"efforts_{label}.png"
        figure.savefig(path, dpi=100)
        pyplot.close(figure)
        written.append(path)
    return written


def _draw(axes: np.ndarray, run: RunEquations, result: BagIdentification) -> None:
    """One joint per axes: measured, description, identified."""
    t = run.run.times[run.shown]
    assert run.run.effort is not None
    measured = run.run.effort[run.shown]
    predicted = result.predicted_efforts(run)
    for k, (ax, joint) in enumerate(zip(axes, result.robot.joint_names, strict=True)):
        ax.plot(t, measured[:, k], color="0.6", lw=0.8, label="measured")
        ax.plot(t, predicted["description"][:, k], "--", lw=1.0, label="description")
        ax.plot(t, predicted["identified"][:, k], lw=1.0, label="identified")
        ax.set_ylabel(joint, fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=8, ncol=3)
