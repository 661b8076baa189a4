"""The compiled step's detection (contact.compiled_step) against geometry's numpy support
points (CollisionShape.support_points through contact_points): every shape kind, placed off its
link's origin, the link at any orientation near any plane. The contacts of a step are those
of its start: each is a candidate point of contact_points with its height; with at most four
candidates under the margin, exactly those; with more, the lowest and the extremes along the
plane's two tangents (at most five), to rounding where candidates tie; in the shape's order
whichever of the mesh's clusters they come from. A step's impulses hold every contact's
conditions, those of the open contacts it left out of its solve among them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.contact import CollisionShape, Plane, World, contact_points, contact_step
from robodyn_ros.contact.time_step import ContactSettings
from robodyn_ros.model.inertia import rotation_from_rpy
from robodyn_ros.robot.free_flyer import quaternion_of

LINK = "body"
URDF = f"""<robot name="one"><link name="{LINK}"><inertial><mass value="1"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link></robot>"""
MARGIN = 1e-3
# a mesh's vertices, enough of them for several of detection's clusters
HULL = np.random.default_rng(5).normal(size=(120, 3)) * [0.05, 0.03, 0.02]
SIZES = {"sphere": (0.04,), "box": (0.1, 0.06, 0.04), "cylinder": (0.03, 0.1),
         "capsule": (0.02, 0.08), "mesh": ()}

angles = st.floats(-np.pi, np.pi)


def shape_of(kind: str, rpy: tuple[float, float, float], offset: np.ndarray) -> CollisionShape:
    placement = np.eye(4)
    placement[:3, :3], placement[:3, 3] = rotation_from_rpy(rpy), offset
    return CollisionShape(LINK, kind, SIZES[kind], placement,
                          HULL if kind == "mesh" else np.zeros((0, 3)))


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(sorted(SIZES)), shape_rpy=st.tuples(angles, angles, angles),
       link_rpy=st.tuples(angles, angles, angles), standing=st.booleans(),
       normal_rpy=st.tuples(angles, angles), depth=st.floats(-0.01, 0.01))
def test_the_contacts_are_the_shapes_support_points_under_the_margin(
        kind, shape_rpy, link_rpy, standing, normal_rpy, depth) -> None:
    robot = Robot.from_urdf_string(URDF, floating_base=True)
    shape = shape_of(kind, (0.0, 0.0, 0.0) if standing else shape_rpy, np.array([0.02, 0, 0]))
    plane = Plane(rotation_from_rpy((*normal_rpy, 0.0))[:, 2], np.array([0.1, -0.2, 0.3]), 0.5)
    rotation = np.eye(3) if standing else rotation_from_rpy(link_rpy)
    if standing:  # a face (or a cylinder's end) flat on the plane: many candidates tie
        rotation = rotation_from_rpy((*normal_rpy, 0.0))
    pose = np.eye(4)
    pose[:3, :3] = rotation
    lowest = contact_points(shape, pose, plane).heights.min()
    pose[:3, 3] = plane.point - (lowest + depth) * plane.normal  # its lowest point at −depth
    candidates = contact_points(shape, pose, plane)
    q = np.concatenate([pose[:3, 3], quaternion_of(rotation)])
    step = contact_step(robot, (shape,), World((plane,)), q, np.zeros(6), np.zeros(6), 1e-3,
                        ContactSettings(margin=MARGIN))
    under = np.flatnonzero(candidates.heights < MARGIN)
    found = np.array([contact.point for contact in step.contacts]).reshape(-1, 3)
    match = [int(np.argmin(np.linalg.norm(candidates.points - point, axis=1)))
             for point in found]
    np.testing.assert_allclose(found, candidates.points[match], atol=1e-12)
    np.testing.assert_allclose([-contact.depth for contact in step.contacts],
                               candidates.heights[match], atol=1e-12)
    assert match == sorted(match)  # in the shape's order
    if len(under) <= 4:
        assert match == under.tolist()
        return
    assert 1 <= len(match) <= 5 and len(set(match)) == len(match)
    heights, along = candidates.heights[match], candidates.points[match] @ plane.frame[1:].T
    assert abs(heights.min() - candidates.heights[under].min()) < 1e-12
    reach = candidates.points[under] @ plane.frame[1:].T
    np.testing.assert_allclose(along.min(axis=0), reach.min(axis=0), atol=1e-12)
    np.testing.assert_allclose(along.max(axis=0), reach.max(axis=0), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(rpy=st.tuples(angles, angles, angles), depth=st.floats(-0.002, 0.0005),
       velocity=st.tuples(*[st.floats(-1.0, 1.0)] * 3),
       spin=st.tuples(*[st.floats(-20.0, 20.0)] * 3), friction=st.floats(0.0, 1.5))
def test_every_contact_of_a_step_holds_signorini_and_coulomb(rpy, depth, velocity, spin,
                                                             friction) -> None:
    """A box falling and spinning onto a plane, its lowest corner at −depth: after the step
    every contact found, open or closed, has its normal velocity at or over its bound
    u_min = −h/dt (−baumgarte h/dt inside), a contact pushing with over 1 mN at it, and every
    force pushes inside its cone (to 1e-5 m/s and 1e-9 N: the sweeps run to a change of
    1e-9 m/s, since on a box's redundant corners they converge slowly, their distance to the
    answer many times their last change; relaxed impulses of contacts that open decay
    towards zero)."""
    robot = Robot.from_urdf_string(URDF, floating_base=True)
    shape = shape_of("box", (0.0, 0.0, 0.0), np.zeros(3))
    plane = Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), friction)
    pose = np.eye(4)
    pose[:3, :3] = rotation_from_rpy(rpy)
    pose[:3, 3] = -(contact_points(shape, pose, plane).heights.min() + depth) * plane.normal
    q = np.concatenate([pose[:3, 3], quaternion_of(pose[:3, :3])])
    v = np.concatenate([np.array(velocity) - [0.0, 0.0, 1.0], pose[:3, :3].T @ spin])
    settings_ = ContactSettings(margin=MARGIN, tolerance=1e-9, max_iterations=100_000)
    step = contact_step(robot, (shape,), World((plane,)), q, v, np.zeros(6), 1e-3, settings_)
    for contact in step.contacts:
        height = -contact.depth
        least = -(settings_.baumgarte if height < 0.0 else 1.0) * height / 1e-3
        normal_velocity = contact.velocity @ plane.normal
        normal_force = contact.force @ plane.normal
        assert normal_velocity >= least - 1e-5
        assert normal_force >= -1e-9
        tangential = np.linalg.norm(contact.force - normal_force * plane.normal)
        assert tangential <= friction * normal_force * (1 + 1e-9) + 1e-9
        if normal_force > 1e-3:  # an impulse over 1e-6 N·s: the sweeps leave smaller ones
            assert abs(normal_velocity - least) < 1e-5


def test_an_open_edge_the_impact_tips_down_is_brought_into_the_solve() -> None:
    """A light bar (I = 1e-4 kg m², 0.1 m long) landing on one end of a frictionless plane,
    1e-3 rad off flat, spun so that its raised end does not fall: its free motion leaves that
    end's open contacts out of the sweeps, and the impact on the low end tips the raised one
    down through its 0.1 mm gap (a seesaw: the raised end gains about 24 times what the
    centre loses). Those contacts are brought in and end at their bound, pushing."""
    light = URDF.replace('"0.01"', '"1e-4"')
    robot = Robot.from_urdf_string(light, floating_base=True)
    shape = shape_of("box", (0.0, 0.0, 0.0), np.zeros(3))
    plane = Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.0)
    pose = np.eye(4)
    pose[:3, :3] = rotation_from_rpy((0.0, 1e-3, 0.0))  # the end at x = −0.05 m raised
    pose[:3, 3] = -contact_points(shape, pose, plane).heights.min() * plane.normal
    spin = np.array([0.0, 2.0 / SIZES["box"][0], 0.0])  # the raised end still, the low at 2 m/s
    v = np.concatenate([pose[:3, :3].T @ [0.0, 0.0, -1.0], pose[:3, :3].T @ spin])
    step = contact_step(robot, (shape,), World((plane,)), np.concatenate(
        [pose[:3, 3], quaternion_of(pose[:3, :3])]), v, np.zeros(6), 1e-3,
        ContactSettings(margin=MARGIN))
    raised = [contact for contact in step.contacts if contact.depth < -5e-5]
    assert len(raised) == 2
    for contact in raised:
        least = contact.depth / 1e-3  # −h/dt, h = −depth
        assert abs(contact.velocity[2] - least) < 1e-5 and contact.force[2] > 1.0


@settings(max_examples=40, deadline=None)
@given(rpy=st.tuples(angles, angles, angles), depth=st.floats(-0.0009, 0.002),
       velocity=st.tuples(*[st.floats(-1.0, 1.0)] * 3),
       spin=st.tuples(*[st.floats(-20.0, 20.0)] * 3))
def test_a_contact_moves_as_its_point_on_the_link_after_the_step(rpy, depth, velocity,
                                                                 spin) -> None:
    """Each contact's velocity after the step, open or solved (the step forms J's rows only
    for those it solves, the others' velocities from the bodies' velocities), is that of its
    point fixed to the link at the step's start under the velocity after the step: the central
    difference of the point's position along q ⊕ ε v⁺ (ε = 1e-6 s, to 1e-7 m/s)."""
    robot = Robot.from_urdf_string(URDF, floating_base=True)
    shape = shape_of("mesh", (0.3, -0.2, 0.1), np.array([0.02, 0.01, 0.0]))
    plane = Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.7)
    pose = np.eye(4)
    pose[:3, :3] = rotation_from_rpy(rpy)
    lowest = contact_points(shape, pose, plane).heights.min()
    pose[:3, 3] = -(lowest + depth) * plane.normal
    q = np.concatenate([pose[:3, 3], quaternion_of(pose[:3, :3])])
    v = np.concatenate([np.array(velocity) - [0.0, 0.0, 1.0], pose[:3, :3].T @ spin])
    step = contact_step(robot, (shape,), World((plane,)), q, v, np.zeros(6), 1e-3,
                        ContactSettings(margin=MARGIN))
    assert step.contacts
    start = robot.frame_pose(q, LINK)
    epsilon = 1e-6
    ahead, behind = (robot.frame_pose(robot.integrate(q, step.v, dt), LINK)
                     for dt in (epsilon, -epsilon))
    for contact in step.contacts:
        local = np.linalg.solve(start, np.append(contact.point, 1.0))
        moved = (ahead @ local - behind @ local)[:3] / (2 * epsilon)
        np.testing.assert_allclose(contact.velocity, moved, atol=1e-7)
