"""sim_node in a world over real DDS: a brick dropped on the ground (parameter world_file)
publishes its contacts on `contacts` with each joint state, landing when free fall says and
settling on its four corners carrying m g; a fixed-base arm without a world publishes empty
contacts in its root frame; a bad world is refused naming its parameter and field, at start
and as a change; a mesh of a description file is found from the file's folder; and
`robodyn sim --world` names a bad world file before it starts anything."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import Contacts
from sensor_msgs.msg import JointState

from robodyn_ros.cli import main
from robodyn_ros.ros.sim_node import SimNode

from helpers.nodes import Peer, listening, stopped, wait_for
from helpers.robots import CHAIN

MASS, GRAVITY, SIZE = 2.0, 9.81, (0.2, 0.2, 0.1)  # kg, m/s², m
DROP = 0.25  # m from the brick's lowest face to the ground
INERTIA = 'ixx="0.0083" ixy="0" ixz="0" iyy="0.0083" iyz="0" izz="0.0133"'


def brick(geometry: str = '<box size="0.2 0.2 0.1"/>') -> str:
    return (f'<robot name="brick"><link name="brick"><inertial><mass value="{MASS}"/>'
            f"<inertia {INERTIA}/></inertial><collision><geometry>{geometry}</geometry>"
            "</collision></link></robot>")


GROUND = "planes:\n  - {normal: [0, 0, 1], point: [0, 0, 0], friction: 0.8}\n"
START = [0.0, 0.0, SIZE[2] / 2 + DROP, 0.0, 0.0, 0.0, 1.0]


def seconds(message) -> float:
    return message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec


def vector(message) -> np.ndarray:
    return np.array([message.x, message.y, message.z])


def test_a_dropped_brick_lands_and_carries_its_weight(ros, tmp_path) -> None:
    (tmp_path / "ground.yaml").write_text(GROUND)
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=brick()), Parameter("floating_base", value=True),
        Parameter("world_file", value=str(tmp_path / "ground.yaml")),
        Parameter("initial_positions", value=START), Parameter("autostart", value=False)])
    peer = listening(ros, node, contacts=Contacts, joint_states=JointState, odometry=Odometry)
    try:
        assert wait_for(lambda: peer.contacts and seconds(peer.contacts[-1]) >= 0.8)
        contacts = list(peer.contacts)
        last = seconds(contacts[-1])
        assert wait_for(lambda: seconds(peer.joint_states[-1]) >= last)
        states = [m for m in peer.joint_states if seconds(m) <= last]
        assert node.sim.integrator == "semi_implicit_euler"  # the rk4 default, switched
    finally:
        stopped(peer)
    assert seconds(contacts[0]) == 0.0 and not contacts[0].contacts  # in the air
    assert {m.header.frame_id for m in contacts} == {"odom"}
    # stamped as the joint states, one with each
    assert [seconds(m) for m in contacts] == [seconds(m) for m in states]
    landing = math.sqrt(2 * DROP / GRAVITY)  # s of free fall to the 1 mm contact margin
    first = next(m for m in contacts if m.contacts)
    assert landing - 0.01 <= seconds(first) <= landing + 0.01, seconds(first)
    for message in (m for m in contacts if seconds(m) >= 0.6):  # at rest on four corners
        np.testing.assert_allclose(vector(message.total_force), [0.0, 0.0, MASS * GRAVITY],
                                   rtol=0, atol=0.01 * MASS * GRAVITY)
        assert len(message.contacts) == 4
        corners = sorted(tuple(np.sign(vector(c.point)[:2])) for c in message.contacts)
        assert corners == sorted(itertools.product((-1.0, 1.0), repeat=2))
        for contact in message.contacts:
            assert contact.link == "brick"
            np.testing.assert_allclose(np.abs(vector(contact.point)), [0.1, 0.1, 0.0],
                                       atol=2e-3)
            assert vector(contact.normal).tolist() == [0.0, 0.0, 1.0]
            assert abs(contact.depth) < 2e-3
        total = sum(vector(contact.force) for contact in message.contacts)
        np.testing.assert_allclose(vector(message.total_force), total, rtol=0, atol=1e-12)


ARM = """<robot name="arm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="rod"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="10"/></joint>
  <link name="rod"><inertial><origin xyz="0 0 0.25"/><mass value="1"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001"/></inertial>
    <collision><origin xyz="0 0 0.25"/><geometry><cylinder radius="0.03" length="0.5"/>
    </geometry></collision></link></robot>"""
ROD_MASS, ROD_COM = 1.0, np.array([0.0, 0.0, 0.25])  # kg; m in the rod's frame


def test_a_fixed_arm_falls_onto_the_table_it_stands_on(ros) -> None:
    """A rod hinged on a base standing on the plane (the base's own box on it, held by its
    mount): the rod falls onto the plane and rests there, its contacts' moment about the hinge
    balancing gravity's (statics, to 1 %), published in the root frame."""
    table = "{planes: [{normal: [0, 0, 1], point: [0, 0, -0.05], friction: 0.5}]}"
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=ARM), Parameter("world", value=table),
        Parameter("initial_positions", value=[0.3]), Parameter("autostart", value=False)])
    peer = listening(ros, node, contacts=Contacts, joint_states=JointState)
    try:
        assert wait_for(lambda: peer.contacts and seconds(peer.contacts[-1]) >= 1.0)
        contacts = list(peer.contacts)
        assert wait_for(lambda: seconds(peer.joint_states[-1]) >= seconds(contacts[-1]))
        states = {seconds(m): m for m in peer.joint_states}
        robot = node.sim.robot
    finally:
        stopped(peer)
    assert {m.header.frame_id for m in contacts} == {"base"}
    for message in (m for m in contacts if seconds(m) >= 0.8):  # at rest on the plane
        assert message.contacts and {c.link for c in message.contacts} == {"rod"}
        pose = robot.frame_pose(np.array(states[seconds(message)].position), "rod")
        hinge, com = pose[:3, 3], pose[:3, 3] + pose[:3, :3] @ ROD_COM
        weight = np.cross(com - hinge, [0.0, 0.0, -ROD_MASS * GRAVITY])
        held = sum(np.cross(vector(c.point) - hinge, vector(c.force)) for c in message.contacts)
        assert abs(held[1] + weight[1]) <= 0.01 * abs(weight[1]), (held, weight)


def test_a_fixed_arm_without_a_world_publishes_empty_contacts(ros) -> None:
    node = SimNode(parameter_overrides=[Parameter("robot_description", value=CHAIN),
                                        Parameter("autostart", value=False)])
    peer = listening(ros, node, contacts=Contacts)
    try:
        assert wait_for(lambda: len(peer.contacts) >= 5)
        root = node.sim.robot.model.root_link
    finally:
        stopped(peer)
    for message in peer.contacts:
        assert message.header.frame_id == root and not message.contacts
        assert vector(message.total_force).tolist() == [0.0, 0.0, 0.0]


def test_a_bad_world_at_start_is_refused_naming_its_field(ros) -> None:
    zero = "{planes: [{normal: [0, 0, 0], point: [0, 0, 0], friction: 0.8}]}"
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=brick()), Parameter("floating_base", value=True),
        Parameter("world", value=zero), Parameter("diagnostic_period", value=0.2)])
    peer = Peer(ros, node)
    try:
        assert wait_for(lambda: peer.reported("world.planes[0].normal: [0.0, 0.0, 0.0] has no "
                                              "direction", DiagnosticStatus.ERROR))
        assert node.sim is None  # no robot in service
    finally:
        stopped(peer)


def test_world_changes_are_taken_or_refused_naming_the_field(ros, tmp_path) -> None:
    """On a brick resting on the ground: each bad change is refused with the field and the
    simulation goes on as it was; a robot without collisions is refused a world; a ground
    1 cm lower is taken."""
    (tmp_path / "bad.yaml").write_text(GROUND.replace("0.8", "-0.8"))
    ground = "{planes: [{normal: [0, 0, 1], point: [0, 0, 0], friction: 0.8}]}"
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=brick()), Parameter("floating_base", value=True),
        Parameter("world", value=ground),
        Parameter("initial_positions", value=[0.0, 0.0, 0.05, 0.0, 0.0, 0.0, 1.0])])

    def file_instead(name: str) -> list[Parameter]:
        return [Parameter("world", value=""),
                Parameter("world_file", value=str(tmp_path / name))]

    try:
        simulated = node.sim
        assert simulated is not None
        for changes, reason in [
            ([Parameter("world", value=ground.replace("0.8", "-1"))],
             "world.planes[0].friction: must be a finite number ≥ 0"),
            ([Parameter("world", value=ground.replace("[0, 0, 0]", "[0, .nan, 0]"))],
             "world.planes[0].point: must be finite"),
            ([Parameter("world", value="{planes: [")], "world: not YAML"),
            ([Parameter("world", value="[1, 2]")], "world: must be a mapping with 'planes'"),
            ([Parameter("world_file", value=str(tmp_path / "bad.yaml"))],
             "world and world_file are both set"),
            (file_instead("bad.yaml"), "world_file: world file"),
            (file_instead("no.yaml"), "cannot be read"),
        ]:
            result = node.set_parameters_atomically(changes)
            assert not result.successful and reason in result.reason, (reason, result.reason)
            if "world_file: world file" in reason:
                assert "planes[0].friction" in result.reason
            assert node.sim is simulated  # as it was
        lower = ground.replace("point: [0, 0, 0]", "point: [0, 0, -0.01]")
        assert node.set_parameters_atomically([Parameter("world", value=lower)]).successful
        assert node.sim is not simulated and node.sim.world.planes[0].point[2] == -0.01
        refused = node.set_parameters_atomically(
            [Parameter("robot_description", value=CHAIN), Parameter("floating_base", value=False)])
        assert not refused.successful
        assert "no <collision> element on a link that moves" in refused.reason
    finally:
        node.stop()
        node.destroy_node()


def box_mesh(path: Path) -> None:
    """A Wavefront OBJ of the brick's box: its 8 corners and 6 faces."""
    corners = list(itertools.product(*((-s / 2, s / 2) for s in SIZE)))
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners)
                    + "".join("f " + " ".join(str(k + 1) for k in face) + "\n" for face in faces))


@pytest.mark.parametrize("filename", ["../meshes/brick.obj", "package://bricks/meshes/brick.obj"])
def test_a_description_files_meshes_are_found_from_its_folder(ros, tmp_path, filename) -> None:
    """robot_description_file bricks/urdf/brick.urdf, its mesh relative to that folder or a
    package:// URI of the folder above: the collision shape is the box's 8 corners."""
    box_mesh(tmp_path / "bricks" / "meshes" / "brick.obj")
    urdf = tmp_path / "bricks" / "urdf" / "brick.urdf"
    urdf.parent.mkdir(parents=True)
    urdf.write_text(brick(f'<mesh filename="{filename}"/>'))
    node = SimNode(parameter_overrides=[
        Parameter("robot_description_file", value=str(urdf)),
        Parameter("floating_base", value=True), Parameter("world", value=GROUND),
        Parameter("autostart", value=False)])
    try:
        node.trigger_configure()
        assert node.sim is not None, node.status().message
        (shape,) = node.sim.collision_shapes
        corners = sorted(itertools.product(*((-s / 2, s / 2) for s in SIZE)))
        np.testing.assert_allclose(sorted(map(tuple, shape.vertices.tolist())), corners,
                                   rtol=0, atol=1e-7)  # the mesh loader's single precision
    finally:
        node.stop()
        node.destroy_node()


def test_robodyn_sim_names_a_bad_world_file_before_it_starts(tmp_path, capsys) -> None:
    (tmp_path / "bad.yaml").write_text(GROUND.replace("[0, 0, 1]", "[0, 0, 0]"))
    assert main(["sim", "--world", str(tmp_path / "bad.yaml")]) == 1
    assert "planes[0].normal: [0.0, 0.0, 0.0] has no direction" in capsys.readouterr().err
    (tmp_path / "ground.yaml").write_text(GROUND)
    assert main(["sim", "--world", str(tmp_path / "ground.yaml")]) == 1  # the bundled panda
    assert "no <collision> element on a link that moves" in capsys.readouterr().err
    assert main(["sim", "--floating-base", "--world", str(tmp_path / "ground.yaml")]) == 1
    assert "--world goes with the pose targets" in capsys.readouterr().err
