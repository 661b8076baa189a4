"""The analysis as files a person reads: a CSV row per sample and a short text report."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robodyn_ros.bag.analysis import Analysis

WORST = 5  # instants listed in the report


def csv_columns(analysis: Analysis) -> dict[str, np.ndarray]:
    """Column name → values (B,): time, joint quantities per joint, then the scalar ones."""
    run = analysis.run
    columns: dict[str, np.ndarray] = {"stamp_ns": run.stamps, "time_s": run.times}
    per_joint = {
        "q": run.position, "qd": analysis.velocity, "qdd": analysis.acceleration,
        "tau": analysis.torque, "effort": run.effort, "residual": analysis.residual,
    }
    for prefix, values in per_joint.items():
        if values is not None:
            columns.update({f"{prefix}_{j}": values[:, k] for k, j in enumerate(run.joint_names)})
    columns["cond_M"] = analysis.mass_matrix_condition
    columns["kinetic_energy_J"] = analysis.kinetic_energy
    columns["potential_energy_J"] = analysis.potential_energy
    for measures in analysis.frames:
        for k in range(6):
            columns[f"lambda{k}_{measures.frame}"] = measures.inertia_eigenvalues[:, k]
        for k in range(3):
            columns[f"translational_inertia{k}_kg_{measures.frame}"] = (
                measures.translational_inertia[:, k])
            columns[f"rotational_inertia{k}_kgm2_{measures.frame}"] = (
                measures.rotational_inertia[:, k])
        columns[f"manipulability_{measures.frame}"] = measures.manipulability
    return columns


def write_csv(path: str | Path, analysis: Analysis) -> None:
    """One row per sample, the columns of csv_columns; SI units (rad, m, s, N·m, N, J)."""
    columns = csv_columns(analysis)
    table = np.column_stack([values.astype(float) for values in columns.values()])
    formats = ["%d", *["%.9g"] * (len(columns) - 1)]
    np.savetxt(path, table, fmt=formats, delimiter=",", header=",".join(columns), comments="")


def text_report(analysis: Analysis) -> str:
    """What was analysed, per-joint RMS residuals, the worst instants and the ranges."""
    run = analysis.run
    duration = run.times[-1]
    derived = "recorded" if run.velocity is not None else "Savitzky-Golay of q"
    lines = [
        f"bag {run.bag} ({run.storage}), topic {run.topic}",
        f"{len(run)} samples over {duration:.3f} s ({(len(run) - 1) / duration:.1f} Hz); "
        f"q̇ {derived}, q̈ Savitzky-Golay over {analysis.window} samples; "
        f"M by {analysis.mass_matrix_method}",
        "",
        *_residual_lines(analysis),
        "",
        _range_line("cond(M)", analysis.mass_matrix_condition, run.times, "%.4g"),
        _range_line("kinetic energy, J", analysis.kinetic_energy, run.times, "%.4g"),
        _range_line("potential energy, J", analysis.potential_energy, run.times, "%.4g"),
    ]
    for measures in analysis.frames:
        eigenvalues = measures.inertia_eigenvalues
        lines.append(_range_line(f"{measures.frame}: smallest eigenvalue of Λ",
                                 eigenvalues[:, 0], run.times, "%.4g"))
        lines.append(_range_line(f"{measures.frame}: largest eigenvalue of Λ",
                                 eigenvalues[:, -1], run.times, "%.4g"))
        lines.append(_range_line(f"{measures.frame}: manipulability",
                                 measures.manipulability, run.times, "%.4g"))
    return "\n".join(lines) + "\n"


def _residual_lines(analysis: Analysis) -> list[str]:
    if analysis.residual is None:
        return ["no efforts recorded: no torque residual"]
    rms = analysis.rms_residual()
    width = max(len(name) for name in analysis.joint_names)
    lines = ["RMS torque residual (measured effort - inverse dynamics), N·m or N:"]
    names = analysis.joint_names
    lines += [f"  {name:<{width}}  {value:.6g}" for name, value in zip(names, rms, strict=True)]
    lines += ["", f"worst instants (largest residual norm), of {len(analysis.run)}:"]
    for k in analysis.worst_instants(WORST):
        residual = analysis.residual[k]
        joint = int(np.nanargmax(np.abs(residual)))
        lines.append(
            f"  t = {analysis.run.times[k]:.4f} s (stamp {analysis.run.stamps[k]} ns): "
            f"|residual| {np.linalg.norm(residual):.4g}, largest at "
            f"{analysis.joint_names[joint]} ({residual[joint]:+.4g})"
        )
    return lines


def _range_line(label: str, values: np.ndarray, times: np.ndarray, number: str) -> str:
    low, high = int(np.argmin(values)), int(np.argmax(values))
    return (f"{label}: min {number % values[low]} at t = {times[low]:.4f} s, "
            f"max {number % values[high]} at t = {times[high]:.4f} s")
