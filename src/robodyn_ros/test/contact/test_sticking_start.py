"""The contact solve's first iterate (contact.compiled_step.sticking_start): the impulses that
hold every contact, G λ = u* − u_free, projected on the cones, or zero for redundant contacts
and for a G too large to factor; and a contact at rest, which it solves before the first sweep
ends."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.contact import CollisionShape, Plane, World, contact_step
from robodyn_ros.contact.compiled_step import SMALL_DELASSUS, sticking_start

LINK = "ball"
MASS, RADIUS, FRICTION = 2.0, 0.05, 0.8
URDF = f"""<robot name="ball"><link name="{LINK}"><inertial><mass value="{MASS}"/>
  <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.002"/></inertial></link>
  </robot>"""


def delassus(seed: int, contacts: int, repeated: bool = False) -> np.ndarray:
    """G = J M⁻¹ Jᵀ of `contacts` contacts on a random system with more velocities than contact
    rows (the last contact's rows those of the first where `repeated`)."""
    rng = np.random.default_rng(seed)
    rows, n = 3 * contacts, 3 * contacts + 3
    J = rng.normal(size=(rows, n))
    if repeated:
        J[-3:] = J[:3]
    A = rng.normal(size=(n, n))
    M = A @ A.T + n * np.eye(n)
    return J @ np.linalg.solve(M, J.T)


def start_of(G: np.ndarray, free: np.ndarray, least: np.ndarray,
             friction: np.ndarray) -> np.ndarray:
    """sticking_start's impulses (k, 3)."""
    size = len(free)
    impulses = np.full((size // 3, 3), np.nan)
    sticking_start(G, free, least, friction, np.empty((size, size)), np.empty(size), impulses)
    return impulses


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), contacts=st.integers(1, 4), data=st.data())
def test_impulses_inside_their_cones_are_the_start(seed, contacts, data) -> None:
    """Impulses λ* inside every cone and u_free = u* − G λ*: the start is λ*, each contact
    held at its least normal velocity without slip."""
    G = delassus(seed, contacts)
    rng = np.random.default_rng(seed + 1)
    friction = rng.uniform(0.2, 1.0, contacts)
    normal = rng.uniform(0.1, 5.0, contacts)
    angle, share = rng.uniform(0, 2 * np.pi, contacts), rng.uniform(0.0, 0.9, contacts)
    wanted = np.column_stack([normal, share * friction * normal * np.cos(angle),
                              share * friction * normal * np.sin(angle)])
    least = np.array(data.draw(st.lists(st.floats(-0.01, 0.01), min_size=contacts,
                                        max_size=contacts)))
    target = np.zeros(3 * contacts)
    target[::3] = least
    free = target - G @ wanted.ravel()
    np.testing.assert_allclose(start_of(G, free, least, friction), wanted,
                               rtol=1e-8, atol=1e-8 * np.abs(wanted).max())


def test_impulses_outside_their_cones_are_projected_on_them() -> None:
    """A contact that pulls takes none; one that would slip takes μ λ_n along its tangent
    impulse's direction."""
    G = delassus(3, 2)
    friction = np.array([0.5, 0.5])
    wanted = np.array([[-1.0, 0.2, 0.1], [2.0, 3.0, -4.0]])
    least = np.zeros(2)
    free = -G @ wanted.ravel()
    start = start_of(G, free, least, friction)
    np.testing.assert_allclose(start[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(start[1], [2.0, 0.5 * 2.0 * 0.6, -0.5 * 2.0 * 0.8], rtol=1e-8)


def test_redundant_contacts_start_from_zero() -> None:
    """The same contact twice: G is singular and fixes no impulses, so the sweeps start from
    zero."""
    G = delassus(7, 3, repeated=True)
    free = -np.ones(9)
    start = start_of(G, free, np.zeros(3), np.full(3, 0.8))
    assert np.array_equal(start, np.zeros((3, 3)))


def test_more_contacts_than_small_delassus_start_from_zero() -> None:
    """A G of more rows than SMALL_DELASSUS is not factored: the sweeps start from zero."""
    contacts = SMALL_DELASSUS // 3 + 1
    G = delassus(11, contacts)
    start = start_of(G, -np.ones(3 * contacts), np.zeros(contacts), np.full(contacts, 0.8))
    assert np.array_equal(start, np.zeros((contacts, 3)))


def test_a_ball_at_rest_is_solved_in_one_sweep() -> None:
    """A ball resting on the ground under gravity: its start holds it, so the first sweep
    changes nothing, and the contact carries the ball's weight."""
    robot = Robot.from_urdf_string(URDF, floating_base=True)
    ball = CollisionShape(LINK, "sphere", (RADIUS,), np.eye(4), np.zeros((0, 3)))
    ground = World((Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), FRICTION),))
    q = np.array([0.0, 0.0, RADIUS, 0.0, 0.0, 0.0, 1.0])
    step = contact_step(robot, (ball,), ground, q, np.zeros(6), np.zeros(6), 1e-3)
    assert step.iterations == 1
    assert len(step.contacts) == 1
    np.testing.assert_allclose(step.contacts[0].force, [0.0, 0.0, MASS * 9.81], rtol=1e-9)
