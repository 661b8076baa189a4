"""The files of an identification: the identified URDF, `parameters.yaml` (or `payload.yaml`),
`report.txt`; and reading a `parameters.yaml` back as π.

`parameters.yaml` holds the base parameters with their standard errors, each joint's
residual σ, armature, friction and offset, the joint parameters held at the description's
values (the run does not inform them), and the identified π by name. Its `armature` key is
a mapping Robot.from_urdf(armature=...) reads, so the identified URDF and this file together
are the identified robot; the offsets are the torque sensors' (parameters.joints).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from robodyn_ros.bag.errors import BagError
from robodyn_ros.identification.estimation import BaseEstimate, ConsistentEstimate
from robodyn_ros.identification.from_bag import BagIdentification, RunEquations
from robodyn_ros.identification.identify import PayloadIdentification, RobotIdentification
from robodyn_ros.identification.informed import INFORMED_SPREAD
from robodyn_ros.identification.urdf_writer import identified_urdf
from robodyn_ros.model.inertial_parameters import (
    JOINT_PARAMETER_NAMES,
    PARAMETERS_PER_BODY,
    PARAMETERS_PER_JOINT,
)
from robodyn_ros.robot import Robot

PARAMETERS_KEY = "parameters"


def write_identification(folder: Path, result: BagIdentification, urdf: str) -> list[Path]:
    """report.txt and, for a robot, `<robot>_identified.urdf` and parameters.yaml, for a load
    payload.yaml; the files written.

    Args:
        folder: the output folder (created).
        result: the identification.
        urdf: the description's URDF text (xacro expanded), which the identified URDF edits.
    """
    folder.mkdir(parents=True, exist_ok=True)
    report = folder / "report.txt"
    report.write_text(text_report(result))
    found = result.found
    if isinstance(found, PayloadIdentification):
        payload = folder / "payload.yaml"
        document = payload_document(result, found)
        payload.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                           encoding="utf-8")
        return [report, payload]
    model = result.robot.model
    identified = folder / f"{model.name}_identified.urdf"
    header = (f"inertial and dynamics values identified by robodyn bag identify from "
              f"{result.fit.run.bag} on {datetime.date.today().isoformat()}; armature, offsets "
              "and standard errors in parameters.yaml")
    identified.write_text(identified_urdf(urdf, model, found.parameters, header=header))
    parameters = folder / "parameters.yaml"
    document = parameters_document(result, found)
    parameters.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                          encoding="utf-8")
    return [report, identified, parameters]


def parameters_document(
    result: BagIdentification, found: RobotIdentification,
) -> dict[str, Any]:
    """What parameters.yaml holds (the module docstring)."""
    robot = result.robot
    model = robot.model
    joints = found.parameters[PARAMETERS_PER_BODY * model.nv :].reshape(
        model.nv, PARAMETERS_PER_JOINT)
    return {
        "robot": model.name,
        "bag": str(result.fit.run.bag),
        "topic": result.fit.run.topic,
        "samples": len(result.fit.run),
        "prior_weight": found.consistent.prior_weight,
        "base_parameters": _base_entries(found.estimate),
        "condition_number": found.estimate.condition,
        "residual_sigma": _per_joint(robot.joint_names, found.estimate.sigma),
        "armature": {name: float(value) for name, value in zip(
            model.joint_names, joints[:, 0], strict=True)},
        "joints": {name: dict(zip(JOINT_PARAMETER_NAMES, map(float, values), strict=True))
                   for name, values in zip(model.joint_names, joints, strict=True)},
        "held": {name: spread for name, spread in _held(result.robot, found)},
        PARAMETERS_KEY: dict(zip(robot.parameter_names, map(float, found.parameters),
                                 strict=True)),
    }


def payload_document(
    result: BagIdentification, found: PayloadIdentification,
) -> dict[str, Any]:
    """What payload.yaml holds: the load as Robot.with_payload takes it, and its fit."""
    load = found.payload
    return {
        "frame": load.frame,
        "mass": float(load.mass),
        "com": load.com.tolist(),
        "inertia": load.inertia.tolist(),
        "bag": str(result.fit.run.bag),
        "samples": len(result.fit.run),
        "least_squares": _base_entries(found.estimate),
        "condition_number": found.estimate.condition,
        "residual_sigma": _per_joint(result.robot.joint_names, found.estimate.sigma),
    }


def read_parameters(path: str | Path, robot: Robot) -> np.ndarray:
    """π of `robot` from a parameters.yaml (its `parameters` mapping, by name).

    Raises:
        BagError: the file cannot be read, or does not name every parameter of the robot
            with a finite number.
    """
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise BagError(f"parameters file {path}: cannot be read: {error}") from None
    values = document.get(PARAMETERS_KEY) if isinstance(document, Mapping) else None
    if not isinstance(values, Mapping):
        raise BagError(f"parameters file {path}: no '{PARAMETERS_KEY}' mapping of name → value")
    missing = [name for name in robot.parameter_names if name not in values]
    if missing:
        raise BagError(f"parameters file {path}: robot '{robot.model.name}' has parameters it "
                       f"does not name: {', '.join(missing[:6])}{' …' if len(missing) > 6 else ''}")
    try:
        parameters = np.array([float(values[name]) for name in robot.parameter_names])
    except (TypeError, ValueError):
        parameters = np.full(len(robot.parameter_names), np.nan)
    if not np.isfinite(parameters).all():
        raise BagError(f"parameters file {path}: every parameter must be a finite number")
    return parameters


def text_report(result: BagIdentification) -> str:
    """What was fitted, on what; per-joint RMS residuals before and after, on the fit run and
    the validation run; the condition number; what the runs could not inform."""
    found = result.found
    estimate = found.estimate
    what = (f"a load on frame '{found.payload.frame}'" if isinstance(found, PayloadIdentification)
            else f"robot '{result.robot.model.name}'")
    lines = [f"identification of {what}", _run_line("fit", result.fit)]
    if result.validation is not None:
        lines.append(_run_line("validation", result.validation))
    lines += [
        f"{len(estimate.base)} base parameters; condition number of the weighted base "
        f"regressor {estimate.condition:.4g}",
        _consistent_line(found.consistent),
        "",
    ]
    if isinstance(found, PayloadIdentification):
        load = found.payload
        lines += [f"load: {load.mass:.6g} kg, centre of mass {np.round(load.com, 6).tolist()} m "
                  f"in '{load.frame}'", ""]
    lines += _residual_table(result)
    if isinstance(found, RobotIdentification):
        held = _held(result.robot, found)
        lines += ["", "URDF alone: the identified URDF read without parameters.yaml (no armature, "
                  "no offsets)", "",
                  f"joint parameters not informed by the run, held at the description's value "
                  f"(the effort their standard error stands for, in sigma, above "
                  f"{INFORMED_SPREAD:g}; --fit fits them anyway): {len(held)}"]
        lines += [f"  {name} ({spread:.3g} sigma)" for name, spread in held]
    small = [estimate.base.names[k] for k in estimate.indistinct_from_zero]
    lines += ["", f"base parameters the run cannot tell from zero (standard error above the "
              f"value): {len(small)}"]
    lines += [f"  {name}" for name in small]
    if isinstance(found, RobotIdentification):
        unidentifiable = [estimate.base.parameter_names[k] for k in estimate.base.unidentifiable]
        lines += [f"never seen in the joint torques (kept from the description): "
                  f"{len(unidentifiable)}", "  " + ", ".join(unidentifiable)]
    return "\n".join(lines) + "\n"


def _consistent_line(consistent: ConsistentEstimate) -> str:
    """How the physically consistent fit went; what to do when it did not converge."""
    line = (f"physically consistent fit: prior weight {consistent.prior_weight:g} samples, "
            f"{consistent.evaluations} evaluations, ")
    if consistent.converged:
        return line + "converged"
    return line + ("NOT converged: the bodies it gives are rigid bodies but not the best "
                   "fit; record a longer run that moves every joint through more of its "
                   "range (robodyn excite plans one), or raise --prior-weight")


def _held(robot: Robot, found: RobotIdentification) -> list[tuple[str, float]]:
    """The joint parameters held at the description's values, each with its spread."""
    names = robot.parameter_names[PARAMETERS_PER_BODY * robot.nv :]
    held = found.consistent.held[PARAMETERS_PER_BODY * robot.nv :]
    return [(name, float(spread)) for name, spread, is_held in zip(
        names, found.spread.ravel(), held, strict=True) if is_held]


def _run_line(label: str, run: RunEquations) -> str:
    recorded = run.run
    duration = recorded.times[-1]
    return (f"{label}: bag {recorded.bag}, topic {recorded.topic}, {len(recorded)} samples over "
            f"{duration:.3f} s")


def _residual_table(result: BagIdentification) -> list[str]:
    """Per joint: the fit's residual σ and the RMS residual (N·m or N) of the description and
    of the identification, on the fit run and on the validation run."""
    runs = {"fit": result.fit}
    if result.validation is not None:
        runs["validation"] = result.validation
    columns = {"sigma fit": result.found.estimate.sigma}
    for label, run in runs.items():
        for model, values in result.rms_residuals(run).items():
            columns[f"{label} {model}"] = values
    width = max(len(name) for name in result.robot.joint_names) + 2
    lines = ["RMS of measured - predicted effort per joint (N·m, or N):",
             f"{'joint':<{width}}" + "".join(f"{title:>24}" for title in columns)]
    for k, joint in enumerate(result.robot.joint_names):
        lines.append(f"{joint:<{width}}"
                     + "".join(f"{values[k]:>24.5g}" for values in columns.values()))
    return lines


def _base_entries(estimate: BaseEstimate) -> list[dict[str, Any]]:
    errors = estimate.standard_errors
    return [
        {"name": name, "value": float(value), "standard_error": float(error),
         "relative_error_percent": float(100.0 * error / abs(value)) if value else None}
        for name, value, error in zip(estimate.base.names, estimate.values, errors, strict=True)
    ]


def _per_joint(names: tuple[str, ...], values: np.ndarray) -> dict[str, float]:
    return {name: float(value) for name, value in zip(names, values, strict=True)}
