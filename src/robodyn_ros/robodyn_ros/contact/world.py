"""The world a robot touches: planes (a ground, a table, a wall, an incline), each a half-space
with a Coulomb friction coefficient.

A world is given as a mapping, the ``world`` entry of a scenario or a YAML file of its own:

    planes:
      - {normal: [0, 0, 1], point: [0, 0, 0], friction: 0.8}     # the ground
      - {normal: [0, 0, 1], point: [0.5, 0, 0.4], friction: 0.5}  # a table's top

The normal points out of the solid, into the free space above the plane, and need not be of
unit length (it is normalised); the point is any point of the plane; both in the world frame
(a fixed base's root frame, a floating base's odometry frame), m. A point's height over a plane
is (p − point)·normal: negative inside the solid.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from robodyn_ros.errors import RobodynError

PLANE_KEYS = ("normal", "point", "friction")


class WorldError(RobodynError, ValueError):
    """A world description that cannot be taken: the message names the field and what is
    wrong with it."""


@dataclass(frozen=True, eq=False)
class Plane:
    """A half-space the robot cannot enter.

    Attributes:
        normal: (3,) unit vector out of the solid.
        point: (3,) a point of the plane, m.
        friction: Coulomb's coefficient μ ≥ 0 of a contact on it.
    """

    normal: np.ndarray
    point: np.ndarray
    friction: float

    def height(self, points: np.ndarray) -> np.ndarray:
        """The signed height of points (..., 3) over the plane, m: negative inside."""
        heights: np.ndarray = (np.asarray(points, dtype=float) - self.point) @ self.normal
        return heights

    @cached_property
    def frame(self) -> np.ndarray:
        """(3, 3) the rows [n; t1; t2]: the unit normal and two unit tangents, right-handed:
        the axes of a contact on the plane."""
        helper = np.array([1.0, 0.0, 0.0] if abs(self.normal[0]) < 0.9 else [0.0, 1.0, 0.0])
        first = np.cross(self.normal, helper)
        first /= np.linalg.norm(first)
        return np.stack([self.normal, first, np.cross(self.normal, first)])


@dataclass(frozen=True, eq=False)
class World:
    """What the robot can touch: its planes (none: free space)."""

    planes: tuple[Plane, ...] = field(default_factory=tuple)


def world_of(description: object, where: str = "world") -> World:
    """The World of a mapping {planes: [{normal, point, friction}, ...]}.

    Args:
        description: the mapping (a parsed YAML document); None is free space.
        where: what it is, first in an error ("world", "scenario 'push': world").

    Raises:
        WorldError: a field missing, unknown or of a wrong kind, a normal of zero length, a
            point or normal that is not three finite numbers, a friction that is not a finite
            number ≥ 0; naming the field.
    """
    if description is None:
        return World()
    if not isinstance(description, Mapping):
        raise WorldError(f"{where}: must be a mapping with 'planes', not "
                         f"{type(description).__name__}")
    unknown = sorted(set(description) - {"planes"})
    if unknown:
        raise WorldError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}; a world "
                         "has 'planes'")
    planes = description.get("planes", [])
    if not isinstance(planes, Sequence) or isinstance(planes, str):
        raise WorldError(f"{where}.planes: must be a list of planes, not "
                         f"{type(planes).__name__}")
    return World(tuple(plane_of(plane, f"{where}.planes[{k}]")
                       for k, plane in enumerate(planes)))


def plane_of(description: object, where: str) -> Plane:
    """One plane of a world mapping (world_of).

    Raises:
        WorldError: as world_of, naming the field under `where`.
    """
    if not isinstance(description, Mapping):
        raise WorldError(f"{where}: must be a mapping with {', '.join(PLANE_KEYS)}, not "
                         f"{type(description).__name__}")
    problems = []
    unknown = sorted(map(str, set(description) - set(PLANE_KEYS)))
    if unknown:
        problems.append(f"unknown field(s) {', '.join(unknown)}")
    missing = [key for key in PLANE_KEYS if key not in description]
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    if problems:
        raise WorldError(f"{where}: {'; '.join(problems)} (a plane has "
                         f"{', '.join(PLANE_KEYS)})")
    normal = _vector(description["normal"], f"{where}.normal")
    length = float(np.linalg.norm(normal))
    if not length > 1e-9:
        raise WorldError(f"{where}.normal: {normal.tolist()} has no direction (length "
                         f"{length:.3g}); give the direction out of the solid")
    friction = description["friction"]
    if isinstance(friction, bool) or not isinstance(friction, (int, float)) or not (
            math.isfinite(friction) and friction >= 0.0):
        raise WorldError(f"{where}.friction: must be a finite number ≥ 0 (Coulomb's μ), not "
                         f"{friction!r}")
    return Plane(normal / length, _vector(description["point"], f"{where}.point"),
                 float(friction))


def load_world(path: str | Path) -> World:
    """The World of a YAML file: the mapping world_of takes, or a document with it under
    ``world`` (a scenario file's).

    Raises:
        WorldError: a file that cannot be read or parsed, or a world that cannot be taken,
            naming the file.
    """
    path = Path(path)
    try:
        document: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise WorldError(f"world file {path}: cannot be read as YAML: "
                         f"{type(error).__name__}: {error}") from error
    if isinstance(document, Mapping) and "world" in document:
        return world_of(document["world"], f"world file {path}: world")
    return world_of(document, f"world file {path}")


def _vector(value: object, where: str) -> np.ndarray:
    """Three finite numbers, or a WorldError naming `where`."""
    if (isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 3
            or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in value)):
        raise WorldError(f"{where}: must be three numbers [x, y, z], not {value!r}")
    vector = np.array(value, dtype=float)
    if not np.isfinite(vector).all():
        raise WorldError(f"{where}: must be finite, not {vector.tolist()}")
    return vector


__all__ = ["Plane", "World", "WorldError", "load_world", "plane_of", "world_of"]
