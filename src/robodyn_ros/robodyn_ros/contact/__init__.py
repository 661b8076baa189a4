"""Contact with the world: the planes a robot can touch (world), its collision geometry from
the URDF and where it meets them (geometry, detection), and a time step with unilateral
contacts and Coulomb friction (time_step, on solver's projected Gauss–Seidel)."""

from robodyn_ros.contact.geometry import (
    CollisionShape,
    ContactPoints,
    GeometryError,
    collision_shapes,
    contact_points,
    package_folders,
)
from robodyn_ros.contact.time_step import (
    ContactError,
    ContactForce,
    ContactSettings,
    ContactStep,
    contact_step,
    moving_shapes,
)
from robodyn_ros.contact.world import Plane, World, WorldError, load_world, world_of

__all__ = [
    "CollisionShape",
    "ContactError",
    "ContactForce",
    "ContactPoints",
    "ContactSettings",
    "ContactStep",
    "GeometryError",
    "Plane",
    "World",
    "WorldError",
    "collision_shapes",
    "contact_points",
    "contact_step",
    "load_world",
    "moving_shapes",
    "package_folders",
    "world_of",
]
