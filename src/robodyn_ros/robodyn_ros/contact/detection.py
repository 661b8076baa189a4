"""Which points of a robot's collision shapes touch a world's planes at a configuration.

A contact is a candidate point of a shape (geometry.CollisionShape.support_points) closer to a
plane than a margin. A shape whose bounding ball (CollisionShape.reach) is further than the
margin from a plane has none there. A box's corners and a mesh's hull vertices do not depend
on the plane: they are kept placed in their links' frames (ShapeSet), once; the round shapes'
(sphere, cylinder, capsule) turn with the plane. Of a shape's candidates on one
plane at most five are kept (support_polygon): its lowest and the extreme ones along the
plane's two tangents, the corners of the polygon it stands on, as a mesh's dozens of hull
vertices near the plane would only slow the solver.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from robodyn_ros.contact.geometry import CollisionShape, ContactPoints, contact_points
from robodyn_ros.contact.world import Plane, World
from robodyn_ros.model.model import Model

FIXED_POINTS = ("box", "mesh")  # shapes whose candidate points do not depend on the plane


@dataclass(frozen=True, eq=False)
class ShapeSet:
    """The shapes on links a robot's joints move, ready to be placed.

    Attributes:
        shapes: the shapes, on moving links only.
        frame_rows: (S,) each shape's link's row in the robot's frame_names.
        placements: (S, 4, 4) each shape in its link's frame.
        reach: (S,) each shape's bounding radius about its frame's origin, m.
        fixed_points: each shape's candidate points in its link's frame (k, 3), a box's corners
            or a mesh's hull vertices; None for a round shape, whose candidates turn with the
            plane.
    """

    shapes: tuple[CollisionShape, ...]
    frame_rows: np.ndarray
    placements: np.ndarray
    reach: np.ndarray
    fixed_points: tuple[np.ndarray | None, ...]


@dataclass(frozen=True, eq=False)
class Candidates:
    """The contacts of a state: their shapes' links, points in the world (k, 3), frames
    (k, 3, 3) (their planes' rows [n; t1; t2]), frictions (k,) and heights (k,) over their
    planes."""

    links: list[str]
    points: np.ndarray
    frames: np.ndarray
    friction: np.ndarray
    heights: np.ndarray


@lru_cache(maxsize=32)
def shape_set(model: Model, shapes: tuple[CollisionShape, ...]) -> ShapeSet:
    """The ShapeSet of `shapes` on the robot `model`: a fixed base's own links are held by
    their mount whatever they touch (a contact there has no motion to give) and left out."""
    moving = tuple(shape for shape in shapes
                   if model.frame_body[model.frame_index(shape.link)] >= 0)
    placements = np.array([shape.placement for shape in moving]).reshape(-1, 4, 4)
    fixed = tuple(shape.support_points(np.zeros(3)) @ shape.placement[:3, :3].T
                  + shape.placement[:3, 3] if shape.kind in FIXED_POINTS else None
                  for shape in moving)
    return ShapeSet(
        moving, np.array([model.frame_index(shape.link) for shape in moving], dtype=np.int64),
        placements, np.array([shape.reach for shape in moving]), fixed)


def find_contacts(shapes: ShapeSet, link_poses: np.ndarray, world: World, margin: float
                  ) -> Candidates:
    """The contacts of the shapes, their links at `link_poses` (S, 4, 4) in the world (one
    per shape), with the world's planes."""
    links: list[str] = []
    points, frames, friction, heights = [], [], [], []
    origins = (np.einsum("sij,sj->si", link_poses[:, :3, :3], shapes.placements[:, :3, 3])
               + link_poses[:, :3, 3])
    for plane in world.planes:
        near = np.flatnonzero(plane.height(origins) <= shapes.reach + margin)
        for shape_index in near:
            found = _candidates(shapes, int(shape_index), link_poses[shape_index], plane)
            kept = support_polygon(found.points, found.heights, plane.frame[1:], margin)
            links += [shapes.shapes[shape_index].link] * len(kept)
            points.append(found.points[kept])
            heights.append(found.heights[kept])
            frames += [plane.frame] * len(kept)
            friction += [plane.friction] * len(kept)
    return Candidates(links, np.concatenate(points or [np.zeros((0, 3))]),
                      np.array(frames).reshape(-1, 3, 3), np.array(friction),
                      np.concatenate(heights or [np.zeros(0)]))


def _candidates(shapes: ShapeSet, index: int, link_pose: np.ndarray, plane: Plane
                ) -> ContactPoints:
    """The candidate points of shape `index`, its link at `link_pose`, against the plane."""
    local = shapes.fixed_points[index]
    if local is None:
        return contact_points(shapes.shapes[index], link_pose, plane)
    points = local @ link_pose[:3, :3].T + link_pose[:3, 3]
    return ContactPoints(points, (points - plane.point) @ plane.normal)


def support_polygon(points: np.ndarray, heights: np.ndarray, tangents: np.ndarray,
                    margin: float) -> np.ndarray:
    """The indices of the candidate points (k, 3) kept as contacts: those under `margin`, and
    of more than four, the lowest and the extremes along the plane's two `tangents` (2, 3)."""
    near = np.flatnonzero(heights < margin)
    if len(near) <= 4:
        return near
    along = tangents @ points[near].T  # (2, k)
    kept = [np.argmin(heights[near]), *along.argmin(axis=1), *along.argmax(axis=1)]
    return near[np.unique(kept)]


__all__ = ["Candidates", "ShapeSet", "find_contacts", "shape_set", "support_polygon"]
