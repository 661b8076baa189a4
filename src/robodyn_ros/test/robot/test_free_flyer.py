"""free_flyer against Pinocchio's FreeFlyer joint (a model of one JointModelFreeFlyer): the
rotation of its placement, pinocchio.integrate and pinocchio.difference at random states, with
rotation angles from 0 through tiny (1e-9 rad), both sides of the Taylor series' switch, near π
and past it; the series meet the closed forms at the switch; a batch is the stack of its rows.
Hypothesis checks the properties that hold whatever the oracle says: difference inverts
integrate (|ω| < π) and integrate inverts difference (as poses), and quaternion_of inverts
rotation_matrix up to the quaternion's sign.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros.robot.free_flyer import (
    NEUTRAL,
    SMALL_ANGLE,
    difference,
    integrate,
    quaternion_of,
    rotation_matrix,
)

TOL = 1e-12
STATES = 50
# Rotation angles (rad) of the velocities: zero, tiny, either side of the series' switch,
# ordinary, either side of π (past it the shorter rotation turns the other way), past 2π.
ANGLES = (
    0.0, 1e-12, 1e-9, SMALL_ANGLE * (1 - 1e-9), SMALL_ANGLE * (1 + 1e-9), 1e-2, 1.0, 3.0,
    np.pi - 1e-9, np.pi + 1e-9, 5.0, 7.0,
)


def free_flyer_model() -> pin.Model:
    model = pin.Model()
    model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    return model


MODEL = free_flyer_model()


def random_configurations(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 7): positions in a few metres, uniformly random unit quaternions."""
    quaternions = rng.normal(size=(n, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    return np.concatenate([rng.uniform(-3.0, 3.0, size=(n, 3)), quaternions], axis=1)


def random_velocities(rng: np.random.Generator, n: int, angle: float) -> np.ndarray:
    """(n, 6): random linear parts, angular parts of norm ``angle`` about random axes."""
    axes = rng.normal(size=(n, 3))
    axes *= angle / np.linalg.norm(axes, axis=1, keepdims=True)
    return np.concatenate([rng.uniform(-2.0, 2.0, size=(n, 3)), axes], axis=1)


def pin_integrate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.array([pin.integrate(MODEL, qi, vi) for qi, vi in zip(q, v, strict=True)])


def pin_difference(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    return np.array([pin.difference(MODEL, a, b) for a, b in zip(q0, q1, strict=True)])


def assert_same_pose(q: np.ndarray, expected: np.ndarray, atol: float = TOL) -> None:
    """Same position and orientation; the quaternions may differ in sign."""
    np.testing.assert_allclose(q[..., :3], expected[..., :3], rtol=0, atol=atol)
    np.testing.assert_allclose(rotation_matrix(q[..., 3:]), rotation_matrix(expected[..., 3:]),
                               rtol=0, atol=atol)


def test_neutral_is_pinocchio_neutral_and_read_only() -> None:
    np.testing.assert_array_equal(NEUTRAL, pin.neutral(MODEL))
    with pytest.raises(ValueError, match="read-only"):
        NEUTRAL[0] = 1.0


def test_rotation_matrix_is_the_rotation_of_pinocchio_placement() -> None:
    data = MODEL.createData()
    for q in random_configurations(np.random.default_rng(1), STATES):
        pin.forwardKinematics(MODEL, data, q)
        np.testing.assert_allclose(rotation_matrix(q[3:]), data.oMi[1].rotation, rtol=0, atol=TOL)
        np.testing.assert_array_equal(data.oMi[1].translation, q[:3])


@pytest.mark.parametrize("angle", ANGLES)
def test_integrate_is_pinocchio_integrate(angle: float) -> None:
    rng = np.random.default_rng(2)
    q, v = random_configurations(rng, STATES), random_velocities(rng, STATES, angle)
    # the quaternions too, not only the poses: the sign is Pinocchio's
    np.testing.assert_allclose(integrate(q, v), pin_integrate(q, v), rtol=0, atol=TOL)


@pytest.mark.parametrize("angle", ANGLES)
def test_difference_is_pinocchio_difference(angle: float) -> None:
    rng = np.random.default_rng(3)
    q0 = random_configurations(rng, STATES)
    q1 = pin_integrate(q0, random_velocities(rng, STATES, angle))
    np.testing.assert_allclose(difference(q0, q1), pin_difference(q0, q1), rtol=0, atol=TOL)


def test_difference_of_unrelated_configurations_is_pinocchio_difference() -> None:
    rng = np.random.default_rng(4)
    q0, q1 = random_configurations(rng, STATES), random_configurations(rng, STATES)
    np.testing.assert_allclose(difference(q0, q1), pin_difference(q0, q1), rtol=0, atol=TOL)
    # q1 and −q1 are one orientation
    q1[:, 3:] *= -1.0
    np.testing.assert_allclose(difference(q0, q1), pin_difference(q0, q1), rtol=0, atol=TOL)


def test_difference_takes_the_shorter_rotation_past_pi() -> None:
    rng = np.random.default_rng(5)
    q0 = random_configurations(rng, STATES)
    v = random_velocities(rng, STATES, np.pi + 1e-6)
    d = difference(q0, integrate(q0, v))
    expected_angular = -v[:, 3:] * (np.pi - 1e-6) / (np.pi + 1e-6)
    np.testing.assert_allclose(d[:, 3:], expected_angular, rtol=0, atol=TOL)
    assert_same_pose(integrate(q0, d), integrate(q0, v))


def test_difference_at_exactly_pi_is_a_half_turn_either_way() -> None:
    rng = np.random.default_rng(6)
    q0 = random_configurations(rng, STATES)
    v = random_velocities(rng, STATES, np.pi)
    q1 = integrate(q0, v)
    d = difference(q0, q1)
    np.testing.assert_allclose(np.linalg.norm(d[:, 3:], axis=1), np.pi, rtol=0, atol=TOL)
    assert_same_pose(integrate(q0, d), q1)


@pytest.mark.parametrize("function", [integrate, difference])
def test_series_meet_the_closed_forms_at_the_switch(function: object) -> None:
    """Angles 2e-12 apart, on either side of SMALL_ANGLE, give results equal to rounding."""
    assert callable(function)
    rng = np.random.default_rng(7)
    q = random_configurations(rng, STATES)
    below = random_velocities(np.random.default_rng(8), STATES, SMALL_ANGLE * (1 - 1e-12))
    above = random_velocities(np.random.default_rng(8), STATES, SMALL_ANGLE * (1 + 1e-12))
    if function is difference:
        below, above = integrate(q, below), integrate(q, above)
    np.testing.assert_allclose(function(q, below), function(q, above), rtol=0, atol=1e-15)


def test_batch_is_the_stack_of_its_rows() -> None:
    rng = np.random.default_rng(9)
    q0, q1 = random_configurations(rng, 6), random_configurations(rng, 6)
    v = random_velocities(rng, 6, 1.0)
    v[:3, 3:] *= 1e-9  # tiny angles and ordinary ones in one batch
    for function, a, b in ((integrate, q0, v), (difference, q0, q1)):
        batch = function(a, b)
        np.testing.assert_array_equal(batch, [function(a[i], b[i]) for i in range(6)])
        np.testing.assert_array_equal(
            function(a.reshape(2, 3, -1), b.reshape(2, 3, -1)), batch.reshape(2, 3, -1))
    R = rotation_matrix(q0[:, 3:])
    np.testing.assert_array_equal(R, [rotation_matrix(q[3:]) for q in q0])
    np.testing.assert_array_equal(quaternion_of(R), [quaternion_of(r) for r in R])


def test_batch_shapes_broadcast() -> None:
    rng = np.random.default_rng(10)
    q, v = random_configurations(rng, 1)[0], random_velocities(rng, 4, 0.5)
    result = integrate(q, v)
    assert result.shape == (4, 7) and result.dtype == np.float64
    np.testing.assert_array_equal(result, integrate(np.tile(q, (4, 1)), v))
    assert difference(q, result).shape == (4, 6)


def test_integer_input_gives_float64() -> None:
    result = integrate([0, 0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0])
    assert result.dtype == np.float64
    np.testing.assert_array_equal(result, [1.0, 0, 0, 0, 0, 0, 1.0])
    assert quaternion_of(np.eye(3, dtype=int)).dtype == np.float64


def test_only_the_quaternion_direction_counts() -> None:
    rng = np.random.default_rng(11)
    q0, q1 = random_configurations(rng, STATES), random_configurations(rng, STATES)
    v = random_velocities(rng, STATES, 2.0)
    scaled0, scaled1 = q0.copy(), q1.copy()
    scaled0[:, 3:] *= 1.5
    scaled1[:, 3:] *= -0.25
    np.testing.assert_allclose(rotation_matrix(scaled0[:, 3:]), rotation_matrix(q0[:, 3:]),
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(integrate(scaled0, v), integrate(q0, v), rtol=0, atol=TOL)
    np.testing.assert_allclose(difference(scaled0, scaled1), difference(q0, q1), rtol=0, atol=TOL)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: integrate(np.zeros(6), np.zeros(6)), r"q_base: expected shape \(\.\.\., 7\)"),
        (lambda: integrate(NEUTRAL, np.zeros(7)), r"v_base: expected shape \(\.\.\., 6\)"),
        (lambda: difference(NEUTRAL, np.zeros((2, 6))), r"q1: .* got \(2, 6\)"),
        (lambda: rotation_matrix(np.zeros(3)), r"quaternion: .*\(\.\.\., 4\)"),
        (lambda: quaternion_of(np.zeros(9)), r"rotation: .*\(\.\.\., 3, 3\); got \(9,\)"),
        (lambda: integrate(np.tile(NEUTRAL, (2, 1)), np.zeros((3, 6))), "broadcast"),
    ],
)
def test_wrong_shapes_are_refused(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(ValueError, match=message):
        call()


def unit_vectors(size: int) -> st.SearchStrategy[np.ndarray]:
    components = st.lists(st.floats(-1.0, 1.0), min_size=size, max_size=size)
    return components.map(np.array).filter(lambda x: np.linalg.norm(x) > 0.1).map(
        lambda x: x / np.linalg.norm(x))


configurations = st.tuples(
    st.lists(st.floats(-10.0, 10.0), min_size=3, max_size=3), unit_vectors(4)
).map(lambda parts: np.concatenate([parts[0], parts[1]]))
angles = st.one_of(st.floats(0.0, 1e-6), st.floats(0.0, np.pi - 1e-3))
velocities = st.tuples(
    st.lists(st.floats(-10.0, 10.0), min_size=3, max_size=3), unit_vectors(3), angles
).map(lambda parts: np.concatenate([parts[0], parts[1] * parts[2]]))


@settings(max_examples=300, deadline=None)
@given(q=configurations, v=velocities)
def test_difference_inverts_integrate(q: np.ndarray, v: np.ndarray) -> None:
    np.testing.assert_allclose(difference(q, integrate(q, v)), v, rtol=0, atol=TOL)


@settings(max_examples=300, deadline=None)
@given(q0=configurations, q1=configurations)
def test_integrate_inverts_difference(q0: np.ndarray, q1: np.ndarray) -> None:
    assert_same_pose(integrate(q0, difference(q0, q1)), q1)


@settings(max_examples=300, deadline=None)
@given(q=unit_vectors(4))
def test_quaternion_of_inverts_rotation_matrix(q: np.ndarray) -> None:
    found = quaternion_of(rotation_matrix(q))
    assert found[3] >= 0.0
    sign = 1.0 if q @ found >= 0.0 else -1.0
    np.testing.assert_allclose(found, sign * q, rtol=0, atol=TOL)
