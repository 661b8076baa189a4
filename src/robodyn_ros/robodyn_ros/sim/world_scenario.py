"""How a preview scenario with a world runs: nothing without collision shapes; by the
compiled contact rollout (sim.contact_rollout) where its law is compiled, else its
SimulatedRobot stepping semi-implicitly with its contacts (contact.time_step); and the contacts
it reports at the sample steps."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from robodyn_ros.contact.compiled_step import NOT_POSITIVE_DEFINITE, Contacts, contacts_of
from robodyn_ros.contact.detection import ContactScene, contact_scene
from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.contact.time_step import (
    ContactError,
    ContactForce,
    ContactSettings,
    contact_forces,
    step_settings,
)
from robodyn_ros.control.whole_body import WholeBodyError, whole_body_failure
from robodyn_ros.errors import SingularMassMatrixError
from robodyn_ros.robot import Robot
from robodyn_ros.sim.contact_log import ContactMetrics
from robodyn_ros.sim.contact_rollout import (
    CHANGE,
    FAILED_STEP,
    LOST_CONTACTS,
    PEAK_FORCE,
    PENETRATION,
    PROGRAMME_NOT_SOLVED,
    SLIP_DISTANCE,
    SOLVER_FLAG,
    STATUS,
    SWEEPS,
    ContactRecord,
    contact_rollout,
)
from robodyn_ros.sim.rollout import Trajectory
from robodyn_ros.sim.scenario_rollout import rollout_failure, rollout_inputs
from robodyn_ros.sim.scenario_run import ScenarioRun
from robodyn_ros.sim.scenarios import Scenario, ScenarioError, WholeBodyPose
from robodyn_ros.sim.simulated_robot import WORLD_INTEGRATOR, SimulatedRobot
from robodyn_ros.sim.wrench_sensor import sensed_links


def check_world(scenario: Scenario, collision_shapes: Sequence[CollisionShape]) -> None:
    """A ScenarioError if the scenario has a world and nothing of the robot can touch it."""
    if scenario.world.planes and not collision_shapes:
        raise ScenarioError(
            f"scenario '{scenario.name}': world has {len(scenario.world.planes)} plane(s) but "
            "the robot has no collision shapes to touch them (give the preview "
            "collision_shapes: contact.collision_shapes of its URDF's <collision> elements)")


def simulated_robot(run: ScenarioRun, **options: Any) -> SimulatedRobot:
    """The SimulatedRobot a stepped run steps (`options` SimulatedRobot's): the settings'
    integrator, or with a world, the semi-implicit step with its contacts."""
    world = run.scenario.world if run.scenario.world.planes else None
    return SimulatedRobot(
        run.robot, WORLD_INTEGRATOR if world else run.settings.integrator, run.settings.dt,
        friction_velocity=run.settings.friction_velocity, q=run.q, qd=run.qd, world=world,
        collision_shapes=run.collision_shapes if world else (), **options)


def compiled_world_rollout(run: ScenarioRun, contact_settings: ContactSettings | None = None,
                           stop_at_limits: bool = True) -> tuple[Trajectory, float]:
    """A run with a world by the contact rollout kernel, its contacts found and solved by
    `contact_settings` (default ContactSettings()): its trajectory and the smallest singular
    value of its frame's J (as compiled_rollout), its contacts' metrics and sample steps'
    contacts into its contact_log. stop_at_limits: as rollout_trajectory's.

    Raises:
        ContactError: a step's contacts not solved, naming the step and the links.
        WholeBodyError: a whole-body pose's programme without an answer, naming the step.
        SingularMassMatrixError, NonFiniteResultError: the state went non-finite.
    """
    robot, settings, scenario = run.robot, run.settings, run.scenario
    inputs = rollout_inputs(robot, settings, run.q, run.qd, scenario, run.times, stop_at_limits)
    scene = contact_scene(robot.model, run.collision_shapes, scenario.world)
    sample_count = len(inputs.trajectory.energy)
    links = sorted({shape.link for shape in scene.shapes})
    sensed = sensed_links(robot.model, scenario.frame)
    record = ContactRecord(
        shape_link=np.array([links.index(shape.link) for shape in scene.shapes], np.int64),
        sensed=np.array([shape.link in sensed for shape in scene.shapes], dtype=bool),
        slid=np.zeros(len(links)), link_force=np.zeros((len(links), 3)),
        link_slip=np.zeros(len(links)), link_points=np.zeros(len(links), np.int64),
        touching=np.zeros(len(links), dtype=bool),
        metrics=np.zeros(4), failure=np.zeros(5), sampled=np.zeros(sample_count, np.int64),
        contacts=contacts_of(sample_count * scene.capacity))
    smallest = contact_rollout(inputs.robot, inputs.law, inputs.stepping, scene.arrays,
                               step_settings(settings.dt, contact_settings or ContactSettings()),
                               inputs.trajectory, record)
    _raise_failure(robot, scenario, scene, record)
    trajectory = inputs.trajectory
    if not (np.isfinite(trajectory.q).all() and np.isfinite(trajectory.qd).all()):
        raise rollout_failure(robot, trajectory.q, trajectory.qd)
    metrics = record.metrics
    run.contact_log.take(
        ContactMetrics(float(metrics[PEAK_FORCE]), float(metrics[SLIP_DISTANCE]),
                       int(metrics[LOST_CONTACTS]), float(metrics[PENETRATION])),
        RecordedContacts(scene, record, run.samples))
    return trajectory, float(smallest)


class RecordedContacts(Mapping[int, tuple[ContactForce, ...]]):
    """The contacts the contact rollout kept at its sample steps (ContactRecord.contacts), by
    step, made into ContactForce records when read."""

    def __init__(self, scene: ContactScene, record: ContactRecord, samples: np.ndarray
                 ) -> None:
        self._scene, self._record = scene, record
        self._index = {int(step): index for index, step in enumerate(samples)
                       if record.sampled[index]}

    def __getitem__(self, step: int) -> tuple[ContactForce, ...]:
        index, capacity = self._index[step], self._scene.capacity
        rows = slice(index * capacity, (index + 1) * capacity)
        kept = Contacts(*(field[rows] for field in self._record.contacts))
        return contact_forces(self._scene, kept, int(self._record.sampled[index]))

    def __iter__(self) -> Iterator[int]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


def _raise_failure(robot: Robot, scenario: Scenario, scene: ContactScene,
                   record: ContactRecord) -> None:
    """The error of a step whose contacts the rollout could not solve, if one was not."""
    step = int(record.failure[FAILED_STEP])
    if step < 0:
        return
    links = ", ".join(sorted({shape.link for shape in scene.shapes}))
    if int(record.failure[STATUS]) == PROGRAMME_NOT_SOLVED and isinstance(scenario,
                                                                          WholeBodyPose):
        error = whole_body_failure(scenario.contacts, scenario.ground,
                                   int(record.failure[SOLVER_FLAG]))
        raise WholeBodyError(f"preview of scenario '{scenario.name}', step {step}: {error}")
    if int(record.failure[STATUS]) == NOT_POSITIVE_DEFINITE:
        raise SingularMassMatrixError(f"preview of scenario '{scenario.name}'", (),
                                      f"at step {step}, with contacts to solve")
    raise ContactError(
        f"robot '{robot.model.name}', scenario '{scenario.name}': the contact solver did not "
        f"converge at step {step} in {int(record.failure[SWEEPS])} sweeps (velocity change "
        f"{record.failure[CHANGE]:.3g} m/s); the shapes that can touch are on {links}")


__all__ = ["check_world", "compiled_world_rollout", "simulated_robot"]
