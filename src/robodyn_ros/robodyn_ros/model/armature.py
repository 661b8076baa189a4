"""Armature: the reflected rotor inertia of each joint's motor, added to M's diagonal.

A geared motor's rotor turns ``r`` times faster than its joint, so its inertia ``I_rotor``
adds ``r² I_rotor`` to the joint's own diagonal entry of M (Pinocchio's ``model.armature``,
MuJoCo's ``dof_armature``): kg·m² for a revolute or continuous joint, kg for a prismatic one.
It also gives a joint that moves no mass (a massless hand's finger) an inertia.

Armature is given as a mapping joint name → value, or as the path of a YAML file holding one:
either the file's top-level mapping itself, or, when that mapping has the key ``armature``, the
mapping under it (so that it can live in a larger configuration file, whose other keys are then
ignored)::

    panda_joint1: 0.1          # or:   armature:
    panda_joint2: 0.1          #         panda_joint1: 0.1
                               #         panda_joint2: 0.1

Joints not named get zero.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import yaml

from robodyn_ros.model.model import ModelError

Armature = Mapping[str, float] | str | os.PathLike[str]
"""What ``armature=`` takes: joint name → value, or a YAML file of such a mapping."""

ARMATURE_KEY = "armature"


def armature_vector(
    spec: Armature | None, joint_names: Sequence[str], *, source: str
) -> np.ndarray:
    """The (n,) armature of the joints ``joint_names`` from a mapping or a YAML file.

    Args:
        spec: joint name → armature (kg·m² for revolute and continuous joints, kg for
            prismatic ones), the path of a YAML file holding such a mapping (module docstring),
            or None for no armature.
        joint_names: the moving joints, in the Model's order.
        source: the robot description's name (a file or "<string>"), for error messages.

    Returns:
        float64 (n,), zero for every joint not named.

    Raises:
        ModelError: a name that is not a moving joint, a value that is not a finite number
            ≥ 0, or a YAML file that cannot be read or holds no such mapping; the message
            names the robot description, the file and the joint.
        OSError: the YAML file cannot be opened.
    """
    armature = np.zeros(len(joint_names))
    if spec is None:
        return armature
    index = {name: i for i, name in enumerate(joint_names)}
    for name, value in armature_mapping(spec, source=source).items():
        if name not in index:
            raise ModelError(
                f"{_where(spec, source)}: armature of joint '{name}': not a moving joint of this "
                "robot (fixed and locked joints have none); its moving joints are: "
                f"{', '.join(joint_names)}"
            )
        armature[index[name]] = value
    return armature


def armature_mapping(spec: Armature, *, source: str) -> dict[str, float]:
    """The joint name → armature of a mapping or a YAML file, each value checked.

    Args:
        spec: a mapping, or the path of a YAML file holding one (module docstring).
        source: what the armature is for (a robot description, a parameter), for errors.

    Returns:
        joint name → a finite number ≥ 0.

    Raises:
        ModelError: not a mapping, a value that is not a finite number ≥ 0, or a YAML file
            that cannot be read or holds no mapping; the message names the file and joint.
        OSError: the YAML file cannot be opened.
    """
    where = _where(spec, source)
    if isinstance(spec, str | os.PathLike):
        spec = _read_armature_file(spec, where)
    if not isinstance(spec, Mapping):
        raise ModelError(
            f"{where}: armature must map joint names to values; got {type(spec).__name__}"
        )
    return {str(name): _armature_value(value, f"{where}: armature of joint '{name}'")
            for name, value in spec.items()}


def _where(spec: Armature, source: str) -> str:
    """The subject of an armature's error messages: the source, and the file if one."""
    if isinstance(spec, str | os.PathLike):
        return f"{source}: armature file {os.fspath(spec)}"
    return source


def _read_armature_file(path: str | os.PathLike[str], where: str) -> Mapping[str, Any]:
    """The joint → value mapping of a YAML file: the top-level mapping, or what is under its
    ARMATURE_KEY when it has that key."""
    with open(path, encoding="utf-8") as file:
        try:
            document = yaml.safe_load(file)
        except yaml.YAMLError as error:
            raise ModelError(f"{where}: not valid YAML: {' '.join(str(error).split())}") from None
    if isinstance(document, Mapping) and ARMATURE_KEY in document:
        document = document[ARMATURE_KEY]
    if not isinstance(document, Mapping):
        raise ModelError(
            f"{where}: needs a mapping joint name → armature, at the top level or under the "
            f"key '{ARMATURE_KEY}'"
        )
    return document


def _armature_value(value: object, subject: str) -> float:
    """A finite number ≥ 0, or a ModelError naming `subject`."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ModelError(f"{subject} must be a number (kg·m² or kg); got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value >= 0.0):
        raise ModelError(f"{subject} must be a finite number ≥ 0 (kg·m² or kg); got {value}")
    return value
