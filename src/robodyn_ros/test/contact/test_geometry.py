"""contact.geometry: a URDF's <collision> elements as shapes, and their points against a plane.
The lowest candidate's height is the shape's signed distance to the plane as coal computes it
(coal.distance with a Halfspace) to 1e-9 m, for any pose and plane; a box or a cylinder
resting flat touches at its corners or its rim; Solo12's meshes are read through coal."""

from __future__ import annotations

import coal
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros.contact import GeometryError, Plane, collision_shapes, contact_points
from robodyn_ros.contact.geometry import RIM_POINTS
from robodyn_ros.model.inertia import rotation_from_rpy
from robodyn_ros.testing import example_robot_urdf

SHAPES = """<robot name="shapes">
  <link name="ball"><collision><origin xyz="0.1 0 0"/>
    <geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="brick"><collision><origin xyz="0 0 0.1" rpy="0.3 -0.2 0.1"/>
    <geometry><box size="0.2 0.1 0.05"/></geometry></collision></link>
  <link name="can"><collision><geometry><cylinder radius="0.04" length="0.3"/></geometry>
    </collision></link>
  <link name="pill"><collision><origin rpy="1.2 0 0"/>
    <geometry><capsule radius="0.03" length="0.2"/></geometry></collision></link>
</robot>"""


def coal_shape(shape) -> coal.CollisionGeometry:
    if shape.kind == "sphere":
        return coal.Sphere(*shape.size)
    if shape.kind == "box":
        return coal.Box(*shape.size)
    return (coal.Cylinder if shape.kind == "cylinder" else coal.Capsule)(*shape.size)


def coal_distance(geometry: coal.CollisionGeometry, pose: np.ndarray, plane: Plane) -> float:
    placed = coal.Transform3s()
    placed.setRotation(pose[:3, :3])
    placed.setTranslation(pose[:3, 3])
    halfspace = coal.Halfspace(plane.normal, float(plane.normal @ plane.point))
    return coal.distance(geometry, placed, halfspace, coal.Transform3s(),
                         coal.DistanceRequest(), coal.DistanceResult())


def pose_of(rpy, xyz) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rotation_from_rpy(rpy), xyz
    return pose


def test_each_collision_element_is_a_shape_in_its_link() -> None:
    ball, brick, can, pill = collision_shapes(SHAPES)
    assert [(s.link, s.kind, s.size) for s in (ball, brick, can, pill)] == [
        ("ball", "sphere", (0.05,)), ("brick", "box", (0.2, 0.1, 0.05)),
        ("can", "cylinder", (0.04, 0.3)), ("pill", "capsule", (0.03, 0.2))]
    np.testing.assert_allclose(brick.placement, pose_of((0.3, -0.2, 0.1), (0, 0, 0.1)))


ANGLES = st.tuples(*[st.floats(-np.pi, np.pi)] * 3)
POINTS = st.tuples(*[st.floats(-0.5, 0.5)] * 3)


@settings(max_examples=200, deadline=None)
@given(index=st.integers(0, 3), rpy=ANGLES, xyz=POINTS, normal_rpy=ANGLES)
def test_the_lowest_point_is_coals_signed_distance(index, rpy, xyz, normal_rpy) -> None:
    shape = collision_shapes(SHAPES)[index]
    normal = rotation_from_rpy(normal_rpy) @ np.array([0.0, 0.0, 1.0])
    plane = Plane(normal, np.array([0.05, -0.1, 0.02]), 0.5)
    link_pose = pose_of(rpy, xyz)
    found = contact_points(shape, link_pose, plane)
    expected = coal_distance(coal_shape(shape), link_pose @ shape.placement, plane)
    assert found.heights.min() == pytest.approx(expected, abs=1e-9)
    np.testing.assert_allclose(plane.height(found.points), found.heights, atol=1e-12)


def test_a_box_and_a_cylinder_resting_flat_touch_at_their_corners_and_rim() -> None:
    ground = Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.8)
    _, brick, can, _ = collision_shapes(SHAPES)
    on_ground = pose_of((0, 0, 0), (0, 0, 0.025)) @ np.linalg.inv(brick.placement)
    heights = contact_points(brick, on_ground, ground).heights
    np.testing.assert_allclose(np.sort(heights)[:4], 0.0, atol=1e-12)
    np.testing.assert_allclose(np.sort(heights)[4:], 0.05, atol=1e-12)
    standing = contact_points(can, pose_of((0, 0, 0.7), (0.2, 0.1, 0.15)), ground)
    low = np.abs(standing.heights) < 1e-12
    assert np.count_nonzero(low) == RIM_POINTS
    np.testing.assert_allclose(np.linalg.norm(standing.points[low, :2] - [0.2, 0.1], axis=1),
                               0.04)


def test_solo12s_meshes_are_read_through_coal() -> None:
    path = example_robot_urdf("solo12")
    share = path.parents[4]  # <share>/example-robot-data/robots/solo_description/robots/*.urdf
    shapes = collision_shapes(path.read_text(), path.parent, [share])
    assert len(shapes) == path.read_text().count("<collision>")
    base = next(shape for shape in shapes if shape.link == "base_link")
    assert base.kind == "mesh" and base.vertices.shape[1] == 3
    ground = Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.8)
    pose = pose_of((0.2, 0.1, -0.3), (0.0, 0.0, 0.3))
    mesh_file = (share / "example-robot-data/robots/solo_description/meshes/stl/solo12"
                 / "solo_12_base.stl")
    every_vertex = np.asarray(coal.MeshLoader().load(str(mesh_file), np.ones(3)).vertices())
    assert len(base.vertices) < len(every_vertex)  # the hull's, fewer
    lowest = ground.height(every_vertex @ pose[:3, :3].T + pose[:3, 3]).min()
    assert contact_points(base, pose, ground).heights.min() == pytest.approx(lowest, abs=1e-12)


@pytest.mark.parametrize(("collision", "match"), [
    ('<geometry><sphere radius="-1"/></geometry>', r"link 'a': <collision> <sphere>: radius "
     r"must be > 0"),
    ('<geometry><box size="1 2"/></geometry>', r'size="1 2" must be 3 finite number'),
    ('<geometry><cylinder radius="0.1" length="nan"/></geometry>', "length"),
    ('<geometry><cone radius="0.1"/></geometry>', "geometry <cone> is not one of"),
    ('<origin xyz="0 0"/><geometry><sphere radius="1"/></geometry>', 'xyz="0 0"'),
    ('<geometry><mesh filename="package://nowhere/m.stl"/></geometry>',
     "mesh 'package://nowhere/m.stl' not found"),
])
def test_a_bad_collision_is_refused_naming_the_link(collision: str, match: str) -> None:
    urdf = f'<robot name="r"><link name="a"><collision>{collision}</collision></link></robot>'
    with pytest.raises(GeometryError, match=match):
        collision_shapes(urdf)
