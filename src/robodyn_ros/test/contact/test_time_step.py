"""contact.time_step on the analytic cases of issue 38, each body a floating robot of one link
with a <collision> shape, stepped at 1 ms under gravity:
- a box on an incline of angle θ sticks when μ > tan θ (creep < 1 mm over 0.5 s) and slides
  with acceleration g (sin θ − μ cos θ) (within 3 %) when μ < tan θ;
- a ball dropped on the floor comes to rest at its radius (penetration < 2 mm);
- a box at rest carries its weight: the normal forces sum to m g within 0.5 %."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.contact import Plane, World, collision_shapes
from robodyn_ros.contact.solver import solve_contact_impulses
from robodyn_ros.contact.time_step import ContactError, ContactSettings, contact_step
from robodyn_ros.model.inertia import rotation_from_rpy
from robodyn_ros.robot.free_flyer import quaternion_of

G, DT = 9.81, 1e-3
BOX = (0.2, 0.2, 0.1)  # m
MASS = 2.0


def body(name: str, geometry: str, inertia: tuple[float, float, float]) -> str:
    ixx, iyy, izz = inertia
    return f"""<robot name="{name}"><link name="{name}">
      <inertial><mass value="{MASS}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}"
        iyz="0" izz="{izz}"/></inertial>
      <collision><geometry>{geometry}</geometry></collision></link></robot>"""


def box_urdf() -> str:
    x, y, z = BOX
    return body("box", f'<box size="{x} {y} {z}"/>',
                tuple(MASS / 12 * (a * a + b * b) for a, b in ((y, z), (x, z), (x, y))))


def ball_urdf(radius: float) -> str:
    moment = 0.4 * MASS * radius**2
    return body("ball", f'<sphere radius="{radius}"/>', (moment, moment, moment))


def run(urdf: str, q: np.ndarray, world: World, seconds: float):
    """The states and contact forces of `seconds` of steps from rest at q."""
    robot = Robot.from_urdf_string(urdf, floating_base=True)
    shapes = collision_shapes(urdf)
    v, states, forces = np.zeros(robot.nv), [], []
    for _ in range(round(seconds / DT)):
        step = contact_step(robot, shapes, world, q, v, np.zeros(robot.nv), DT)
        q, v = step.q, step.v
        states.append(q)
        forces.append(sum((contact.force for contact in step.contacts), np.zeros(3)))
    return np.array(states), np.array(forces)


def on_incline(theta: float, mu: float) -> tuple[np.ndarray, World]:
    """A box resting on an incline of angle θ about x (the plane through the origin), and
    the world of that incline."""
    rotation = rotation_from_rpy((theta, 0.0, 0.0))
    normal = rotation[:, 2]
    q = np.concatenate([normal * BOX[2] / 2, quaternion_of(rotation)])
    return q, World((Plane(normal, np.zeros(3), mu),))


def test_a_box_on_an_incline_sticks_when_friction_holds_it() -> None:
    theta = np.radians(20.0)
    q, world = on_incline(theta, mu=np.tan(theta) + 0.1)
    states, _ = run(box_urdf(), q, world, 0.5)
    assert np.linalg.norm(states[-1, :3] - q[:3]) < 1e-3


@pytest.mark.parametrize("mu", [0.0, 0.2])
def test_a_box_on_an_incline_slides_at_g_sin_minus_mu_cos(mu: float) -> None:
    theta = np.radians(30.0)
    q, world = on_incline(theta, mu)
    states, _ = run(box_urdf(), q, world, 0.5)
    down = np.array([0.0, -np.cos(theta), -np.sin(theta)])  # down the slope
    travelled = (states[:, :3] - q[:3]) @ down
    t = DT * np.arange(1, len(states) + 1)
    acceleration = np.polyfit(t[100:], travelled[100:], 2)[0] * 2.0
    expected = G * (np.sin(theta) - mu * np.cos(theta))
    assert acceleration == pytest.approx(expected, rel=0.03)


def test_a_dropped_ball_comes_to_rest_at_its_radius() -> None:
    radius = 0.05
    q = np.array([0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 1.0])
    ground = World((Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.8),))
    states, _ = run(ball_urdf(radius), q, ground, 1.0)
    assert states[-1, 2] == pytest.approx(radius, abs=2e-3)
    assert states[:, 2].min() > radius - 2e-3


def test_a_box_at_rest_carries_its_weight() -> None:
    q = np.array([0.0, 0.0, BOX[2] / 2, 0.0, 0.0, 0.0, 1.0])
    ground = World((Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.8),))
    _, forces = run(box_urdf(), q, ground, 0.3)
    np.testing.assert_allclose(forces[-100:].mean(axis=0), [0.0, 0.0, MASS * G], rtol=0.005,
                               atol=1e-6)


@pytest.mark.parametrize(("field", "match"), [
    ("q", r"q is not finite at index\(es\) \[2\]"), ("v", r"v is not finite"),
    ("tau", r"tau is not finite"), ("dt", r"dt must be a positive number"),
    ("size", r"tau must have 6 values for robot 'box', not shape \(5,\)")])
def test_a_state_a_step_cannot_take_is_refused_naming_it(field: str, match: str) -> None:
    """Never a NaN state, nor a solver blamed for its input."""
    robot = Robot.from_urdf_string(box_urdf(), floating_base=True)
    state = {"q": np.array([0.0, 0.0, BOX[2] / 2, 0.0, 0.0, 0.0, 1.0]), "v": np.zeros(6),
             "tau": np.zeros(6), "dt": DT}
    if field == "size":
        state["tau"] = np.zeros(5)
    elif field == "dt":
        state["dt"] = 0.0
    else:
        state[field] = state[field].copy()
        state[field][2] = np.nan
    ground = World((Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.8),))
    with pytest.raises(ValueError, match=match):
        contact_step(robot, collision_shapes(box_urdf()), ground, state["q"], state["v"],
                     state["tau"], state["dt"])


def test_a_solver_out_of_sweeps_names_the_contacts() -> None:
    q = np.array([0.0, 0.0, BOX[2] / 2 - 1e-4, 0.0, 0.0, 0.0, 1.0])
    ground = World((Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.8),))
    robot = Robot.from_urdf_string(box_urdf(), floating_base=True)
    with pytest.raises(ContactError, match=r"did not converge in 1 sweeps .* contacts of box"):
        contact_step(robot, collision_shapes(box_urdf()), ground, q, np.zeros(6),
                     np.zeros(6), DT, ContactSettings(max_iterations=1))


def test_a_fixed_base_standing_on_a_table_touches_it_with_its_moving_links_only() -> None:
    """A hinged rod whose base's box stands in the table: the base is held by its mount (its
    Delassus rows would be zero), so the step has no contact and swings the rod as in free
    space, semi-implicitly."""
    urdf = """<robot name="rod"><link name="base"><collision><origin xyz="0 0 -0.05"/>
      <geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
      <link name="rod"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>
        <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="hinge" type="revolute"><parent link="base"/><child link="rod"/>
        <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
    </robot>"""
    robot = Robot.from_urdf_string(urdf)
    table = World((Plane(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, -0.099]), 0.5),))
    q, v = np.zeros(1), np.zeros(1)
    step = contact_step(robot, collision_shapes(urdf), table, q, v, np.zeros(1), 1e-3)
    v_free = v + 1e-3 * robot.forward_dynamics(q, v, np.zeros(1))
    assert step.contacts == ()
    np.testing.assert_array_equal(step.v, v_free)
    np.testing.assert_allclose(step.q, q + 1e-3 * v_free, atol=1e-15)


def test_a_contact_no_impulse_can_push_out_takes_none() -> None:
    """A turntable (a box on a joint about the vertical) cut by the table's plane: its
    corners under the plane can only move along it, their Delassus rows along the normal
    are zero; the step gives them no impulse (no division by zero, no ContactError) and
    turns the table as in free space."""
    urdf = """<robot name="turntable"><link name="base"/>
      <link name="plate"><inertial><mass value="1"/>
        <inertia ixx="0.01" iyy="0.01" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><box size="0.3 0.3 0.02"/></geometry></collision></link>
      <joint name="spin" type="continuous"><parent link="base"/><child link="plate"/>
        <axis xyz="0 0 1"/></joint></robot>"""
    robot = Robot.from_urdf_string(urdf)
    table = World((Plane(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, 0.005]), 0.5),))
    q, v, tau = np.zeros(1), np.array([1.0]), np.array([0.2])
    step = contact_step(robot, collision_shapes(urdf), table, q, v, tau, 1e-3)
    assert step.contacts and all(not contact.force.any() for contact in step.contacts)
    v_free = v + 1e-3 * robot.forward_dynamics(q, v, tau)
    np.testing.assert_allclose(step.v, v_free, atol=1e-15)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 4),
       friction=st.floats(0.0, 2.0))
def test_the_solver_answers_signorini_and_coulomb(seed: int, count: int, friction: float) -> None:
    """Random well-posed contacts (J of full row rank on a random inertia, random free
    velocities and gaps): the impulses push, stay in their cones, no normal velocity passes
    its bound, a pushing contact closes to it, and a contact inside its cone does not slide
    (to 1e-5 m/s: the sweeps stop at a change of 1e-8 m/s, and on strongly coupled contacts
    converge slowly, their distance to the answer many times their last change)."""
    rng = np.random.default_rng(seed)
    nv = 3 * count + 2
    jacobian = rng.normal(size=(3 * count, nv))
    root = rng.normal(size=(nv, nv))
    mass_inverse = np.linalg.inv(root @ root.T + nv * np.eye(nv))
    delassus = jacobian @ mass_inverse @ jacobian.T
    free = rng.normal(size=3 * count)
    least = rng.uniform(-0.1, 0.1, count)
    mu = np.full(count, friction)
    solved = solve_contact_impulses(delassus, free, least, mu, 1e-8, 20000)
    assert solved.converged, solved
    impulses = solved.impulses
    velocity = (free + delassus @ impulses.ravel()).reshape(count, 3)
    slack = 1e-5
    assert (impulses[:, 0] >= 0.0).all()
    reach = mu * impulses[:, 0] * (1 + 1e-9) + 1e-15
    assert (np.linalg.norm(impulses[:, 1:], axis=1) <= reach).all()
    assert (velocity[:, 0] >= least - slack).all()
    pushing = impulses[:, 0] > 1e-6
    np.testing.assert_allclose(velocity[pushing, 0], least[pushing], atol=slack)
    inside = pushing & (mu * impulses[:, 0] - np.linalg.norm(impulses[:, 1:], axis=1)
                        > 1e-3 * impulses[:, 0])
    np.testing.assert_allclose(velocity[inside, 1:], 0.0, atol=slack)
