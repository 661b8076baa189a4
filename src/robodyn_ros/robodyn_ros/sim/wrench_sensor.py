"""A simulated force/torque sensor: what it reads of the world's contacts.

A sensor at a frame reads the contacts on the links its frame's body carries (its link, the
links fixed to it, and every body beyond it): a wrist sensor reads the hand, a foot sensor its
foot and not the other feet; a sensor on a fixed base reads every contact. The reading is
their wrench [force; torque] on the robot about the frame's origin, world axes
(contact.wrench_about), as the operational-space controller's measured wrench takes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn_ros.contact.time_step import ContactForce, wrench_about
from robodyn_ros.model.model import Model
from robodyn_ros.robot import Robot


@dataclass(frozen=True)
class WrenchSensor:
    """A force/torque sensor: its frame and the links whose contacts it reads
    (sensed_links)."""

    frame: str
    links: frozenset[str]


def wrench_sensor(model: Model, frame: str) -> WrenchSensor:
    """The sensor at `frame` of the robot `model`."""
    return WrenchSensor(frame, sensed_links(model, frame))


def sensed_links(model: Model, frame: str) -> frozenset[str]:
    """The links whose contacts a force/torque sensor at `frame` reads.

    Args:
        model: the robot's model.
        frame: one of its frames.

    Returns:
        The links of the frame's body (its link and the links fixed to it) and of every body
        beyond it (its subtree): every link for a frame on a fixed base.
    """
    beyond = {int(model.frame_body[model.frame_index(frame)])}
    for joint, parent in enumerate(model.parent):  # parents come before their children
        if int(parent) in beyond:
            beyond.add(joint)
    return frozenset(link for link, body in zip(model.frame_names, model.frame_body, strict=True)
                     if int(body) in beyond)


def sensor_reading(robot: Robot, q: np.ndarray, contacts: tuple[ContactForce, ...],
                   sensor: WrenchSensor) -> np.ndarray:
    """What a force/torque sensor reads of the world.

    Args:
        robot: the robot simulated.
        q: its configuration.
        contacts: the last step's contacts with the world (SimulatedRobot.world_contacts).
        sensor: the sensor.

    Returns:
        (6,) the wrench [force; torque] (N, N·m) of the contacts on the sensor's links on the
        robot, about its frame's origin at q, world axes; zeros when none of them touches.
    """
    sensed = tuple(contact for contact in contacts if contact.link in sensor.links)
    if not sensed:
        return np.zeros(6)
    return wrench_about(sensed, robot.frame_pose(q, sensor.frame)[:3, 3])


__all__ = ["WrenchSensor", "sensed_links", "sensor_reading", "wrench_sensor"]
