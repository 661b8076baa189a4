"""The Coriolis matrix C(q, q̇) against Pinocchio's computeCoriolisMatrix on real robots and
generated chains and trees, and the properties that define it whatever the oracle says: C q̇ is
the Coriolis and centrifugal part of the bias forces, Ṁ − 2C is skew-symmetric, C is linear in
q̇ and free of gravity and armature; a batch gives the stack of its states, and a single state,
which enters through its C entry, the batch kernel's answer to rounding. (C as dynamics_node
publishes it: ros/test_dynamics_node_coriolis.py.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.model import URDFWarning
from robodyn_ros.model.generate import random_tree_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.cases import case_named
from helpers.tolerances import BATCH_RTOL, assert_close

ROBOTS = (
    "bundled_panda", "panda", "kinova", "talos", "chain7", "chain64", "tree12_seed1",
    "tree40_seed2",
)
STATES = 3
# Ṁ by a central difference of M along q̇ with step ε = FD_STEP, which balances its truncation
# error O(ε²) against rounding O(1e-16/ε): |Ṁ − 2C + (Ṁ − 2C)ᵀ| is held to FD_RTOL of max |Ṁ|
# (measured up to 3e-9, on chain64).
FD_STEP = 1e-5
FD_RTOL = 1e-8


@pytest.mark.parametrize("name", ROBOTS)
def test_coriolis_matrix_against_pinocchio(name: str) -> None:
    case = case_named(name)
    q, qd, _, _ = case.states(STATES, seed=21)
    for i in range(STATES):
        C = case.robot.coriolis_matrix(q[i], qd[i])
        assert_close(C, case.oracle.coriolis_matrix(q[i], qd[i]), f"{name} state {i} C")


@pytest.mark.parametrize("name", ROBOTS)
def test_coriolis_times_velocity_is_the_bias_without_gravity(name: str) -> None:
    case = case_named(name)
    q, qd, _, _ = case.states(STATES, seed=22)
    C_qd = np.einsum("bij,bj->bi", case.robot.coriolis_matrix(q, qd), qd)
    for i in range(STATES):
        coriolis_torques = case.robot.bias_forces(q[i], qd[i]) - case.robot.gravity_torques(q[i])
        assert_close(C_qd[i], coriolis_torques, f"{name} state {i} C q̇")


@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_rate_minus_twice_coriolis_is_skew_symmetric(name: str) -> None:
    case = case_named(name)
    q, qd, _, _ = case.states(STATES, seed=23)
    M_ahead = case.robot.mass_matrix(q + FD_STEP * qd)
    M_behind = case.robot.mass_matrix(q - FD_STEP * qd)
    M_rate = (M_ahead - M_behind) / (2.0 * FD_STEP)
    N = M_rate - 2.0 * case.robot.coriolis_matrix(q, qd)
    for i in range(STATES):
        asymmetry = np.max(np.abs(N[i] + N[i].T))
        bound = FD_RTOL * np.max(np.abs(M_rate[i]))
        assert asymmetry <= bound, f"{name} state {i}: |Ṁ - 2C + (Ṁ - 2C)ᵀ| {asymmetry:.1e}"


def test_coriolis_matrix_is_linear_in_velocity_and_free_of_gravity_and_armature() -> None:
    case = case_named("tree12_seed1")
    robot = case.robot
    q, qd, qd_other, _ = case.states(1, seed=24)
    C = robot.coriolis_matrix(q, qd)
    assert_close(robot.coriolis_matrix(q, -2.5 * qd), -2.5 * C, "C(q, -2.5 q̇)")
    assert_close(robot.coriolis_matrix(q, qd + qd_other), C + robot.coriolis_matrix(q, qd_other),
                 "C(q, q̇ + q̇')")
    weightless = robot.with_gravity((0.0, 0.0, 0.0))
    armed = robot.with_armature(dict.fromkeys(robot.joint_names, 0.5))
    np.testing.assert_array_equal(weightless.coriolis_matrix(q, qd), C)
    np.testing.assert_array_equal(armed.coriolis_matrix(q, qd), C)


def test_batch_is_the_stack_of_single_states() -> None:
    case = case_named("tree12_seed1")
    robot = case.robot
    q, qd, _, _ = case.states(4, seed=25)
    batch = robot.coriolis_matrix(q, qd)
    singles = np.stack([robot.coriolis_matrix(q[i], qd[i]) for i in range(4)])
    assert batch.shape == singles.shape == (4, robot.nv, robot.nv)
    assert_close(batch, singles, "batch", rtol=BATCH_RTOL)
    np.testing.assert_array_equal(robot.coriolis_matrix(q[:1], qd[:1]), batch[:1])
    np.testing.assert_array_equal(robot.coriolis_matrix(list(q[0]), tuple(qd[0])), batch[0])
    with pytest.raises(ValueError, match="qd must have shape"):
        robot.coriolis_matrix(q, qd[:2])


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 6),
    seed=st.integers(0, 1000),
    prismatic_fraction=st.sampled_from([0.0, 0.5, 1.0]),
    data=st.data(),
)
def test_random_small_trees_against_pinocchio(
    n: int, seed: int, prismatic_fraction: float, data: st.DataObject
) -> None:
    """One joint, joints of one kind, joints at rest among moving ones: C against Pinocchio."""
    urdf = random_tree_urdf(n, seed=seed, prismatic_fraction=prismatic_fraction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        robot = Robot.from_urdf_string(urdf)
    oracle = PinocchioOracle(urdf, robot.joint_names, is_string=True)
    joint_values = st.lists(
        st.one_of(st.just(0.0), st.floats(-3.0, 3.0)), min_size=robot.nv, max_size=robot.nv
    )
    q, qd = np.array(data.draw(joint_values)), np.array(data.draw(joint_values))
    assert_close(robot.coriolis_matrix(q, qd), oracle.coriolis_matrix(q, qd), "C")
