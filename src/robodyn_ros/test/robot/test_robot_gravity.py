"""Gravity as a vector in the base frame (an arm on a wall or a ceiling): every function that
gravity enters, the simulated robot and the preview's rollout follow Pinocchio with
``model.gravity`` set; a gravity that is not three finite numbers is refused. (The nodes'
gravity parameter: ros/test_description_gravity.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.model import ModelError
from robodyn_ros.model.generate import random_tree_urdf
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.checks import expect_idle_fall
from helpers.tolerances import close

WALL = (9.81, 0.0, 0.0)  # base z horizontal: the arm hangs off a wall
SLANTED = (1.2, -3.4, 8.9)
PANDA = bundled_urdf("panda").read_text()
TREE = random_tree_urdf(12, seed=3)


@pytest.mark.parametrize("urdf", [PANDA, TREE], ids=["panda", "tree12"])
@pytest.mark.parametrize("gravity", [WALL, SLANTED], ids=["wall", "slanted"])
def test_every_function_gravity_enters_matches_pinocchio(urdf, gravity) -> None:
    robot = Robot.from_urdf_string(urdf, gravity=gravity)
    oracle = PinocchioOracle(urdf, robot.joint_names, gravity=gravity, is_string=True)
    rng = np.random.default_rng(7)
    Q, QD, X = rng.uniform(-1.0, 1.0, (3, 4, robot.nv))
    for q, qd, x in zip(Q, QD, X, strict=True):
        close(robot.gravity_torques(q), oracle.gravity_torques(q))
        close(robot.bias_forces(q, qd), oracle.bias_forces(q, qd))
        close(robot.inverse_dynamics(q, qd, x), oracle.rnea(q, qd, x))
        for method in ("aba", "cholesky"):
            close(robot.forward_dynamics(q, qd, x, method=method), oracle.aba(q, qd, x))
        close(robot.potential_energy(q), oracle.potential_energy(q))
    close(robot.gravity_torques(Q), [oracle.gravity_torques(q) for q in Q])  # a batch
    close(robot.forward_dynamics(Q, QD, X), [oracle.aba(*state) for state in zip(Q, QD, X,
                                                                              strict=True)])


def test_with_gravity_is_the_robot_loaded_with_it() -> None:
    loaded = Robot.from_urdf_string(PANDA, gravity=WALL)
    changed = Robot.from_urdf_string(PANDA).with_gravity(WALL)
    np.testing.assert_array_equal(changed.model.gravity, WALL)
    q = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_array_equal(changed.gravity_torques(q), loaded.gravity_torques(q))
    np.testing.assert_array_equal(Robot.from_urdf_string(PANDA).model.gravity, (0, 0, -9.81))


@pytest.mark.parametrize("gravity", [(0.0, -9.81), (0.0, 0.0, float("nan")), "down", None,
                                     (0.0, 0.0, float("inf")), [[0.0, 0.0, -9.81]]])
def test_a_gravity_that_is_not_three_finite_numbers_is_refused(gravity) -> None:
    robot = Robot.from_urdf_string(PANDA)
    if gravity is None:  # None means the default, not "no gravity"
        assert robot.with_gravity((0.0, 0.0, 0.0)).gravity_torques(np.zeros(7)).max() == 0.0
        return
    with pytest.raises(ModelError, match="robot 'panda': gravity must be 3 finite numbers"):
        robot.with_gravity(gravity)


def test_the_simulated_robot_and_the_rollout_fall_along_the_wall_gravity() -> None:
    robot = Robot.from_urdf_string(PANDA, gravity=WALL)
    expect_idle_fall(robot, PinocchioOracle(PANDA, robot.joint_names, gravity=WALL,
                                            is_string=True))
