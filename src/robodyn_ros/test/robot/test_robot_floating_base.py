"""A floating-base Robot (floating_base=True) as a user meets it: loading, states and their
errors, robots that cannot float as given, payloads, mimic joints, and the physics any floating
robot obeys whatever its tree (hypothesis over generated trees)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.errors import SingularMassMatrixError
from robodyn_ros.model import FREE_FLYER_JOINTS, ModelError, URDFWarning
from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf
from robodyn_ros.robot.free_flyer import quaternion_of, rotation_matrix
from robodyn_ros.testing import example_robot_urdf

from helpers.floating import random_states, robot_and_oracle, with_base_mass
from helpers.tolerances import assert_close


def test_floating_base_is_asked_for_and_fixed_bases_are_unchanged() -> None:
    fixed = Robot.from_urdf(example_robot_urdf("solo12"))
    floating = Robot.from_urdf(example_robot_urdf("solo12"), floating_base=True)
    assert type(fixed) is Robot and type(floating) is Robot
    assert (fixed.nq, fixed.nv) == (12, 12)
    assert (floating.nq, floating.nv) == (19, 18)
    assert floating.joint_names == FREE_FLYER_JOINTS + fixed.joint_names
    assert floating.model.floating_base and not fixed.model.floating_base
    assert floating.mass > fixed.model.total_mass  # the base body moves now


def test_a_floating_robot_pickles_as_its_model() -> None:
    """The process and Dask backends send robots by pickle; the compiled calls are rebuilt."""
    robot, _ = robot_and_oracle("solo12")
    q, v, vdot, _ = (x[0] for x in random_states(robot, 1))
    copy = pickle.loads(pickle.dumps(robot))
    assert copy.model.floating_base
    assert np.array_equal(copy.inverse_dynamics(q, v, vdot), robot.inverse_dynamics(q, v, vdot))


def test_the_base_body_is_the_root_link_with_its_fixed_links() -> None:
    """Solo12's base_link is a body now, not the world."""
    robot, oracle = robot_and_oracle("solo12")
    assert robot.mass == pytest.approx(sum(inertia.mass for inertia in oracle.model.inertias))


def test_a_quaternion_of_other_norm_is_refused() -> None:
    robot, _ = robot_and_oracle("solo12")
    q, v, vdot, _ = random_states(robot, 3)
    q[1, 3:7] *= 1.01
    with pytest.raises(ValueError, match=r"'free_flyer'.*quaternion.*state \(1,\).*norm 1.01"):
        robot.inverse_dynamics(q, v, vdot)
    for call in (lambda: robot.inverse_dynamics(q[1], v[1], vdot[1]),  # the compiled entry
                 lambda: robot.mass_matrix(q[1]), lambda: robot.jacobian(q[1], "FL_FOOT")):
        with pytest.raises(ValueError, match=r"'free_flyer'.*quaternion.*not 1"):
            call()


@pytest.mark.parametrize("scale", [2.0, 0.0, 1.0 + 2e-6, -0.5])
def test_integrate_and_difference_refuse_a_quaternion_of_other_norm(scale: float) -> None:
    robot, _ = robot_and_oracle("solo12")
    q, v, _, _ = random_states(robot, 3)
    bad = q.copy()
    bad[2, 3:7] *= scale
    with pytest.raises(ValueError, match=r"^q: joint 'free_flyer'.*of state \(2,\)"):
        robot.integrate(bad, v, 1e-3)
    with pytest.raises(ValueError, match=r"^q0: joint 'free_flyer'.*not 1"):
        robot.difference(bad[2], q[2])
    with pytest.raises(ValueError, match=r"^q1: joint 'free_flyer'.*of state \(2,\)"):
        robot.difference(q, bad)
    # what they take, rounding off unit norm, they answer; a NaN state gives NaN, as elsewhere
    q[:, 3:7] *= 1.0 + 1e-9
    assert np.isfinite(robot.integrate(q, v, 1e-3)).all()
    q[0, 3:7] = np.nan
    assert np.isnan(robot.difference(q, q)[0, :6]).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.mass_matrix(np.zeros(r.nv)), r"q must have shape \(19,\) or \(B, 19\)"),
        (lambda r: r.inverse_dynamics(r.neutral(), np.zeros(19), np.zeros(18)),
         r"qd must have shape \(18,\)"),
        (lambda r: r.forward_dynamics(r.neutral(), np.zeros(18), np.zeros(12)),
         r"tau must have shape \(18,\)"),
        (lambda r: r.difference(r.neutral(), np.zeros(18)), r"q1: expected shape \(..., 19\)"),
        (lambda r: r.inverse_dynamics(r.neutral(), ["a"] * 18, np.zeros(18)),
         "qd must be an array of numbers"),
    ],
)
def test_states_of_the_wrong_shape_are_named(call, message: str) -> None:
    robot, _ = robot_and_oracle("solo12")
    with pytest.raises((ValueError, TypeError), match=message):
        call(robot)


def test_a_massless_base_moving_with_its_one_joint_is_found_at_load() -> None:
    """A generated chain's base_link has no <inertial>: floating, it moves with joint_0, so M
    is singular everywhere; the load says so and q̈ is refused, never answered."""
    with pytest.warns(URDFWarning, match="floating base whose body.*'base_link'.*massless"):
        robot = Robot.from_urdf_string(random_chain_urdf(7, seed=3), floating_base=True)
    assert set(robot.massless_joints) <= set(FREE_FLYER_JOINTS)
    with pytest.raises(SingularMassMatrixError):
        robot.forward_dynamics(robot.neutral(), np.zeros(robot.nv), np.zeros(robot.nv))
    robot.mass_matrix(robot.neutral())  # M itself exists


def test_a_joint_named_like_the_free_flyer_is_refused() -> None:
    urdf = random_tree_urdf(4, seed=1).replace('"joint_2"', '"free_flyer_rz"')
    with pytest.raises(ModelError, match="'free_flyer_rz' are named like the floating base"):
        Robot.from_urdf_string(urdf, floating_base=True)


def test_payload_matches_pinocchio() -> None:
    from robodyn_ros.testing.floating_pinocchio_oracle import FloatingPinocchioOracle

    path = example_robot_urdf("talos_reduced")
    load = (2.5, (0.0, 0.02, -0.1), np.diag([0.01, 0.02, 0.015]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        robot = Robot.from_urdf(path, floating_base=True).with_payload("arm_left_7_link", *load)
    oracle = FloatingPinocchioOracle(path, robot.joint_names, payloads={"arm_left_7_link": load})
    q, v, vdot, _ = (x[0] for x in random_states(robot, 1))
    assert_close(robot.inverse_dynamics(q, v, vdot), oracle.rnea(q, v, vdot), "τ with a payload")
    assert_close(robot.centre_of_mass(q), oracle.centre_of_mass(q), "CoM with a payload")


def test_mimic_joints_follow_their_leaders_on_a_floating_base() -> None:
    """TALOS with its grippers' mimic joints: what it answers is consistent with itself (the
    oracle takes no mimic joints) and with the free robot's weight."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        robot = Robot.from_urdf(example_robot_urdf("talos"), floating_base=True)
    assert robot.coupling is not None
    q, v, _, tau = (x[0] for x in random_states(robot, 1))
    vdot = robot.forward_dynamics(q, v, tau)
    assert_close(robot.inverse_dynamics(q, v, vdot), tau, "ID(FD(τ))")
    gravity = robot.gravity_torques(q)
    assert_close(rotation_matrix(q[3:7]) @ gravity[:3], -robot.mass * robot.model.gravity,
                 "the weight on the base")


# -- physics any floating tree obeys ------------------------------------------------------------

TREES = st.builds(lambda size, seed: (size, seed), st.integers(3, 16), st.integers(0, 10_000))


def _floating_tree(size: int, seed: int) -> Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        return Robot.from_urdf_string(with_base_mass(random_tree_urdf(size, seed=seed)),
                                      floating_base=True)


@settings(max_examples=15, deadline=None)
@given(tree=TREES, seed=st.integers(0, 2**31))
def test_inverse_dynamics_inverts_forward_dynamics(tree: tuple[int, int], seed: int) -> None:
    robot = _floating_tree(*tree)
    q, v, _, tau = (x[0] for x in random_states(robot, 1, seed=seed))
    assert_close(robot.inverse_dynamics(q, v, robot.forward_dynamics(q, v, tau)), tau, "τ",
                 scale=1e2)


@settings(max_examples=15, deadline=None)
@given(tree=TREES, seed=st.integers(0, 2**31))
def test_a_free_robot_falls_at_g(tree: tuple[int, int], seed: int) -> None:
    """With nothing on the base (τ[:6] = 0) the centre of mass accelerates at g, whatever the
    joints do: m c̈ = m g, c̈ = J_c v̇ + J̇_c v, with J̇_c v from a finite difference of J_c."""
    robot = _floating_tree(*tree)
    q, v, _, tau = (x[0] for x in random_states(robot, 1, seed=seed))
    tau[:6] = 0.0
    vdot = robot.forward_dynamics(q, v, tau)
    h = 1e-6
    rate = (robot.com_jacobian(robot.integrate(q, v, h)) - robot.com_jacobian(
        robot.integrate(q, v, -h))) / (2 * h)
    acceleration = robot.com_jacobian(q) @ vdot + rate @ v
    assert_close(acceleration, robot.model.gravity, "c̈", rtol=1e-6, scale=1e3)


@settings(max_examples=15, deadline=None)
@given(tree=TREES, seed=st.integers(0, 2**31), turn=st.lists(st.floats(-1, 1), min_size=4,
                                                            max_size=4))
def test_moving_the_world_moves_nothing_in_joint_space(
    tree: tuple[int, int], seed: int, turn: list[float]
) -> None:
    """Turn and shift the whole scene (base pose and gravity) by one rigid motion: τ, M and the
    energies stay, the CoM moves with the scene."""
    robot = _floating_tree(*tree)
    q, v, vdot, _ = (x[0] for x in random_states(robot, 1, seed=seed))
    quaternion = np.array(turn) if np.linalg.norm(turn) > 0.1 else np.array([0, 0, 0, 1.0])
    quaternion /= np.linalg.norm(quaternion)
    R0, shift = rotation_matrix(quaternion), np.array([0.3, -1.0, 2.0])
    moved_q = q.copy()
    moved_q[:3] = R0 @ q[:3] + shift
    moved_q[3:7] = quaternion_of(R0 @ rotation_matrix(q[3:7]))
    moved = robot.with_gravity(R0 @ robot.model.gravity)
    assert_close(moved.inverse_dynamics(moved_q, v, vdot), robot.inverse_dynamics(q, v, vdot),
                 "τ", scale=1e2)
    assert_close(moved.mass_matrix(moved_q), robot.mass_matrix(q), "M")
    assert_close(moved.centre_of_mass(moved_q), R0 @ robot.centre_of_mass(q) + shift, "CoM")
    assert_close(moved.potential_energy(moved_q) + moved.mass * shift @ moved.model.gravity,
                 robot.potential_energy(q), "V", scale=1e2)


@pytest.mark.parametrize(("name", "feet"), [
    ("talos_reduced", ("left_sole_link", "right_sole_link")),
    ("solo12", ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")),
])
def test_standing_puts_the_lowest_foot_on_the_ground(name: str, feet: tuple[str, ...]) -> None:
    """Pinocchio places the feet of the standing configuration: the lowest at z = 0 (1e-12 m),
    the others at or above it; the joints and the base's orientation are those given."""
    robot, oracle = robot_and_oracle(name)
    q = random_states(robot, 1)[0][0]
    standing = robot.standing(feet, q)
    heights = [oracle.frame_pose(standing, foot)[2, 3] for foot in feet]
    assert abs(min(heights)) < 1e-12, heights
    assert np.array_equal(np.delete(standing, 2), np.delete(q, 2))
    neutral = [oracle.frame_pose(robot.standing(feet), foot)[2, 3] for foot in feet]
    assert max(np.abs(neutral)) < 1e-12, neutral  # level feet at neutral: all on the ground


def test_standing_names_what_it_cannot_place() -> None:
    robot, _ = robot_and_oracle("solo12")
    with pytest.raises(ModelError, match="unknown frame 'no_such_foot'"):
        robot.standing(["FL_FOOT", "no_such_foot"])
    with pytest.raises(ValueError, match="at least one frame"):
        robot.standing([])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        robot.standing(["FL_FOOT"], np.zeros(3))
    q = robot.neutral()
    q[[2, 9]] = np.inf, np.nan
    with pytest.raises(ValueError, match=r"not finite at index\(es\) \[2, 9\]"):
        robot.standing(["FL_FOOT"], q)
