"""Contact with the world: the planes a robot can touch (world) and its collision geometry,
from the URDF, where it meets them (geometry)."""

from robodyn_ros.contact.geometry import (
    CollisionShape,
    ContactPoints,
    GeometryError,
    collision_shapes,
    contact_points,
)
from robodyn_ros.contact.world import Plane, World, WorldError, load_world, world_of

__all__ = [
    "CollisionShape",
    "ContactPoints",
    "GeometryError",
    "Plane",
    "World",
    "WorldError",
    "collision_shapes",
    "contact_points",
    "load_world",
    "world_of",
]
