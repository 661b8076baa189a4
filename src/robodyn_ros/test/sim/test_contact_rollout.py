"""The compiled contact rollout (sim.contact_rollout) against the preview's stepped path, which
steps SimulatedRobot in the same world with the controller plugins in Python: a two-link arm
whose fingertip ball presses on a table under force control with the table's wrench fed back,
and the same arm falling limp onto it. The two share contact.compiled_step's step, so they
part only by the laws' rounding, which the contact solver's tolerance (1e-6 m/s a sweep)
carries on: the states agree to 1e-6, the metrics and the sampled contacts' forces to 1e-3.
A scenario the solver cannot solve ends with the error naming the step."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.contact import ContactError, ContactSettings, collision_shapes
from robodyn_ros.sim.contact_log import ContactLog
from robodyn_ros.sim.preview import PreviewSettings, preview, runs_compiled
from robodyn_ros.sim.scenarios import scenario_from_mapping
from robodyn_ros.sim.world_scenario import compiled_world_rollout

from helpers.robots import FINGERTIP_ARM, FINGERTIP_RADIUS

START = np.array([0.3, 1.2])  # shoulder, elbow (rad): the fingertip ahead of the shoulder
SETTINGS = PreviewSettings(horizon=0.6, dt=1e-3)
STEPPED = replace(SETTINGS, forward_dynamics_method="cholesky")  # the SimulatedRobot path


@pytest.fixture(scope="module")
def arm():
    robot = Robot.from_urdf_string(FINGERTIP_ARM)
    return robot, collision_shapes(FINGERTIP_ARM)


def table_under_tip(robot: Robot, gap: float) -> dict:
    tip = robot.frame_pose(START, "fore") @ np.array([0.4, 0.0, 0.0, 1.0])
    return {"planes": [{"normal": [0, 0, 1], "point": [0, 0, float(tip[2]) - FINGERTIP_RADIUS
                                                        - gap], "friction": 0.5}]}


def both(robot, shapes, spec):
    scenario = scenario_from_mapping(robot, spec)
    assert runs_compiled(SETTINGS, scenario) and not runs_compiled(STEPPED, scenario)
    return [preview(robot, [scenario], settings, START, np.zeros(2),
                    collision_shapes=shapes)[0] for settings in (SETTINGS, STEPPED)]


def assert_same_run(compiled, stepped) -> None:
    np.testing.assert_allclose(compiled.q, stepped.q, atol=1e-6)
    np.testing.assert_allclose(compiled.effort, stepped.effort, atol=1e-3)
    ours, theirs = compiled.metrics.contact, stepped.metrics.contact
    assert ours.lost_contacts == theirs.lost_contacts
    for field in ("peak_contact_force", "slip_distance", "penetration"):
        assert getattr(ours, field) == pytest.approx(getattr(theirs, field), rel=1e-3,
                                                     abs=1e-6), field
    assert [len(c) for c in compiled.contacts] == [len(c) for c in stepped.contacts]
    for mine, yours in zip(compiled.contacts, stepped.contacts, strict=True):
        for a, b in zip(mine, yours, strict=True):
            assert a.link == b.link
            np.testing.assert_allclose(a.force, b.force, atol=1e-3)
            np.testing.assert_allclose(a.point, b.point, atol=1e-6)


def test_a_force_controlled_fingertip_presses_as_the_stepped_preview_has_it(arm) -> None:
    robot, shapes = arm
    tip = robot.frame_pose(START, "fore") @ np.array([0.4, 0.0, 0.0, 1.0])
    spec = {"name": "press", "world": table_under_tip(robot, 0.002),
            "pose_target": {"frame": "fore", "position": (tip[:3] - [0.05, 0, 0]).tolist(),
                            "force_axes": [0, 0, 1, 0, 0, 0], "force_target": [0, 0, -5, 0, 0, 0],
                            "force_damping": 30.0, "force_integral_gain": 20.0}}
    compiled, stepped = both(robot, shapes, spec)
    assert compiled.metrics.contact.peak_contact_force > 4.0  # it pressed
    assert_same_run(compiled, stepped)


def limp(robot: Robot, gap: float) -> dict:
    """The arm limp over the table, its fingertip `gap` above it."""
    return {"name": "limp", "world": table_under_tip(robot, gap),
            "torque_profile": {"frame": "fore", "times": [0.0], "efforts": [[0.0, 0.0]]}}


def test_a_limp_arm_falls_on_the_table_as_the_stepped_preview_has_it(arm) -> None:
    robot, shapes = arm
    compiled, stepped = both(robot, shapes, limp(robot, 0.01))
    assert compiled.metrics.contact.peak_contact_force > 0.0  # it landed
    assert_same_run(compiled, stepped)


def test_a_step_the_solver_cannot_solve_is_named(arm) -> None:
    robot, shapes = arm
    scenario = scenario_from_mapping(robot, limp(robot, 0.0))
    times = SETTINGS.dt * np.arange(SETTINGS.steps + 1)
    with pytest.raises(ContactError, match=r"scenario 'limp'.* at step 0 in 1 sweeps.*fore"):
        compiled_world_rollout(robot, SETTINGS, START, np.zeros(2), scenario, times, shapes,
                               ContactLog(SETTINGS.dt), ContactSettings(max_iterations=1))
