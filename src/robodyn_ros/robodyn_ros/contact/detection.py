"""A robot's collision shapes and a world's planes as the compiled contact step takes them
(compiled_step.ContactModel), which finds their contacts there.

Only shapes on links a robot's joints move take part: a fixed base's own links are held by
their mount whatever they touch, and a contact there has no motion to give (its Delassus rows
are zero). A box's corners and a mesh's hull vertices are the candidate points that do not
depend on the plane (geometry.CollisionShape.support_points): they are packed once, in the
shape's frame, grouped into clusters of about CLUSTER_POINTS by their direction from the
shape's centroid (the directions of a Fibonacci lattice on the sphere), each with the ball
that holds it, so that the kernel looks only into the clusters near a plane; the round
shapes' are made against each plane in the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from robodyn_ros.contact.compiled_step import SHAPE_CODES, ContactModel, contact_capacity
from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.contact.world import World
from robodyn_ros.model.model import Model

FIXED_POINTS = ("box", "mesh")  # shapes whose candidate points do not depend on the plane
CLUSTER_POINTS = 24  # a shape's fixed points per cluster, about
GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))  # rad, the Fibonacci lattice's turn per point


@dataclass(frozen=True, eq=False)
class ContactScene:
    """The shapes on a robot's moving links and a world's planes, packed.

    Attributes:
        shapes: the shapes on moving links, in the order of the packed rows.
        arrays: the ContactModel the kernels take.
        capacity: the most contacts one step can find (compiled_step.contact_capacity).
    """

    shapes: tuple[CollisionShape, ...]
    arrays: ContactModel
    capacity: int


def moving(model: Model, shapes: tuple[CollisionShape, ...]) -> tuple[CollisionShape, ...]:
    """The shapes on links the robot `model`'s joints move."""
    return tuple(shape for shape in shapes
                 if model.frame_body[model.frame_index(shape.link)] >= 0)


@dataclass(frozen=True, eq=False)
class PointClusters:
    """A shape's fixed points grouped into clusters (the module docstring).

    Attributes:
        points: (P, 3) the points, cluster after cluster.
        rank: (P,) int64, each point's index among the shape's points as given.
        size: (C,) int64, the points of each cluster.
        centre: (C, 3) each cluster's centre, the mean of its points.
        radius: (C,) the distance from the centre to its furthest point.
    """

    points: np.ndarray
    rank: np.ndarray
    size: np.ndarray
    centre: np.ndarray
    radius: np.ndarray

    @classmethod
    def of(cls, points: np.ndarray) -> PointClusters:
        """The clusters of `points` (P, 3)."""
        count = max(1, len(points) // CLUSTER_POINTS)
        k = np.arange(count) + 0.5
        z = 1.0 - 2.0 * k / count
        across = np.sqrt(1.0 - z * z)
        directions = np.column_stack([across * np.cos(GOLDEN_ANGLE * k),
                                      across * np.sin(GOLDEN_ANGLE * k), z])
        offsets = points - points.mean(axis=0) if len(points) else points
        label = np.argmax(offsets @ directions.T, axis=1)
        rank = np.argsort(label, kind="stable").astype(np.int64)
        grouped, labels = points[rank], label[rank]
        starts = np.flatnonzero(np.diff(labels, prepend=-1))
        size = np.diff(np.append(starts, len(grouped))).astype(np.int64)
        centre = (np.add.reduceat(grouped, starts) / size[:, None] if len(grouped)
                  else np.zeros((0, 3)))
        owner = np.repeat(np.arange(len(size)), size)
        radius = np.zeros(len(size))
        np.maximum.at(radius, owner, np.linalg.norm(grouped - centre[owner], axis=1))
        return cls(grouped, rank, size, centre, radius)


@lru_cache(maxsize=32)
def contact_scene(model: Model, shapes: tuple[CollisionShape, ...], world: World
                  ) -> ContactScene:
    """The ContactScene of `shapes` on the robot `model` in `world`."""
    kept = moving(model, shapes)
    frames = [model.frame_index(shape.link) for shape in kept]
    clusters = [PointClusters.of(shape.support_points(np.zeros(3)) if shape.kind in FIXED_POINTS
                                 else np.zeros((0, 3))) for shape in kept]
    planes = world.planes
    arrays = ContactModel(
        body=np.array([model.frame_body[k] for k in frames], dtype=np.int64),
        placement=np.array([model.frame_placement[k] @ shape.placement
                            for k, shape in zip(frames, kept, strict=True)]).reshape(-1, 4, 4),
        kind=np.array([SHAPE_CODES[shape.kind] for shape in kept], dtype=np.int64),
        size=np.array([(*shape.size, 0.0, 0.0)[:2] if shape.kind != "box" else (0.0, 0.0)
                       for shape in kept], dtype=float).reshape(-1, 2),
        reach=np.array([shape.reach for shape in kept], dtype=float),
        points=np.ascontiguousarray(
            np.concatenate([np.zeros((0, 3)), *(c.points for c in clusters)]).T, dtype=float),
        point_rank=np.concatenate([np.zeros(0, np.int64), *(c.rank for c in clusters)]),
        cluster_start=np.concatenate([[0], np.cumsum([len(c.radius) for c in clusters])]
                                     ).astype(np.int64),
        cluster_point_start=np.concatenate(
            [[0], np.cumsum(np.concatenate([np.zeros(0, np.int64), *(c.size for c in clusters)]))]
        ).astype(np.int64),
        cluster_centre=np.concatenate([np.zeros((0, 3)), *(c.centre for c in clusters)]),
        cluster_radius=np.concatenate([np.zeros(0), *(c.radius for c in clusters)]),
        planes=np.array([plane.frame for plane in planes], dtype=float).reshape(-1, 3, 3),
        plane_point=np.array([plane.point for plane in planes], dtype=float).reshape(-1, 3),
        friction=np.array([plane.friction for plane in planes], dtype=float))
    return ContactScene(kept, arrays, contact_capacity(arrays))


__all__ = ["ContactScene", "contact_scene", "moving"]
