"""ros.contacts: a step's contacts as a Contacts message, a World as WorldPlane messages and
back (checked as contact.world_of checks a world file), and the interfaces as built."""

from __future__ import annotations

import math

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Vector3
from hypothesis import given, settings
from hypothesis import strategies as st
from robodyn_interfaces.msg import Contact, Contacts, PreviewPrediction, PreviewScenario, WorldPlane

from robodyn_ros import Robot
from robodyn_ros.contact import WorldError, collision_shapes, world_of
from robodyn_ros.ros.contacts import contacts_message, world_from_planes, world_message_planes
from robodyn_ros.sim.simulated_robot import SimulatedRobot

MASS, GRAVITY = 2.0, 9.81
BRICK = f"""<robot name="brick"><link name="brick">
  <inertial><mass value="{MASS}"/><inertia ixx="0.0083" ixy="0" ixz="0" iyy="0.0083" iyz="0"
    izz="0.0133"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link></robot>"""

coordinate = st.floats(-10.0, 10.0, allow_nan=False)
triple = st.tuples(coordinate, coordinate, coordinate)
normal = triple.filter(lambda v: math.hypot(*v) > 1e-3)
friction = st.floats(0.0, 5.0, allow_nan=False)
plane = st.fixed_dictionaries({"normal": normal, "point": triple, "friction": friction})


def message_plane(normal, point, friction) -> WorldPlane:
    x, y, z = (float(value) for value in normal)
    px, py, pz = (float(value) for value in point)
    return WorldPlane(normal=Vector3(x=x, y=y, z=z), point=Point(x=px, y=py, z=pz),
                      friction=float(friction))


def vector(message) -> np.ndarray:
    return np.array([message.x, message.y, message.z])


def test_a_resting_bricks_contacts_carry_its_weight_in_the_message() -> None:
    """The brick resting on the ground for 0.5 s: four corner contacts whose message total is
    m g up (the contact step's rest, to 1e-6 N), each contact's fields as the step gave."""
    robot = Robot.from_urdf_string(BRICK, floating_base=True)
    ground = world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": 0.8}]})
    sim = SimulatedRobot(robot, "semi_implicit_euler", 1e-3,
                         q=[0.0, 0.0, 0.05, 0.0, 0.0, 0.0, 1.0], world=ground,
                         collision_shapes=collision_shapes(BRICK))
    for _ in range(500):
        sim.step(np.zeros(6))
    stamp = Time(sec=0, nanosec=500_000_000)
    message = contacts_message(sim.world_contacts, stamp, "odom")
    assert isinstance(message, Contacts)
    assert message.header.stamp == stamp and message.header.frame_id == "odom"
    assert len(message.contacts) == len(sim.world_contacts) == 4
    np.testing.assert_allclose(vector(message.total_force), [0.0, 0.0, MASS * GRAVITY],
                               rtol=0, atol=1e-6)
    for sent, contact in zip(message.contacts, sim.world_contacts, strict=True):
        assert isinstance(sent, Contact) and sent.link == contact.link == "brick"
        for field in ("point", "normal", "force", "velocity"):
            np.testing.assert_array_equal(vector(getattr(sent, field)), getattr(contact, field))
        assert sent.depth == contact.depth
        np.testing.assert_allclose(np.abs(vector(sent.point)), [0.1, 0.1, 0.0], atol=1e-3)


def test_no_contacts_make_an_empty_message_of_zero_total() -> None:
    message = contacts_message((), Time(sec=3), "panda_link0")
    assert list(message.contacts) == [] and message.header.frame_id == "panda_link0"
    assert vector(message.total_force).tolist() == [0.0, 0.0, 0.0]


@settings(max_examples=60, deadline=None)
@given(st.lists(plane, max_size=4))
def test_a_world_goes_to_messages_and_back(planes) -> None:
    """world_of's World → WorldPlanes → World: the same unit normals (to rounding), points
    and frictions; the messages carry the normalised normals."""
    world = world_of({"planes": [{key: list(value) if key != "friction" else value
                                  for key, value in p.items()} for p in planes]})
    messages = world_message_planes(world)
    back = world_from_planes(messages, "scenario 'x': world")
    assert len(messages) == len(back.planes) == len(planes)
    for given_plane, message, plane_back in zip(world.planes, messages, back.planes,
                                                 strict=True):
        np.testing.assert_array_equal(vector(message.normal), given_plane.normal)
        np.testing.assert_allclose(plane_back.normal, given_plane.normal, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(plane_back.point, given_plane.point)
        assert plane_back.friction == given_plane.friction == message.friction


@settings(max_examples=60, deadline=None)
@given(normal, triple, friction)
def test_a_message_plane_is_normalised(raw_normal, point, mu) -> None:
    (plane_back,) = world_from_planes([message_plane(raw_normal, point, mu)]).planes
    expected = np.array(raw_normal) / np.linalg.norm(raw_normal)
    np.testing.assert_allclose(plane_back.normal, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(plane_back.point, point)


BAD_PLANES = [
    (((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.5), "normal", "has no direction"),
    (((0.0, 0.0, math.nan), (0.0, 0.0, 0.0), 0.5), "normal", "must be finite"),
    (((0.0, 0.0, 1.0), (0.0, math.inf, 0.0), 0.5), "point", "must be finite"),
    (((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), -0.1), "friction", "finite number ≥ 0"),
    (((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), math.nan), "friction", "finite number ≥ 0"),
    (((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), math.inf), "friction", "finite number ≥ 0"),
]


@pytest.mark.parametrize(("bad", "field", "reason"), BAD_PLANES,
                         ids=[f"{field}-{k}" for k, (_, field, _) in enumerate(BAD_PLANES)])
@settings(max_examples=10, deadline=None)
@given(good=st.lists(plane, max_size=3), data=st.data())
def test_a_bad_plane_is_refused_naming_it(bad, field, reason, good, data) -> None:
    planes = [message_plane(p["normal"], p["point"], p["friction"]) for p in good]
    index = data.draw(st.integers(0, len(planes)))
    planes.insert(index, message_plane(*bad))
    with pytest.raises(WorldError) as refused:
        world_from_planes(planes, "scenario 'x': world")
    assert str(refused.value).startswith(f"scenario 'x': world[{index}].{field}: ")
    assert reason in str(refused.value)


def test_the_interfaces_carry_the_contact_fields() -> None:
    """The messages as built: a scenario's world and a prediction's contact metrics."""
    assert Contact.get_fields_and_field_types() == {
        "link": "string", "point": "geometry_msgs/Point", "normal": "geometry_msgs/Vector3",
        "force": "geometry_msgs/Vector3", "velocity": "geometry_msgs/Vector3",
        "depth": "double"}
    assert Contacts.get_fields_and_field_types() == {
        "header": "std_msgs/Header", "contacts": "sequence<robodyn_interfaces/Contact>",
        "total_force": "geometry_msgs/Vector3"}
    assert WorldPlane.get_fields_and_field_types() == {
        "normal": "geometry_msgs/Vector3", "point": "geometry_msgs/Point", "friction": "double"}
    assert PreviewScenario.get_fields_and_field_types()["world"] == \
        "sequence<robodyn_interfaces/WorldPlane>"
    fields = PreviewPrediction.get_fields_and_field_types()
    assert {name: fields[name] for name in ("contacts", "peak_contact_force", "slip_distance",
                                            "lost_contacts", "penetration")} == {
        "contacts": "sequence<robodyn_interfaces/Contacts>", "peak_contact_force": "double",
        "slip_distance": "double", "lost_contacts": "uint32", "penetration": "double"}
