"""Contact with the world on the ROS side: the contacts of a step as a
robodyn_interfaces/Contacts message, a World as WorldPlane messages and back, and the collision
shapes of the robot description a node follows that touch a world.

A WorldPlane is a plane of contact.world_of's mapping ({normal, point, friction}), checked as
that mapping is, each named ``<where>[k]`` in an error: a zero normal, a negative or
non-finite friction or a point that is not finite is refused, as in a world file.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Vector3
from robodyn_interfaces.msg import Contact, Contacts, WorldPlane

from robodyn_ros.contact.geometry import CollisionShape, collision_shapes, package_folders
from robodyn_ros.contact.time_step import ContactForce, moving_shapes
from robodyn_ros.contact.world import World, plane_of
from robodyn_ros.robot import Robot
from robodyn_ros.ros.description import RobotDescription
from robodyn_ros.ros.guard import RefusedError


def contacts_message(contacts: Sequence[ContactForce], stamp: Time, frame_id: str) -> Contacts:
    """The Contacts message of one step's contacts, with their total force.

    Args:
        contacts: the step's contacts (SimulatedRobot.world_contacts), world frame.
        stamp: the simulated time of the step.
        frame_id: the world frame's name.

    Returns:
        The message: one Contact per contact, in order, and total_force their sum (N).
    """
    message = Contacts(contacts=[_contact(contact) for contact in contacts])
    message.header.stamp, message.header.frame_id = stamp, frame_id
    total = np.sum([contact.force for contact in contacts], axis=0) if contacts else np.zeros(3)
    message.total_force = _vector3(total)
    return message


def world_message_planes(world: World) -> list[WorldPlane]:
    """The planes of a World as WorldPlane messages (normal of unit length), in order."""
    return [WorldPlane(normal=_vector3(plane.normal), point=_point(plane.point),
                       friction=plane.friction) for plane in world.planes]


def world_from_planes(planes: Sequence[WorldPlane], where: str = "world") -> World:
    """The World of WorldPlane messages (none: free space), each checked as contact.world_of
    checks a plane of its mapping.

    Args:
        planes: the messages.
        where: what they are, first in an error ("scenario 'push': world"): plane k is
            ``<where>[k]``.

    Returns:
        The World, each normal normalised.

    Raises:
        WorldError: a normal of zero length or not finite, a point not finite, a friction
            negative or not finite; naming the plane and its field (``world[1].normal``).
    """
    return World(tuple(plane_of(_plane_mapping(plane), f"{where}[{k}]")
                       for k, plane in enumerate(planes)))


def description_shapes(description: RobotDescription) -> tuple[CollisionShape, ...]:
    """The collision shapes of a robot description's ``<collision>`` elements
    (contact.collision_shapes): a relative mesh filename found from the description file's
    folder, a ``package://<package>/...`` one under package_folders(description.folder).

    Raises:
        GeometryError: a geometry that cannot be taken or a mesh not found, naming the link.
    """
    return collision_shapes(description.urdf, description.folder,
                            tuple(package_folders(description.folder)))


def world_shapes(world: World, description: RobotDescription | None, robot: Robot
                 ) -> tuple[CollisionShape, ...]:
    """The collision shapes of a robot's description that touch the world's planes
    (description_shapes): those of the links that move, for a fixed base's own links are held
    by their mount whatever touches them (the contact step has no motion to give them); none in
    free space, where the description is not read.

    Args:
        world: the world.
        description: the robot's description (None: none known).
        robot: the robot built from it.

    Raises:
        RefusedError: planes and a robot without <collision> elements on a link that moves (or
            no description).
        GeometryError: a collision that cannot be read (description_shapes).
    """
    if not world.planes:
        return ()
    shapes = moving_shapes(robot, description_shapes(description)
                           if description is not None else ())
    if not shapes:
        raise RefusedError(f"world: {len(world.planes)} plane(s), but robot "
                           f"'{robot.model.name}' has no <collision> element on a link that "
                           "moves to touch them")
    return shapes


def _contact(contact: ContactForce) -> Contact:
    return Contact(link=contact.link, point=_point(contact.point),
                   normal=_vector3(contact.normal), force=_vector3(contact.force),
                   velocity=_vector3(contact.velocity), depth=float(contact.depth))


def _plane_mapping(plane: WorldPlane) -> dict[str, object]:
    """The world_of mapping of one WorldPlane."""
    return {"normal": [plane.normal.x, plane.normal.y, plane.normal.z],
            "point": [plane.point.x, plane.point.y, plane.point.z],
            "friction": plane.friction}


def _vector3(values: np.ndarray) -> Vector3:
    x, y, z = (float(value) for value in values)
    return Vector3(x=x, y=y, z=z)


def _point(values: np.ndarray) -> Point:
    x, y, z = (float(value) for value in values)
    return Point(x=x, y=y, z=z)


__all__ = ["contacts_message", "description_shapes", "package_folders", "world_from_planes",
           "world_message_planes", "world_shapes"]
