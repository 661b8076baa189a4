"""Pushes in the preview (scenarios' `pushes`): a constant force on a slider moves it by
F t² / 2m while it acts and at the velocity it left after, exactly under RK4 (a quadratic in
t); a push on a floating robot in zero gravity gives its momentum the impulse F·duration; bad
pushes name the field."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.model import URDFWarning
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import ScenarioError, scenario_from_mapping
from robodyn_ros.testing import example_robot_urdf

MASS, FORCE = 2.0, 4.0  # kg, N
SLIDER = f"""<robot name="slider">
  <link name="rail"/>
  <link name="cart"><inertial><mass value="{MASS}"/><origin xyz="0 0 0"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="slide" type="prismatic"><parent link="rail"/><child link="cart"/>
    <axis xyz="1 0 0"/><limit lower="-10" upper="10" effort="100" velocity="100"/></joint>
</robot>"""


def pushed(robot: Robot, frame: str, wrench, start: float, duration: float, kind: dict):
    return scenario_from_mapping(robot, {"name": "pushed", **kind, "pushes": [
        {"frame": frame, "wrench": wrench, "start": start, "duration": duration}]})


def test_a_pushed_slider_moves_as_the_force_says() -> None:
    robot = Robot.from_urdf_string(SLIDER)
    idle = {"torque_profile": {"frame": "cart", "times": [0.0], "efforts": [[0.0]]}}
    scenario = pushed(robot, "cart", [FORCE, 0, 0, 0, 0, 0], 0.0, 0.1, idle)
    result = preview(robot, [scenario], PreviewSettings(horizon=0.2, dt=1e-3))[0]
    a, t = FORCE / MASS, result.times
    during = t <= 0.1
    np.testing.assert_allclose(result.q[during, 0], 0.5 * a * t[during] ** 2, atol=1e-12)
    np.testing.assert_allclose(result.q[~during, 0], 0.5 * a * 0.01 + a * 0.1 * (t[~during] - 0.1),
                               atol=1e-12)
    np.testing.assert_allclose(result.qd[-1, 0], a * 0.1, atol=1e-12)


def test_a_push_gives_a_floating_robot_its_impulse() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        robot = Robot.from_urdf(example_robot_urdf("solo12"), floating_base=True,
                                gravity=(0.0, 0.0, 0.0))
    force = np.array([1.0, -2.0, 0.5])
    idle = {"torque_profile": {"frame": "base_link", "times": [0.0],
                               "efforts": [np.zeros(robot.nv).tolist()]}}
    scenario = pushed(robot, "base_link", [*force, 0.0, 0.0, 0.0], 0.01, 0.02, idle)
    result = preview(robot, [scenario], PreviewSettings(horizon=0.05, dt=1e-3))[0]
    momentum = robot.centroidal_momentum_matrix(result.q[-1]) @ result.qd[-1]
    np.testing.assert_allclose(momentum[:3], force * 0.02, rtol=1e-9)


@pytest.mark.parametrize(("push", "field"), [
    ({"frame": "nowhere", "wrench": [0] * 6, "duration": 1.0}, "pushes[0].frame 'nowhere'"),
    ({"frame": "cart", "wrench": [0] * 5, "duration": 1.0}, "pushes[0].wrench must have shape"),
    ({"frame": "cart", "wrench": [0] * 6, "duration": 0.0}, "pushes[0].start must be ≥ 0 and"),
    ({"frame": "cart", "wrench": [0] * 6}, "pushes[0].duration is required"),
])
def test_bad_pushes_name_the_field(push, field) -> None:
    robot = Robot.from_urdf_string(SLIDER)
    with pytest.raises(ScenarioError, match=field.replace("[", r"\[").replace("]", r"\]")):
        scenario_from_mapping(robot, {"torque_profile": {"times": [0.0], "efforts": [[0.0]]},
                                      "pushes": [push]})


VALUES = st.one_of(st.none(), st.booleans(), st.text(max_size=8),
                   st.floats(allow_nan=True, allow_infinity=True),
                   st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=8))
PUSHES = st.one_of(
    VALUES,
    st.lists(st.one_of(VALUES, st.dictionaries(
        st.sampled_from(["frame", "wrench", "start", "duration", "extra"]),
        st.one_of(VALUES, st.sampled_from(["cart", "rail"])))), max_size=3))


@settings(max_examples=300, deadline=None)
@given(pushes=PUSHES)
def test_any_pushes_are_read_or_refused_naming_them(pushes) -> None:
    """Whatever `pushes` holds, the scenario is read with pushes of 6 finite numbers on a
    frame of the robot over a span, or refused with a ScenarioError naming `pushes`."""
    robot = Robot.from_urdf_string(SLIDER)
    spec = {"torque_profile": {"times": [0.0], "efforts": [[0.0]]}, "pushes": pushes}
    try:
        scenario = scenario_from_mapping(robot, spec)
    except ScenarioError as error:
        assert "pushes" in str(error)
        return
    for push in scenario.pushes:
        assert push.frame in robot.frame_names
        assert push.wrench.shape == (6,) and np.isfinite(push.wrench).all()
        assert push.start >= 0.0 and push.duration > 0.0
