"""Mimic joints as constraints (MimicRobot): the coordinates are the independent joints and
every function is the tree's seen through q_all = G q + q₀. Checked against Pinocchio 4's
``mimic=True`` on the example panda (its fingers mimic each other) and on generated chains and
trees, and against the dense reference Gᵀ M_all G built here for a chain of mimics; bad rules
are refused naming the joints, and mimic=False keeps them independent joints. (dynamics_node
with mimic joints: ros/test_dynamics_node_mimic.py.)"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.contact import Plane, World
from robodyn_ros.errors import SingularMassMatrixError
from robodyn_ros.model import ModelError, URDFWarning
from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.checks import expect_joint_space
from helpers.robots import with_mimic
from helpers.tolerances import close

PANDA = example_robot_urdf("panda").read_text()


CHAIN = with_mimic(random_chain_urdf(6, seed=4), "joint_3", "joint_2", -0.7, 0.1)
TREE = with_mimic(random_tree_urdf(10, seed=5), "joint_9", "joint_3", 1.5, -0.2)
ROBOTS = {"panda": (PANDA, "panda_rightfinger"), "chain6": (CHAIN, "link_5"),
          "tree10": (TREE, "link_9")}


def states(robot: Robot, count: int = 3, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lower = np.maximum(robot.model.lower, -1.0)[[robot.model.joint_names.index(j)
                                                  for j in robot.joint_names]]
    upper = np.minimum(robot.model.upper, 1.0)[[robot.model.joint_names.index(j)
                                                 for j in robot.joint_names]]
    return rng.uniform(lower, upper, (3, count, robot.nv))


@pytest.mark.parametrize("name", ROBOTS)
def test_every_function_matches_pinocchio_with_mimic_joints(name) -> None:
    urdf, frame = ROBOTS[name]
    robot = Robot.from_urdf_string(urdf)
    assert len(robot.mimic_joints) == 1 and robot.nv == robot.model.nv - 1
    oracle = PinocchioOracle(urdf, robot.joint_names, mimic=True, is_string=True)
    Q, QD, X = states(robot)
    for q, qd, x in zip(Q, QD, X, strict=True):
        expect_joint_space(robot, oracle, q, qd, x, ("aba", "cholesky"))
        close(robot.kinetic_energy(q, qd), 0.5 * qd @ oracle.mass_matrix(q) @ qd)
        close(robot.frame_pose(q, frame), oracle.frame_pose(q, frame))
        J = oracle.jacobian(q, frame)
        close(robot.jacobian(q, frame), J)
        Lambda_inv = J @ oracle.mass_matrix_inverse(q) @ J.T
        close(robot.operational_space_inertia(q, frame, inverse=True), Lambda_inv)
        task = robot.operational_space(q, qd, frame)
        close(task.J, J)
        close(task.Lambda_inv, Lambda_inv)
        close(task.Jdot_qd, oracle.classical_acceleration(q, qd, frame))
    close(robot.forward_dynamics(Q, QD, X),
          [oracle.aba(*state) for state in zip(Q, QD, X, strict=True)])
    close(robot.mass_matrix(Q), [oracle.mass_matrix(q) for q in Q])


@pytest.mark.parametrize("name", ["panda", "tree10"])
def test_the_coriolis_matrix_is_the_christoffel_form_of_the_coupled_m(name) -> None:
    """C[i, j] = ½ Σ_k (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k with Pinocchio's M of the
    mimic model, differentiated centrally (step 1e-6, so to 1e-7 of M's scale); Pinocchio
    4.1's own computeCoriolisMatrix is not this with mimic joints, so the definition is the
    oracle. C q̇ + g is Pinocchio's bias."""
    urdf, _ = ROBOTS[name]
    robot = Robot.from_urdf_string(urdf)
    oracle = PinocchioOracle(urdf, robot.joint_names, mimic=True, is_string=True)
    (q,), (qd,), _ = states(robot, count=1, seed=3)
    n, step = robot.nv, 1e-6
    dM = np.stack([(oracle.mass_matrix(q + step * e) - oracle.mass_matrix(q - step * e))
                   / (2 * step) for e in np.eye(n)], axis=-1)  # dM[i, j, k] = ∂M_ij/∂q_k
    christoffel = 0.5 * np.einsum("ijk,k->ij", dM + dM.transpose(0, 2, 1)
                                  - dM.transpose(2, 1, 0), qd)
    C = robot.coriolis_matrix(q, qd)
    np.testing.assert_allclose(C, christoffel, rtol=0,
                               atol=1e-7 * np.abs(oracle.mass_matrix(q)).max())
    close(C @ qd + robot.gravity_torques(q), oracle.bias_forces(q, qd))


def test_the_task_forces_are_those_of_the_coupled_robot() -> None:
    """μ and p from the coupled M, C q̇ and g: with τ = Jᵀ(Λ ẍ + μ + p) the frame accelerates
    as ẍ (a square, well-conditioned task: all six axes of the hand)."""
    robot = Robot.from_urdf_string(PANDA)
    q, qd = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7, 0.02]), np.full(8, 0.3)
    task = robot.operational_space(q, qd, "panda_hand")
    assert task.rank == 6
    desired = np.array([0.3, -0.2, 0.1, 0.5, -0.4, 0.2])
    tau = task.J.T @ (task.Lambda @ desired + task.mu + task.p)
    qdd = robot.forward_dynamics(q, qd, tau)
    close(task.J @ qdd + task.Jdot_qd, desired)


def test_a_follower_that_moves_no_mass_leaves_the_robot_served() -> None:
    """The right finger (the follower) without an inertial: the tree alone would have a
    singular M, the coupled one does not; q̈, Λ⁻¹ and the task's J̇ q̇ are Pinocchio's."""
    start = PANDA.index('<link name="panda_rightfinger">')
    end = PANDA.index("</link>", start)
    urdf = PANDA[:start] + re.sub(r"<inertial>.*?</inertial>", "", PANDA[start:end],
                                  flags=re.S) + PANDA[end:]
    robot = Robot.from_urdf_string(urdf)
    assert robot.massless_joints == ()
    oracle = PinocchioOracle(urdf, robot.joint_names, mimic=True, is_string=True)
    q, qd, tau = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7, 0.02]), np.full(8, 0.2), \
        np.linspace(-1.0, 1.0, 8)
    close(robot.forward_dynamics(q, qd, tau), oracle.aba(q, qd, tau))
    task = robot.operational_space(q, qd, "panda_hand")
    J = oracle.jacobian(q, "panda_hand")
    close(task.Lambda_inv, J @ oracle.mass_matrix_inverse(q) @ J.T)
    close(task.Jdot_qd, oracle.classical_acceleration(q, qd, "panda_hand"))


def test_a_chain_of_mimics_follows_its_first_leader() -> None:
    """joint_4 mimics joint_3, which mimics joint_2: the reference is the free tree's M and τ
    (Pinocchio, every joint free) through G built here from the two rules."""
    free = random_chain_urdf(6, seed=4)
    urdf = with_mimic(with_mimic(free, "joint_3", "joint_2", -0.7, 0.1), "joint_4", "joint_3",
                      2.0, 0.3)
    robot = Robot.from_urdf_string(urdf)
    assert robot.joint_names == ("joint_0", "joint_1", "joint_2", "joint_5")
    assert [(m.joint, m.leader) for m in robot.model.mimic] == [("joint_3", "joint_2"),
                                                                  ("joint_4", "joint_2")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        names = Robot.from_urdf_string(free).joint_names
    oracle = PinocchioOracle(free, names, is_string=True)
    G, offset = np.zeros((6, 4)), np.zeros(6)
    for row, column in ((0, 0), (1, 1), (2, 2), (5, 3)):
        G[row, column] = 1.0
    G[3, 2], offset[3] = -0.7, 0.1
    G[4, 2], offset[4] = 2.0 * -0.7, 2.0 * 0.1 + 0.3
    Q, QD, X = states(robot)
    for q, qd, x in zip(Q, QD, X, strict=True):
        q_all, qd_all, x_all = G @ q + offset, G @ qd, G @ x
        close(robot.mass_matrix(q), G.T @ oracle.mass_matrix(q_all) @ G)
        close(robot.inverse_dynamics(q, qd, x), G.T @ oracle.rnea(q_all, qd_all, x_all))


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda u: with_mimic(u, "joint_3", "joint_9", 1.0, 0.0),
     "joint 'joint_3' mimics joint 'joint_9', which is not a moving"),
    (lambda u: with_mimic(u, "joint_3", "fixed_0_joint", 1.0, 0.0),
     "mimics joint 'fixed_0_joint', which is not a moving"),
    (lambda u: with_mimic(with_mimic(u, "joint_3", "joint_2", 1.0, 0.0), "joint_2", "joint_3",
                          1.0, 0.0), "mimic joints follow one another in a loop"),
])
def test_a_rule_that_cannot_hold_is_refused_naming_the_joints(edit, reason) -> None:
    with pytest.raises(ModelError, match=re.escape(reason)):
        Robot.from_urdf_string(edit(random_chain_urdf(6, seed=4)))


def test_locking_a_leader_locks_its_followers_where_the_rule_puts_them() -> None:
    robot = Robot.from_urdf_string(CHAIN, locked_joints={"joint_2": 0.5})
    assert "joint_3" not in robot.model.joint_names and robot.mimic_joints == ()
    reference = Robot.from_urdf_string(CHAIN, mimic=False,
                                       locked_joints={"joint_2": 0.5, "joint_3": -0.25})
    q = np.linspace(-0.5, 0.5, robot.nv)
    close(robot.mass_matrix(q), reference.mass_matrix(q))
    with pytest.raises(ModelError, match="locked joint 'joint_3' mimics joint 'joint_2', which "
                                         "is not locked"):
        Robot.from_urdf_string(CHAIN, locked_joints={"joint_3": 0.0})
    with pytest.raises(ModelError, match=r"so it must be at -0\.25"):
        Robot.from_urdf_string(CHAIN, locked_joints={"joint_2": 0.5, "joint_3": 0.0})


def test_mimic_false_keeps_them_independent_joints_with_a_warning() -> None:
    with pytest.warns(URDFWarning, match="'panda_finger_joint2' mimics joint "
                                         "'panda_finger_joint1'; loaded as an independent"):
        robot = Robot.from_urdf_string(PANDA, mimic=False)
    assert robot.nv == 9 and robot.mimic_joints == () and type(robot) is Robot


def test_methods_on_free_joints_only_are_refused_and_the_rollout_too() -> None:
    robot = Robot.from_urdf_string(PANDA)
    q = np.zeros(8)
    with pytest.raises(ValueError, match=r"has mimic joints \(panda_finger_joint2\).*method "
                                         "'schur' works on free joints only"):
        robot.forward_dynamics(q, q, q, method="schur")
    with pytest.raises(ValueError, match="use 'dense' or 'recursive'"):
        robot.operational_space(q, q, "panda_hand", method="schur")
    with pytest.raises(ValueError, match="the compiled rollout takes every joint as free"):
        _ = robot.kernel_arrays


def test_a_world_is_refused_naming_the_mimic_joints() -> None:
    """The contact step is compiled and takes every joint as free: a robot with mimic joints
    in a world is refused when its simulation is made, not at its first step."""
    robot = Robot.from_urdf_string(PANDA)
    ground = World((Plane(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.5),))
    with pytest.raises(ValueError, match=r"mimic joints \(panda_finger_joint2\).*locked_joints"):
        SimulatedRobot(robot, "semi_implicit_euler", 1e-3, world=ground)


def test_a_hand_whose_fingers_follow_it_and_move_no_mass_is_named() -> None:
    """Romeo's fingers mimic LHand and RHand and have no inertial: M is singular through the
    two hand joints, named at load and by q̈; locking them locks the fingers and serves."""
    with pytest.warns(URDFWarning, match="'LHand', 'RHand' move no mass"):
        robot = Robot.from_urdf(example_robot_urdf("romeo"))
    assert robot.massless_joints == ("LHand", "RHand") and "LFinger21" in robot.mimic_joints
    q = np.zeros(robot.nv)
    with pytest.raises(SingularMassMatrixError, match="'LHand', 'RHand'"):
        robot.forward_dynamics(q, q, q)
    with warnings.catch_warnings():
        warnings.simplefilter("error", URDFWarning)
        locked = Robot.from_urdf(example_robot_urdf("romeo"),
                                 locked_joints={"LHand": 0.0, "RHand": 0.0})
    assert locked.mimic_joints == () and "LFinger21" not in locked.model.joint_names
    assert np.isfinite(locked.forward_dynamics(*np.zeros((3, locked.nv)))).all()


def test_the_simulated_arm_closes_both_fingers_through_the_rule() -> None:
    """SimulatedRobot on the gripper arm (semi-implicit Euler, an effort on the finger joint)
    against the same steps over Pinocchio's mimic model, with the damping of both fingers
    acting through the rule (G built here by hand: finger 2 copies finger 1)."""
    robot = Robot.from_urdf_string(PANDA)
    oracle = PinocchioOracle(PANDA, robot.joint_names, mimic=True, is_string=True)
    G = np.vstack([np.eye(8), np.eye(8)[7]])  # the tree's joints: 7 arm, finger 1, finger 2
    damping = np.array([robot.model.damping[robot.model.joint_names.index(name)]
                        for name in (*robot.joint_names, "panda_finger_joint2")])
    assert damping[-1] > 0.0  # the follower's damping counts
    dt, tau = 1e-3, np.array([0, 0, 0, 0, 0, 0, 0, -0.2])  # within the velocity limit
    q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8, 0.03])
    simulated = SimulatedRobot(robot, "semi_implicit_euler", dt, q=q0)
    q, qd = q0.copy(), np.zeros(8)
    for _ in range(10):
        simulated.step(tau)
        loss = G.T @ (damping * (G @ qd))  # the panda's URDF has no friction
        qd = qd + dt * oracle.aba(q, qd, tau - loss)
        q = q + dt * qd
        np.testing.assert_allclose(simulated.q, q, rtol=0, atol=1e-9)
    assert q[7] < q0[7] - 1e-4  # the fingers moved
