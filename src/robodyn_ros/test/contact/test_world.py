"""contact.world: planes read from a mapping or a YAML file; whatever arrives is a World of unit
normals and frictions ≥ 0, or a WorldError naming the field."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros.contact import World, WorldError, load_world, world_of

GROUND = {"normal": [0, 0, 1], "point": [0, 0, 0], "friction": 0.8}


def test_planes_are_read_with_unit_normals_and_heights() -> None:
    world = world_of({"planes": [GROUND, {"normal": [0, 0.5, 0.5], "point": [1, 2, 3],
                                          "friction": 0}]})
    ground, incline = world.planes
    np.testing.assert_allclose(incline.normal, [0, np.sqrt(0.5), np.sqrt(0.5)])
    assert incline.friction == 0.0 and ground.friction == 0.8
    np.testing.assert_allclose(ground.height(np.array([[0.3, -2.0, 0.25], [0, 0, -0.1]])),
                               [0.25, -0.1])
    assert incline.height(np.array([1.0, 2.0, 3.0])) == pytest.approx(0.0)
    assert world_of(None).planes == () and world_of({}).planes == ()


@pytest.mark.parametrize(("description", "match"), [
    ({"planes": [{**GROUND, "normal": [0, 0, 0]}]},
     r"world\.planes\[0\]\.normal: \[0\.0, 0\.0, 0\.0\] has no direction"),
    ({"planes": [{**GROUND, "friction": -0.1}]},
     r"world\.planes\[0\]\.friction: must be a finite number ≥ 0"),
    ({"planes": [{**GROUND, "friction": float("nan")}]}, r"planes\[0\]\.friction"),
    ({"planes": [{**GROUND, "point": [0, 0, float("inf")]}]},
     r"planes\[0\]\.point: must be finite"),
    ({"planes": [{**GROUND, "point": [0, 0]}]}, r"planes\[0\]\.point: must be three numbers"),
    ({"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0]}]}, r"planes\[0\]: missing friction"),
    ({"planes": [{**GROUND, "mu": 1}]}, r"planes\[0\]: unknown field\(s\) mu"),
    ({"plane": []}, r"world: unknown field\(s\) plane"),
    ({"planes": GROUND}, r"world\.planes: must be a list"),
    ([GROUND], r"world: must be a mapping"),
])
def test_a_bad_world_is_refused_naming_the_field(description, match: str) -> None:
    with pytest.raises(WorldError, match=match):
        world_of(description)


def test_a_world_file_is_read_alone_or_under_world(tmp_path) -> None:
    alone, scenario, broken = (tmp_path / name for name in ("a.yaml", "b.yaml", "c.yaml"))
    alone.write_text("planes:\n  - {normal: [0, 0, 2], point: [0, 0, 0.1], friction: 0.5}\n")
    scenario.write_text("kind: pose\nworld:\n  planes:\n    - {normal: [1, 0, 0], "
                        "point: [0, 0, 0], friction: -1}\n")
    broken.write_text("planes: [{normal: [0, 0, 1]\n")
    assert load_world(alone).planes[0].point[2] == pytest.approx(0.1)
    with pytest.raises(WorldError, match=rf"world file {scenario}: world\.planes\[0\]\.friction"):
        load_world(scenario)
    with pytest.raises(WorldError, match=rf"world file {broken}: cannot be read as YAML"):
        load_world(broken)
    with pytest.raises(WorldError, match="cannot be read as YAML: FileNotFoundError"):
        load_world(tmp_path / "none.yaml")


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["planes", "normal", "point", "friction", "x"]), inner,
                      max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_anything_is_a_world_or_a_world_error(description) -> None:
    try:
        world = world_of(description)
    except WorldError as error:
        assert str(error).startswith("world")
        return
    assert isinstance(world, World)
    for plane in world.planes:
        assert np.linalg.norm(plane.normal) == pytest.approx(1.0)
        assert np.isfinite(plane.point).all() and plane.friction >= 0.0
