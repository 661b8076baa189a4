"""A robot's contact geometry, from its URDF's ``<collision>`` elements, and where it meets a
plane.

Each ``<collision>`` of a link is a CollisionShape placed in the link's frame: a sphere, a box,
a cylinder (along its z axis), a capsule (URDF's, as Pinocchio reads it: a cylinder of that
length with half-spheres on its ends) or a mesh, read by coal (the collision library
Pinocchio uses) and kept as the vertices of its convex hull, scaled.

Against a plane, a convex shape's points that can touch are its support points along the
plane's inward normal: a sphere's lowest point, a box's corners, a cylinder's rim points, a
capsule's two end spheres' lowest points, a mesh's hull vertices. ``contact_points`` gives each
candidate in the world with its height over the plane; a contact solver keeps those below its
margin. The lowest height is the shape's signed distance to the plane (coal.distance with a
Halfspace gives the same, tested).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from robodyn_ros.contact.world import Plane
from robodyn_ros.errors import RobodynError
from robodyn_ros.model.inertia import rotation_from_rpy

SHAPE_KINDS = ("sphere", "box", "cylinder", "capsule", "mesh")
RIM_POINTS = 8
"""Points on each rim circle of a cylinder taken when it stands on its end face, where every
rim point is lowest together: enough for a support polygon of the face."""
FLAT = 1e-9  # |n × axis| below this: a cylinder's face lies on the plane


class GeometryError(RobodynError, ValueError):
    """A collision element that cannot be taken: the message names the link and why."""


@dataclass(frozen=True, eq=False)
class CollisionShape:
    """One ``<collision>`` of a link.

    Attributes:
        link: the link it moves with.
        kind: one of SHAPE_KINDS.
        size: the sphere's (radius,), the box's (x, y, z) side lengths, the cylinder's and
            capsule's (radius, length), a mesh's () (its hull is in `vertices`).
        placement: (4, 4) the shape's frame in the link's frame (the ``<origin>``).
        vertices: (k, 3) a mesh's hull vertices in the shape frame, scaled; (0, 3) else.
    """

    link: str
    kind: str
    size: tuple[float, ...]
    placement: np.ndarray
    vertices: np.ndarray

    @cached_property
    def reach(self) -> float:
        """The radius of a ball about the shape frame's origin that holds the shape, m."""
        if self.kind == "sphere":
            return self.size[0]
        if self.kind == "box":
            return 0.5 * float(np.linalg.norm(self.size))
        if self.kind == "mesh":
            return float(np.linalg.norm(self.vertices, axis=1).max())
        radius, length = self.size
        if self.kind == "capsule":
            return radius + 0.5 * length
        return float(np.hypot(radius, 0.5 * length))

    def support_points(self, direction: np.ndarray) -> np.ndarray:
        """The shape's points that can lie furthest along `direction` (3,) of its own frame,
        (k, 3) in its frame: those a plane whose inward normal is `direction` touches first."""
        if self.kind == "sphere":
            return self.size[0] * direction[None, :]
        if self.kind == "box":
            corners: np.ndarray = 0.5 * np.array(self.size) * _CORNERS
            return corners
        if self.kind == "mesh":
            return self.vertices
        radius, length = self.size
        ends = np.array([[0.0, 0.0, 0.5 * length], [0.0, 0.0, -0.5 * length]])
        if self.kind == "capsule":
            return ends + radius * direction[None, :]
        across = np.array([direction[0], direction[1], 0.0])
        if np.linalg.norm(across) < FLAT:  # standing on a face: its rim points
            angles = 2.0 * np.pi * np.arange(RIM_POINTS) / RIM_POINTS
            rim = radius * np.column_stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)])
            return (ends[:, None, :] + rim[None, :, :]).reshape(-1, 3)
        return ends + radius * across / np.linalg.norm(across)


_CORNERS = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])


@dataclass(frozen=True, eq=False)
class ContactPoints:
    """A shape's candidate points against a plane.

    Attributes:
        points: (k, 3) in the world, m.
        heights: (k,) over the plane, m: negative inside it.
    """

    points: np.ndarray
    heights: np.ndarray


def contact_points(shape: CollisionShape, link_pose: np.ndarray, plane: Plane) -> ContactPoints:
    """The candidate points of `shape`, its link at `link_pose` (4, 4) in the world, against
    `plane`."""
    pose = link_pose @ shape.placement
    rotation, origin = pose[:3, :3], pose[:3, 3]
    inward = rotation.T @ -plane.normal  # the plane's inward normal in the shape frame
    points = origin + shape.support_points(inward) @ rotation.T
    return ContactPoints(points, plane.height(points))


def collision_shapes(urdf: str, base_folder: str | os.PathLike[str] | None = None,
                     package_folders: Sequence[str | os.PathLike[str]] = ()
                     ) -> tuple[CollisionShape, ...]:
    """Every ``<collision>`` of the URDF text, in document order.

    Args:
        urdf: the URDF text (xacro expanded).
        base_folder: where a mesh's relative filename starts (the URDF file's folder).
        package_folders: folders that hold packages, for a mesh's ``package://<package>/...``
            (each tried as <folder>/<package>/...).

    Raises:
        GeometryError: text that is not XML, a geometry of another kind, a number that is not
            finite (a size that is not > 0), a mesh file that cannot be found or read; naming
            the link.
    """
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as error:
        raise GeometryError(f"the URDF is not well-formed XML: {error}") from None
    return tuple(_shape(link.get("name", "?"), element, base_folder, package_folders)
                 for link in root.iter("link") for element in link.findall("collision"))


def _shape(link: str, element: ET.Element, base_folder: str | os.PathLike[str] | None,
           package_folders: Sequence[str | os.PathLike[str]]) -> CollisionShape:
    where = f"link '{link}': <collision>"
    placement = np.eye(4)
    origin = element.find("origin")
    if origin is not None:
        placement[:3, :3] = rotation_from_rpy(_numbers(where, origin, "rpy", 3, "0 0 0").tolist())
        placement[:3, 3] = _numbers(where, origin, "xyz", 3, "0 0 0")
    geometry = element.find("geometry")
    shape = None if geometry is None or len(geometry) == 0 else geometry[0]
    kind = "none" if shape is None else shape.tag
    if shape is None or kind not in SHAPE_KINDS:
        raise GeometryError(f"{where}: geometry <{kind}> is not one of "
                            f"{', '.join(SHAPE_KINDS)}")
    vertices, size = np.zeros((0, 3)), tuple[float, ...]()
    if kind == "mesh":
        vertices = _mesh_hull(where, shape, base_folder, package_folders)
    else:
        size = tuple(_sizes(where, shape, SIZE_ATTRIBUTES[kind]))
    return CollisionShape(link, kind, size, placement, vertices)


SIZE_ATTRIBUTES = {"sphere": (("radius", 1),), "box": (("size", 3),),
                   "cylinder": (("radius", 1), ("length", 1)),
                   "capsule": (("radius", 1), ("length", 1))}
"""Each primitive's attributes and how many numbers each holds."""


def _sizes(where: str, shape: ET.Element, attributes: tuple[tuple[str, int], ...]
           ) -> list[float]:
    sizes = []
    for name, count in attributes:
        values = _numbers(f"{where} <{shape.tag}>", shape, name, count)
        if not (values > 0.0).all():
            raise GeometryError(f"{where} <{shape.tag}>: {name} must be > 0, not "
                                f"{values.tolist()}")
        sizes += values.tolist()
    return sizes


def _numbers(where: str, element: ET.Element, name: str, count: int,
             default: str | None = None) -> np.ndarray:
    """The `count` finite numbers of an attribute, or a GeometryError naming it."""
    text = element.get(name, default)
    try:
        values = np.array([float(word) for word in (text or "").split()])
    except ValueError:
        values = np.empty(0)
    if values.size != count or not np.isfinite(values).all():
        raise GeometryError(f"{where}: {name}=\"{text}\" must be {count} finite number(s)")
    return values


def _mesh_hull(where: str, mesh: ET.Element, base_folder: str | os.PathLike[str] | None,
               package_folders: Sequence[str | os.PathLike[str]]) -> np.ndarray:
    """The vertices of a mesh's convex hull, scaled, in its frame (coal reads the file)."""
    import coal

    path = mesh_file(where, mesh.get("filename", ""), base_folder, package_folders)
    scale = _numbers(f"{where} <mesh>", mesh, "scale", 3, "1 1 1")
    try:
        model = coal.MeshLoader().load(str(path), scale)
        model.buildConvexHull(True, "Qt")
        vertices = np.array(model.convex.points(), dtype=float).reshape(-1, 3)
    except Exception as error:  # coal raises its own kinds, and ValueError/RuntimeError
        raise GeometryError(f"{where}: mesh {path} cannot be read: "
                            f"{type(error).__name__}: {error}") from error
    if vertices.size == 0 or not np.isfinite(vertices).all():
        raise GeometryError(f"{where}: mesh {path} has no finite vertices")
    return vertices


def mesh_file(where: str, filename: str, base_folder: str | os.PathLike[str] | None,
              package_folders: Sequence[str | os.PathLike[str]]) -> Path:
    """The file a mesh's filename names: ``package://<package>/<path>`` under one of
    `package_folders`, ``file://<path>``, or a path (relative to `base_folder`).

    Raises:
        GeometryError: no such file, naming where it was looked for.
    """
    if filename.startswith("package://"):
        relative = filename.removeprefix("package://")
        tried = [Path(folder, relative) for folder in package_folders]
    else:
        path = Path(filename.removeprefix("file://"))
        tried = [path if path.is_absolute() or base_folder is None else Path(base_folder, path)]
    for candidate in tried:
        if candidate.is_file():
            return candidate
    looked = ", ".join(map(str, tried)) or "no package folder given"
    raise GeometryError(f"{where}: mesh '{filename}' not found (looked in: {looked})")


def package_folders(folder: Path | None = None) -> Iterator[Path]:
    """Where a ``package://<package>/<path>`` mesh is looked for: the share folder of each
    install prefix of the ament index (AMENT_PREFIX_PATH), then, for a description read from a
    file, each folder above that file's (a package's description in a source tree or an
    install without the ament index: <package>/urdf/robot.urdf).

    Args:
        folder: the description file's folder; None for one from a parameter or topic.
    """
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            yield Path(prefix, "share")
    if folder is not None:
        yield from Path(folder).resolve().parents


__all__ = ["CollisionShape", "ContactPoints", "GeometryError", "collision_shapes",
           "contact_points", "mesh_file", "package_folders"]
