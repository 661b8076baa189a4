"""A preview scenario's `world`: the robot's collision shapes touch its planes (contact.time_step)
and the metrics measure the contacts. Checked on a brick pushed along the ground (slip and peak
force analytic), an arm that falls limp onto a table (at rest, the contact force balances
gravity: Pinocchio's g(q) = Jᵀ f), free motion that a far plane leaves alone, and the fields
a scenario's world is refused for."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros import Robot
from robodyn_ros.contact import collision_shapes, contact_points, world_of
from robodyn_ros.model import URDFWarning
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import ScenarioError, scenario_from_mapping
from robodyn_ros.testing import example_robot_urdf

from helpers.robots import FINGERTIP_ARM, FINGERTIP_RADIUS

G, MASS, MU = 9.81, 2.0, 0.5
BRICK = f"""<robot name="brick"><link name="brick">
  <inertial><mass value="{MASS}"/><inertia ixx="0.0083" ixy="0" ixz="0" iyy="0.0083" iyz="0"
    izz="0.0133"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link></robot>"""
GROUND = {"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": MU}]}

TABLE = -0.3  # m, the table's top under the arm


def limp(robot: Robot, name: str = "limp", world: dict | None = None, **extra) -> object:
    spec = {"name": name, "torque_profile": {
        "frame": robot.frame_names[-1], "times": [0.0],
        "efforts": [np.zeros(robot.nv).tolist()]}, **extra}
    if world is not None:
        spec["world"] = world
    return scenario_from_mapping(robot, spec)


def test_a_pushed_brick_slides_as_far_as_friction_lets_it() -> None:
    """20 N for 0.2 s on a 2 kg brick, μ 0.5: it slides (F − μ m g)/m while pushed, then μ g
    brakes it; the slip distance and the peak force (m g √(1 + μ²)) within 1 %."""
    robot = Robot.from_urdf_string(BRICK, floating_base=True)
    start = np.array([0.0, 0.0, 0.05, 0.0, 0.0, 0.0, 1.0])
    push = {"frame": "brick", "wrench": [20.0, 0, 0, 0, 0, 0], "start": 0.05, "duration": 0.2}
    scenario = limp(robot, world=GROUND, pushes=[push])
    result = preview(robot, [scenario], PreviewSettings(horizon=0.7, dt=1e-3), start,
                     collision_shapes=collision_shapes(BRICK))[0]
    pushed = (20.0 - MU * MASS * G) / MASS
    speed = pushed * 0.2
    distance = 0.5 * pushed * 0.2**2 + speed**2 / (2 * MU * G)
    contact = result.metrics.contact
    assert contact.slip_distance == pytest.approx(distance, rel=0.01)
    assert result.q[-1, 0] == pytest.approx(distance, rel=0.01)
    assert contact.peak_contact_force == pytest.approx(MASS * G * np.hypot(1.0, MU), rel=0.01)
    assert contact.lost_contacts == 0
    assert contact.penetration < 2e-3
    sliding = int(np.searchsorted(result.times[result.samples], 0.15))
    total = sum(c.force for c in result.contacts[sliding])
    np.testing.assert_allclose(total, [-MU * MASS * G, 0.0, MASS * G], rtol=1e-3, atol=1e-6)
    assert len(result.contacts) == len(result.samples) and result.contacts[0] == ()


def test_an_arm_falls_onto_a_table_and_rests_on_it_in_balance() -> None:
    """Limp from horizontal, the fingertip ball lands on the table and slides outward on the
    edge of its friction cone, ever slower, to rest; there the table's force on it balances
    gravity: g(q) = J_pᵀ f, g and J_p by Pinocchio."""
    robot = Robot.from_urdf_string(FINGERTIP_ARM)
    table = {"planes": [{"normal": [0, 0, 1], "point": [0, 0, TABLE], "friction": 2.0}]}
    result = preview(robot, [limp(robot, world=table)], PreviewSettings(horizon=3.5, dt=1e-3),
                     np.zeros(2), np.zeros(2), collision_shapes=collision_shapes(FINGERTIP_ARM))[0]
    q = result.q[-1]
    assert np.abs(result.qd[-1]).max() < 1e-4
    contacts = result.contacts[-1]
    assert {c.link for c in contacts} == {"fore"}
    force = sum(c.force for c in contacts)
    assert np.hypot(force[0], force[1]) <= 2.0 * force[2] * (1 + 1e-9)
    model = pin.buildModelFromXML(FINGERTIP_ARM)
    data = model.createData()
    gravity = pin.computeGeneralizedGravity(model, data, q)
    centre = model.addFrame(pin.Frame("centre", model.getJointId("elbow"), 0,
                                      pin.SE3(np.eye(3), np.array([0.4, 0.0, 0.0])),
                                      pin.FrameType.OP_FRAME))
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    J = pin.getFrameJacobian(model, data, centre, pin.LOCAL_WORLD_ALIGNED)
    lever = contacts[0].point - data.oMf[centre].translation  # v_p = v_c + ω × lever
    J_point = J[:3] - pin.skew(lever) @ J[3:]
    np.testing.assert_allclose(J_point.T @ force, gravity, atol=1e-3 * np.abs(gravity).max())
    assert len({tuple(c.point) for c in contacts}) == 1  # a ball touches at one point
    height = data.oMf[centre].translation[2] - FINGERTIP_RADIUS
    assert height == pytest.approx(TABLE, abs=2e-3)
    assert result.metrics.contact.penetration < 2e-3


def test_a_plane_out_of_reach_leaves_the_motion_as_it_was() -> None:
    """The world's step is semi-implicit Euler: far from the plane it is the compiled
    semi-implicit rollout's motion."""
    robot = Robot.from_urdf_string(FINGERTIP_ARM)
    far = {"planes": [{"normal": [0, 0, 1], "point": [0, 0, -5.0], "friction": 1.0}]}
    settings = PreviewSettings(horizon=0.3, dt=1e-3, integrator="semi_implicit_euler")
    free, walled = preview(robot, [limp(robot), limp(robot, "far", far)], settings,
                           np.zeros(2), np.zeros(2),
                           collision_shapes=collision_shapes(FINGERTIP_ARM))
    np.testing.assert_allclose(walled.q, free.q, atol=1e-12)
    assert walled.metrics.contact.peak_contact_force == 0.0
    assert free.contacts == () and all(sample == () for sample in walled.contacts)


def test_a_world_is_refused_naming_the_field_or_without_shapes() -> None:
    robot = Robot.from_urdf_string(FINGERTIP_ARM)
    zero = {"planes": [{"normal": [0, 0, 0], "point": [0, 0, 0], "friction": 1.0}]}
    with pytest.raises(ScenarioError, match=r"scenario 'limp': world.planes\[0\].normal"):
        limp(robot, world=zero)
    slippery = {"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": -1}]}
    with pytest.raises(ScenarioError, match=r"planes\[0\].friction"):
        limp(robot, world=slippery)
    with pytest.raises(ScenarioError, match=r"world has 1 plane.* no collision shapes"):
        preview(robot, [limp(robot, world=GROUND)], PreviewSettings(horizon=0.01))


SOLO_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def test_solo12_stands_in_the_preview_on_its_own_feet() -> None:
    """A whole_body_pose scenario in a world: Solo12's feet on the ground (μ 0.8) are the
    simulator's unilateral contacts, the controller's friction cones its model of them. Over
    0.5 s its centre of mass stays within 1 mm, no foot leaves the ground or slides 1 mm, and
    the ground carries its weight."""
    path = example_robot_urdf("solo12")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        robot = Robot.from_urdf(path, floating_base=True)
    shapes = tuple(shape for shape in collision_shapes(path.read_text(), path.parent,
                                                       [path.parents[4]])
                   if shape.link in SOLO_FEET)  # the rest never touches the ground here
    q = robot.neutral()
    joints = {joint.name: joint.q.start for joint in robot.configuration_joints}
    for leg, sign in (("FL", 1), ("FR", 1), ("HL", -1), ("HR", -1)):
        q[joints[f"{leg}_HFE"]], q[joints[f"{leg}_KFE"]] = 0.8 * sign, -1.6 * sign
    floor = world_of(GROUND).planes[0]
    q[2] -= min(contact_points(shape, robot.frame_pose(q, shape.link), floor)
                .heights.min() for shape in shapes)
    stand = scenario_from_mapping(robot, {
        "name": "stand", "world": {"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0],
                                               "friction": 0.8}]},
        "whole_body_pose": {"frame": "base_link",
                            "position": robot.frame_pose(q, "base_link")[:3, 3].tolist(),
                            "contacts": [{"frame": foot, "kind": "3d"} for foot in SOLO_FEET],
                            "friction": 0.8, "min_normal_force": 1.0}})
    result = preview(robot, [stand], PreviewSettings(horizon=0.5, dt=1e-3), q,
                     np.zeros(robot.nv), collision_shapes=shapes)[0]
    drift = robot.centre_of_mass(result.q[-1]) - robot.centre_of_mass(q)
    assert np.linalg.norm(drift) < 1e-3
    contact = result.metrics.contact
    assert contact.lost_contacts == 0 and contact.slip_distance < 1e-3
    assert {c.link for c in result.contacts[-1]} == set(SOLO_FEET)
    total = sum(c.force for c in result.contacts[-1])
    np.testing.assert_allclose(total, [0.0, 0.0, robot.mass * G], atol=0.02 * robot.mass * G)


def test_a_whole_body_pose_refuses_a_bad_ground() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        robot = Robot.from_urdf(example_robot_urdf("solo12"), floating_base=True)
    spec = {"name": "stand", "whole_body_pose": {
        "frame": "base_link", "position": [0, 0, 0.2], "friction": -0.5,
        "contacts": [{"frame": foot, "kind": "3d"} for foot in SOLO_FEET]}}
    with pytest.raises(ScenarioError, match=r"scenario 'stand': whole_body_pose: .*friction"):
        scenario_from_mapping(robot, spec)
