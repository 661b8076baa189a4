"""The compiled contact rollout (sim.contact_rollout) against the preview's stepped path, which
steps SimulatedRobot in the same world with the controller plugins in Python: a two-link arm
whose fingertip ball presses on a table under force control with the table's wrench fed back,
the same arm falling limp onto it, and Solo12 standing on its feet under whole-body control
against SimulatedRobot and WholeBodyController stepped in Python. The two share
contact.compiled_step's step, so they part only by the laws' rounding, which the contact
solver's tolerance (1e-6 m/s a sweep) carries on: the states agree to 1e-6, the metrics and
the sampled contacts' forces to 1e-3. A scenario the solver cannot solve, or whose whole-body
programme has no answer, ends with the error naming the step."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.contact import ContactError, ContactSettings, collision_shapes
from robodyn_ros.control.whole_body import WholeBodyController, WholeBodyError
from robodyn_ros.sim.floating_preview import floating_preview_one
from robodyn_ros.sim.preview import PreviewSettings, preview, runs_compiled
from robodyn_ros.sim.scenario_rollout import whole_body_targets
from robodyn_ros.sim.scenario_run import ScenarioRun
from robodyn_ros.sim.scenarios import scenario_from_mapping
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.sim.world_scenario import compiled_world_rollout
from robodyn_ros.testing.contact_scenes import (
    GROUND_FRICTION,
    SOLO12_FEET,
    box_on_ground,
    solo12_crouched,
)

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
    run = ScenarioRun.start(robot, SETTINGS, START, np.zeros(2), scenario, shapes)
    with pytest.raises(ContactError, match=r"scenario 'limp'.* at step 0 in 1 sweeps.*fore"):
        compiled_world_rollout(run, ContactSettings(max_iterations=1))


# -- a floating base: a torque profile, and whole-body control on its own feet --------------------


def test_a_tumbling_box_lands_as_simulated_robot_steps_it() -> None:
    """A box (testing.contact_scenes) dropped from 5 cm, tilted and spinning, its torque
    profile a push along x then nothing, in the contact rollout (a floating base's torque
    profile in a world) against SimulatedRobot stepped in Python: one trajectory to 1e-6; it
    lands on a face (four contacts) at rest, carrying its weight."""
    scene = box_on_ground(0.6)
    robot = scene.robot()
    q = scene.q.copy()
    q[2] += 0.05
    q[3:7] = [0.2, 0.1, 0.0, 1.0] / np.linalg.norm([0.2, 0.1, 0.0, 1.0])
    v = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 3.0])
    settings = PreviewSettings(horizon=0.8, dt=1e-3)
    spec = {"name": "tumble", "world": {"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0],
                                                    "friction": 0.6}]},
            "torque_profile": {"frame": "box", "times": [0.0, 0.2],
                               "efforts": [[3.0, 0, 0, 0, 0, 0], [0.0] * 6]}}
    scenario = scenario_from_mapping(robot, spec)
    result = preview(robot, [scenario], settings, q, v, collision_shapes=scene.shapes())[0]
    simulation = SimulatedRobot(robot, "semi_implicit_euler", settings.dt, q=q, qd=v,
                                friction_velocity=settings.friction_velocity,
                                world=scenario.world, collision_shapes=scene.shapes())
    times = settings.dt * np.arange(settings.steps)
    for k, effort in enumerate(scenario.reference(times, q)[:, 0]):
        simulation.step(effort)
        np.testing.assert_allclose(result.q[k + 1], simulation.q, atol=1e-6,
                                   err_msg=f"step {k + 1}")
    assert len(result.contacts[-1]) == 4
    total = sum(contact.force for contact in result.contacts[-1])
    np.testing.assert_allclose(total, [0.0, 0.0, robot.mass * 9.81], atol=1e-3 * robot.mass)


# -- a floating base: whole-body control on its own feet -----------------------------------------

GROUND = {"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": GROUND_FRICTION}]}


@pytest.fixture(scope="module")
def solo12():
    """Solo12 crouched on its four feet (their collision meshes), the feet just on the
    ground."""
    scene = solo12_crouched(0.0)
    return (scene.robot(), tuple(shape for shape in scene.shapes() if shape.link in SOLO12_FEET),
            scene.q)


def stand(robot: Robot, q: np.ndarray, contacts: list[dict]) -> object:
    """Stand where it is: the base's pose and the centre of mass held, the feet on the
    ground."""
    base = robot.frame_pose(q, "base_link")[:3, 3]
    return scenario_from_mapping(robot, {
        "name": "stand", "world": GROUND,
        "whole_body_pose": {"frame": "base_link", "position": base.tolist(),
                            "contacts": contacts, "friction": GROUND_FRICTION,
                            "min_normal_force": 1.0}})


def test_a_quadruped_under_whole_body_control_as_stepped_in_python(solo12) -> None:
    """Solo12's whole-body pose in a world by the contact rollout (the WHOLE_BODY law: its
    programme solved by DAQP inside the kernel) against SimulatedRobot in the same world under
    WholeBodyController in Python, 0.3 s: one trajectory to 1e-6, the efforts to 1e-3 N·m;
    the robot settled on its feet (its centre of mass within 2 mm) and none left the
    ground."""
    robot, shapes, q = solo12
    scenario = stand(robot, q, [{"frame": foot, "kind": "3d"} for foot in SOLO12_FEET])
    settings = PreviewSettings(horizon=0.3, dt=1e-3)
    result = preview(robot, [scenario], settings, q, np.zeros(robot.nv),
                     collision_shapes=shapes)[0]
    simulation = SimulatedRobot(robot, "semi_implicit_euler", settings.dt, q=q,
                                friction_velocity=settings.friction_velocity,
                                world=scenario.world, collision_shapes=shapes)
    controller = WholeBodyController(robot, scenario.contacts,
                                     whole_body_targets(robot, scenario, q), scenario.ground)
    for k in range(settings.steps):
        effort = controller.torque(simulation.q, simulation.qd)
        np.testing.assert_allclose(result.effort[k], effort, atol=1e-3, err_msg=f"step {k}")
        simulation.step(effort)
        np.testing.assert_allclose(result.q[k + 1], simulation.q, atol=1e-6,
                                   err_msg=f"step {k + 1}")
    drift = robot.centre_of_mass(result.q[-1]) - robot.centre_of_mass(q)
    assert np.linalg.norm(drift) < 2e-3
    assert result.metrics.contact.lost_contacts == 0
    assert {c.link for c in result.contacts[-1]} == set(SOLO12_FEET)


def test_a_programme_without_an_answer_is_named_with_its_step(solo12) -> None:
    """FL_FOOT held both as a point and whole while the robot moves: no v̇ holds both, so the
    rollout ends at step 0 with a WholeBodyError naming the scenario, the step and the
    contacts, never a trajectory."""
    robot, shapes, q = solo12
    contacts = [{"frame": "FL_FOOT", "kind": "3d"}, {"frame": "FL_FOOT", "kind": "6d"},
                {"frame": "HR_FOOT", "kind": "3d"}]
    v = np.random.default_rng(0).normal(size=robot.nv)
    with pytest.raises(WholeBodyError, match=r"scenario 'stand', step 0: .*'FL_FOOT' \(3d\), "
                                             r"'FL_FOOT' \(6d\), 'HR_FOOT' \(3d\): .*infeasible"):
        floating_preview_one(robot, PreviewSettings(horizon=0.01, dt=1e-3), q, v,
                             stand(robot, q, contacts), collision_shapes=shapes)
