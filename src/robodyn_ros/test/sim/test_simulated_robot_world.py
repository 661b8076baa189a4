"""SimulatedRobot in a world with planes: every step is contact.time_step's, under the same
joint torques (damping, friction, external wrenches) as a step in free space."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.contact import ContactSettings, collision_shapes, contact_step, world_of
from robodyn_ros.model import URDFWarning
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing import example_robot_urdf

URDF = """<robot name="brick"><link name="brick">
  <inertial><mass value="2"/><inertia ixx="0.0083" ixy="0" ixz="0" iyy="0.0083" iyz="0"
    izz="0.0133"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link></robot>"""
GROUND = world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": 0.8}]})
START = np.array([0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 1.0])


def brick() -> Robot:
    return Robot.from_urdf_string(URDF, floating_base=True)


def test_a_dropped_brick_steps_as_the_contact_step_and_rests_carrying_its_weight() -> None:
    robot, shapes = brick(), collision_shapes(URDF)
    sim = SimulatedRobot(robot, "semi_implicit_euler", 1e-3, q=START, world=GROUND,
                         collision_shapes=shapes)
    q, v = START, np.zeros(6)
    for _ in range(600):
        sim.step(np.zeros(6))
        step = contact_step(robot, shapes, GROUND, q, v, np.zeros(6), 1e-3)
        q, v = step.q, step.v
        np.testing.assert_array_equal(sim.q, q)
    assert sim.q[2] == pytest.approx(0.05, abs=1e-6)
    assert {contact.link for contact in sim.world_contacts} == {"brick"}
    total = sum(contact.force for contact in sim.world_contacts)
    np.testing.assert_allclose(total, [0.0, 0.0, 2.0 * 9.81], atol=1e-6)
    assert max(contact.depth for contact in sim.world_contacts) < 2e-3


def test_a_push_slides_the_brick_against_its_friction() -> None:
    """A horizontal push above μ m g accelerates it at (F − μ m g)/m."""
    robot = brick()
    rest = START.copy()
    rest[2] = 0.05
    sim = SimulatedRobot(robot, "semi_implicit_euler", 1e-3, q=rest, world=GROUND,
                         collision_shapes=collision_shapes(URDF))
    push = 0.8 * 2.0 * 9.81 + 4.0  # N
    sim.apply_wrench("brick", [push, 0.0, 0.0, 0.0, 0.0, 0.0])
    for _ in range(500):
        sim.step(np.zeros(6))
    assert sim.qd[0] == pytest.approx(4.0 / 2.0 * 0.5, rel=1e-3)
    for contact in sim.world_contacts:  # each corner slides with the brick, on the plane
        np.testing.assert_allclose(contact.velocity, [sim.qd[0], 0.0, 0.0], atol=1e-6)


def test_a_world_takes_the_semi_implicit_step_and_known_links() -> None:
    robot = brick()
    with pytest.raises(ValueError, match="choose integrator 'semi_implicit_euler'"):
        SimulatedRobot(robot, "rk4", q=START, world=GROUND,
                       collision_shapes=collision_shapes(URDF))
    other = collision_shapes(URDF.replace('link name="brick"', 'link name="slab"'))
    with pytest.raises(ValueError, match="collision_shapes: robot 'brick' has no link slab"):
        SimulatedRobot(robot, "semi_implicit_euler", q=START, world=GROUND,
                       collision_shapes=other, contact_settings=ContactSettings())


def test_solo12_dropped_on_its_meshes_lands_on_its_feet() -> None:
    """Solo12 (example-robot-data, meshes read through coal) dropped from 0.4 m with its
    joints limp: it lands on its feet and its legs fold, 400 steps without a ContactError
    (without the solver's relaxation its sweeps cycled at step 328), no point deeper than
    2 mm."""
    path = example_robot_urdf("solo12")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)  # the sensor links' inertias
        robot = Robot.from_urdf(path, floating_base=True)
    shapes = collision_shapes(path.read_text(), path.parent, [path.parents[4]])
    q = robot.default_positions()
    q[2] = 0.4
    sim = SimulatedRobot(robot, "semi_implicit_euler", 1e-3, q=q, world=GROUND,
                         collision_shapes=shapes)
    touched, deepest = set(), 0.0
    for _ in range(400):
        sim.step(np.zeros(robot.nv))
        touched |= {contact.link for contact in sim.world_contacts}
        deepest = max([deepest, *(contact.depth for contact in sim.world_contacts)])
    assert {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"} <= touched
    assert deepest < 2e-3
