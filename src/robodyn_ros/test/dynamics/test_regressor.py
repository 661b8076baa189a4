"""The inverse-dynamics regressor τ = Y π and the parameters π
(robodyn_ros.model.inertial_parameters): Y's body columns against Pinocchio's
computeJointTorqueRegressor and π's bodies against its toDynamicParameters, on real robots and
generated chains and trees (to RTOL = 1e-9 of the largest entry, helpers.tolerances); Y π
against Pinocchio's RNEA plus the joints' friction; with_inertial_parameters against a
Pinocchio model given the same π; mimic joints through G;
and parameters no rigid body has refused, naming the link or joint.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.model import ModelError
from robodyn_ros.model.generate import random_chain_urdf
from robodyn_ros.model.model import FRICTION_VELOCITY
from robodyn_ros.testing.perturbed_robot import Perturbation, perturbed_parameters
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.robots import with_mimic
from helpers.tolerances import BATCH_RTOL, assert_close, close

STATES = 3


def joint_friction(robot: Robot, qd: np.ndarray, parameters: np.ndarray) -> np.ndarray:
    """d q̇ + f tanh(q̇ / ε) + offset of every joint of the tree, from π's joint block."""
    joints = parameters[10 * robot.model.nv:].reshape(robot.model.nv, 4)
    return joints[:, 1] * qd + joints[:, 2] * np.tanh(qd / FRICTION_VELOCITY) + joints[:, 3]


def test_body_columns_match_pinocchio(case) -> None:
    q, qd, qdd, _ = case.states(STATES, seed=11)
    n = case.robot.nv
    for i in range(STATES):
        Y = case.robot.inverse_dynamics_regressor(q[i], qd[i], qdd[i])
        assert Y.shape == (n, 14 * n)
        assert_close(Y[:, : 10 * n], case.oracle.joint_torque_regressor(q[i], qd[i], qdd[i]),
                     f"{case.name} state {i} Y")


def test_parameters_match_pinocchio(case) -> None:
    n = case.robot.nv
    parameters = case.robot.inertial_parameters()
    assert parameters.shape == (14 * n,) == (len(case.robot.parameter_names),)
    assert_close(parameters[: 10 * n].reshape(n, 10), case.oracle.body_parameters(),
                 f"{case.name} π")


def test_y_times_parameters_is_rnea_plus_friction(case) -> None:
    """With the armature's columns: Y π = M q̈ + C q̇ + g (Pinocchio, which has the armature of
    the robot) + the friction terms RNEA leaves out."""
    q, qd, qdd, _ = case.states(STATES, seed=12)
    parameters = case.robot.inertial_parameters()
    for i in range(STATES):
        Y = case.robot.inverse_dynamics_regressor(q[i], qd[i], qdd[i])
        expected = case.oracle.rnea(q[i], qd[i], qdd[i]) + joint_friction(
            case.robot, qd[i], parameters)
        assert_close(Y @ parameters, expected, f"{case.name} state {i} Y π")


def test_a_batch_is_the_stack_of_its_states(case) -> None:
    q, qd, qdd, _ = case.states(STATES, seed=13)
    batch = case.robot.inverse_dynamics_regressor(q, qd, qdd)
    singles = np.array([case.robot.inverse_dynamics_regressor(*state)
                        for state in zip(q, qd, qdd, strict=True)])
    assert_close(batch, singles, f"{case.name} batch", rtol=BATCH_RTOL)


def test_with_inertial_parameters_is_the_robot_of_those_parameters(case) -> None:
    """A perturbed π (testing.perturbed_robot): the new robot's τ, M and q̈ match Pinocchio's
    model given the same π, and Y π (Y does not depend on π) its τ plus friction; π comes back
    exactly."""
    parameters = perturbed_parameters(case.robot, seed=3)
    robot = case.robot.with_inertial_parameters(parameters)
    np.testing.assert_array_equal(robot.inertial_parameters()[: 10 * robot.nv],
                                  parameters[: 10 * robot.nv])
    n = robot.nv
    oracle = case.oracle.with_parameters(parameters[: 10 * n].reshape(n, 10),
                                         parameters[10 * n :: 4])
    q, qd, qdd, _ = case.states(2, seed=14)
    for i in range(2):
        tau = robot.inverse_dynamics(q[i], qd[i], qdd[i])
        assert_close(tau, oracle.rnea(q[i], qd[i], qdd[i]), f"{case.name} τ")
        assert_close(robot.mass_matrix(q[i]), oracle.mass_matrix(q[i]), f"{case.name} M")
        Y = case.robot.inverse_dynamics_regressor(q[i], qd[i], qdd[i])
        assert_close(Y @ parameters, tau + joint_friction(robot, qd[i], parameters),
                     f"{case.name} Y π")


def test_mimic_joints_see_the_tree_through_g() -> None:
    """A chain whose joint_3 mimics joint_2: Y = Gᵀ Y_all over the tree's π, and Y π is
    Pinocchio's mimic=True RNEA plus Gᵀ the friction of every joint of the tree."""
    urdf = with_mimic(random_chain_urdf(6, seed=4), "joint_3", "joint_2", -0.7, 0.1)
    robot = Robot.from_urdf_string(urdf)
    oracle = PinocchioOracle(urdf, robot.joint_names, mimic=True, is_string=True)
    parameters = robot.inertial_parameters()
    assert parameters.shape == (14 * robot.model.nv,)
    rng = np.random.default_rng(15)
    c = robot.coupling
    for q, qd, qdd in rng.uniform(-1.0, 1.0, (STATES, 3, robot.nv)):
        Y = robot.inverse_dynamics_regressor(q, qd, qdd)
        assert Y.shape == (robot.nv, parameters.size)
        expected = oracle.rnea(q, qd, qdd) + c.forces(joint_friction(robot, c.rates(qd),
                                                                     parameters))
        close(Y @ parameters, expected)


def test_parameters_no_rigid_body_has_are_refused() -> None:
    robot = Robot.from_urdf_string(random_chain_urdf(3, seed=2))
    good = robot.inertial_parameters()
    link, joint = robot.model.body_links[1], robot.model.joint_names[2]
    cases = {
        "wrong length": (good[:-1], "must be 42 finite numbers"),
        "NaN": (np.where(np.arange(good.size) == 5, np.nan, good), "finite numbers"),
        "negative mass": (replaced(good, 10, -1.0), f"link '{link}': mass must be 0"),
        "triangle": (replaced(good, 14, good[14] + 10.0), f"link '{link}': its inertia about"),
        "massless with a moment": (replaced(replaced(good, 10, 0.0), 11, 0.1),
                                   f"link '{link}': a massless body"),
        "negative friction": (replaced(good, 30 + 4 * 2 + 2, -0.1),
                              f"joint '{joint}': coulomb must be ≥ 0"),
    }
    for what, (parameters, message) in cases.items():
        with pytest.raises(ModelError, match=re.escape(message)):
            robot.with_inertial_parameters(parameters)
            pytest.fail(what)
    with pytest.raises(ValueError, match="friction_velocity must be a positive"):
        robot.inverse_dynamics_regressor(np.zeros(3), np.zeros(3), np.zeros(3),
                                         friction_velocity=0.0)


def replaced(parameters: np.ndarray, index: int, value: float) -> np.ndarray:
    changed = parameters.copy()
    changed[index] = value
    return changed


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 9))
def test_any_rigid_bodies_round_trip_and_give_their_torques(seed: int, size: int) -> None:
    """Random chains given random rigid bodies, armature and friction: π comes back exactly
    from the new robot, and Y π is its RNEA plus friction."""
    robot = Robot.from_urdf_string(random_chain_urdf(size, seed=seed % 1000))
    parameters = perturbed_parameters(robot, seed, Perturbation(
        mass_scale=(0.1, 10.0), com_shift=0.3, inertia_scale=(0.1, 10.0)))
    changed = robot.with_inertial_parameters(parameters)
    back = changed.inertial_parameters()
    np.testing.assert_array_equal(back[: 10 * size], parameters[: 10 * size])
    np.testing.assert_array_equal(back[10 * size + 1 :: 4], parameters[10 * size + 1 :: 4])
    q, qd, qdd = np.random.default_rng(seed).uniform(-2.0, 2.0, (3, size))
    Y = robot.inverse_dynamics_regressor(q, qd, qdd)
    close(Y @ parameters, changed.inverse_dynamics(q, qd, qdd)
          + joint_friction(changed, qd, parameters))
