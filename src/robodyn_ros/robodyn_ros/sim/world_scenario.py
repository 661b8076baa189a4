"""How a preview scenario with a world runs: nothing without collision shapes, its
SimulatedRobot stepping semi-implicitly with its contacts (contact.time_step), and the
contacts it reports at the sample steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.contact.time_step import ContactForce
from robodyn_ros.robot import Robot
from robodyn_ros.sim.contact_log import ContactLog
from robodyn_ros.sim.preview_result import PreviewSettings
from robodyn_ros.sim.scenarios import Scenario, ScenarioError
from robodyn_ros.sim.simulated_robot import WORLD_INTEGRATOR, SimulatedRobot


def check_world(scenario: Scenario, collision_shapes: Sequence[CollisionShape]) -> None:
    """A ScenarioError if the scenario has a world and nothing of the robot can touch it."""
    if scenario.world.planes and not collision_shapes:
        raise ScenarioError(
            f"scenario '{scenario.name}': world has {len(scenario.world.planes)} plane(s) but "
            "the robot has no collision shapes to touch them (give the preview "
            "collision_shapes: contact.collision_shapes of its URDF's <collision> elements)")


def simulated_robot(robot: Robot, settings: PreviewSettings, q: np.ndarray, qd: np.ndarray,
                    scenario: Scenario, collision_shapes: Sequence[CollisionShape],
                    **options: Any) -> SimulatedRobot:
    """The SimulatedRobot a stepped scenario runs on: the settings' integrator, or with a
    world, the semi-implicit step with its contacts."""
    world = scenario.world if scenario.world.planes else None
    return SimulatedRobot(
        robot, WORLD_INTEGRATOR if world else settings.integrator, settings.dt,
        friction_velocity=settings.friction_velocity, q=q, qd=qd, world=world,
        collision_shapes=tuple(collision_shapes) if world else (), **options)


def sampled_contacts(scenario: Scenario, contact_log: ContactLog, samples: np.ndarray
                     ) -> tuple[tuple[ContactForce, ...], ...]:
    """The contacts of the step ending at each sample, () for a scenario without a world."""
    if not scenario.world.planes:
        return ()
    return tuple(contact_log.kept.get(int(step), ()) for step in samples)


__all__ = ["check_world", "sampled_contacts", "simulated_robot"]
