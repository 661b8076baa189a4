"""One scenario of a preview as its rollouts take it (the robot, the settings, the start state,
the scenario, its step times, what of the robot touches its world and the log its contacts
go into), and the PreviewResult it makes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.contact.time_step import ContactForce
from robodyn_ros.robot import Robot
from robodyn_ros.sim.contact_log import ContactLog, SampleContacts
from robodyn_ros.sim.ilqr import ReachPlan
from robodyn_ros.sim.preview_result import (
    PreviewMetrics,
    PreviewResult,
    PreviewSettings,
    sample_steps,
)
from robodyn_ros.sim.rollout import Trajectory
from robodyn_ros.sim.scenarios import Scenario


@dataclass(frozen=True)
class ScenarioRun:
    """A scenario run from a start state (make one with `start`).

    Attributes:
        robot: the robot simulated.
        settings: the preview's settings.
        q: the start configuration (nq).
        qd: the start velocity (nv; a floating base's v).
        scenario: what is run.
        times: the time of each step, settings.dt apart (steps + 1, from 0).
        samples: the step indices the preview keeps (preview_result.sample_steps).
        collision_shapes: what of the robot touches the scenario's world.
        contact_log: where the run's contacts go, keeping those of the samples.
    """

    robot: Robot
    settings: PreviewSettings
    q: np.ndarray
    qd: np.ndarray
    scenario: Scenario
    times: np.ndarray
    samples: np.ndarray
    collision_shapes: tuple[CollisionShape, ...]
    contact_log: ContactLog

    @classmethod
    def start(
        cls,
        robot: Robot,
        settings: PreviewSettings,
        q: np.ndarray,
        qd: np.ndarray,
        scenario: Scenario,
        collision_shapes: Sequence[CollisionShape] = (),
    ) -> ScenarioRun:
        """The run of `scenario` from (q, q̇), with its times, samples and an empty log."""
        samples = sample_steps(settings)
        return cls(robot, settings, q, qd, scenario, settings.dt * np.arange(settings.steps + 1),
                   samples, tuple(collision_shapes), ContactLog(settings.dt, samples))

    def sampled_contacts(self) -> Sequence[tuple[ContactForce, ...]]:
        """The contacts of the step ending at each sample, () for a scenario without a world."""
        if not self.scenario.world.planes:
            return ()
        return SampleContacts(self.contact_log.kept, self.samples)

    def result(self, trajectory: Trajectory, metrics: PreviewMetrics, started: float,
               plan: ReachPlan | None = None) -> PreviewResult:
        """The run's PreviewResult: its trajectory, its metrics with its contacts', its wall
        time since `started` (time.perf_counter) and an optimal reach's plan."""
        wall_time = time.perf_counter() - started
        return PreviewResult(
            self.scenario.name, self.times, trajectory.q, trajectory.qd, trajectory.tau,
            self.scenario.frame, trajectory.path, self.samples, trajectory.energy,
            replace(metrics, contact=self.contact_log.metrics), wall_time,
            self.settings.horizon / wall_time, self.sampled_contacts(), plan)


__all__ = ["ScenarioRun"]
