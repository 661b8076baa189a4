"""The whole-body programme built by its kernel against the same programme built densely from
the Robot's own quantities (M, b, g, J_com, c, the frames' Jacobians and classical
accelerations, contact_drift) and the cones of whole_body.cone_rows, at random states: its
equalities' solutions x₀ + Z z (control.null_space) against the dense equalities, the
programme over z against the dense one's over x = x₀ + Z z, and its answer against DAQP's on
the dense programme."""

from __future__ import annotations

import warnings

import daqp
import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.control.operational_space_controller import rotation_error
from robodyn_ros.control.whole_body import (
    Ground,
    SoleRectangle,
    WholeBodyController,
    WholeBodyTargets,
    cone_rows,
)
from robodyn_ros.model import URDFWarning
from robodyn_ros.model.generate import random_tree_urdf
from robodyn_ros.robot.contact_dynamics import Contact, contact_drift, contact_jacobian
from robodyn_ros.robot.free_flyer import rotation_matrix
from robodyn_ros.testing import example_robot_urdf

from helpers.robots import with_mimic
from helpers.tolerances import assert_close

SOLO_FEET = tuple(Contact(foot, "3d") for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"))
TALOS_SOLES = (Contact("left_sole_link", "6d"), Contact("right_sole_link", "6d"))


def dense_programme(controller: WholeBodyController, q: np.ndarray, v: np.ndarray) -> dict:
    """The programme of control.whole_body's module docstring, from the Robot's methods."""
    robot, targets, contacts = controller.robot, controller.targets, controller.contacts
    nv, mass = robot.nv, robot.mass
    kp, kd, weights = targets.kp, targets.kd, targets.weights
    J_c = contact_jacobian(robot, q, contacts)
    forces = J_c.shape[0]
    M, bias = robot.mass_matrix(q), robot.bias_forces(q, v)
    J_com = robot.com_jacobian(q)
    velocity_products = bias - robot.gravity_torques(q)  # base rows: m c̈ at v̇ = 0, base axes
    com_drift = rotation_matrix(q[3:7]) @ velocity_products[:3] / mass
    J = robot.jacobian(q, targets.frame)
    pose = robot.frame_pose(q, targets.frame)
    error = np.concatenate([targets.position - pose[:3, 3],
                            rotation_error(targets.orientation, pose[:3, :3])])
    tasks = [
        (J_com, kp[0] * (targets.com - robot.centre_of_mass(q)) - kd[0] * (J_com @ v)
         - com_drift),
        (J, kp[1] * error - kd[1] * (J @ v) - robot.classical_acceleration(q, v, targets.frame)),
        (np.eye(nv)[6:], kp[2] * (targets.posture - q[7:]) - kd[2] * v[6:]),
    ]
    H, g = np.zeros((nv + forces,) * 2), np.zeros(nv + forces)
    for weight, (A, b) in zip(weights, tasks, strict=True):
        H[:nv, :nv] += weight * A.T @ A
        g[:nv] -= weight * A.T @ b
    H[nv:, nv:] = targets.force_weight * np.eye(forces)
    A_eq = np.zeros((6 + forces, nv + forces))
    A_eq[:6, :nv], A_eq[:6, nv:], A_eq[6:, :nv] = M[:6] / mass, -J_c[:, :6].T, J_c
    b_eq = np.concatenate([-bias[:6] / mass,
                           -contact_drift(robot, q, v, contacts)
                           - targets.contact_damping * (J_c @ v)])
    cones = [cone_rows(contact, robot.frame_pose(q, contact.frame)[:3, :3], controller.ground)
             for contact in contacts]
    C = np.zeros((sum(len(cone.lower) for cone in cones), nv + forces))
    row = column = 0
    for cone in cones:
        rows, width = cone.rows.shape
        C[row:row + rows, nv + column:nv + column + width] = cone.rows
        row, column = row + rows, column + width
    lower = np.concatenate([cone.lower for cone in cones]) / mass
    return {"H": H, "g": g, "A_eq": A_eq, "b_eq": b_eq, "C": C, "lower": lower, "M": M,
            "b": bias, "J_c": J_c}


def check_at_random_states(controller: WholeBodyController, q0: np.ndarray, seed: int
                           ) -> None:
    robot = controller.robot
    rng = np.random.default_rng(seed)
    for _ in range(5):
        q = q0.copy()
        q[:3] += rng.uniform(-0.1, 0.1, 3)
        q[3:7] = rng.normal(size=4) / 4 + np.array([0.0, 0.0, 0.0, 1.0])
        q[3:7] /= np.linalg.norm(q[3:7])
        q[7:] += rng.uniform(-0.3, 0.3, robot.nv - 6)
        v = rng.uniform(-1.0, 1.0, robot.nv)
        controller.solve(q, v)
        compiled = controller.programme
        dense = dense_programme(controller, q, v)
        for name in ("M", "b", "J_c"):
            assert_close(getattr(compiled, name), dense[name], f"{name} at a random state",
                         rtol=1e-9)
        Z, x0 = compiled.basis, compiled.particular
        A_eq, b_eq, H, g, C = dense["A_eq"], dense["b_eq"], dense["H"], dense["g"], dense["C"]
        assert Z.shape == (robot.nv + len(dense["J_c"]), robot.nv - 6)
        assert np.linalg.matrix_rank(Z) == robot.nv - 6
        assert_close(A_eq @ x0, b_eq, "the equalities at x₀", rtol=1e-9)
        assert_close(A_eq @ Z, np.zeros_like(A_eq @ Z), "the equalities along Z", rtol=1e-9,
                     scale=np.abs(A_eq).max() * np.abs(Z).max())
        assert_close(compiled.H, Z.T @ H @ Z, "H over z", rtol=1e-9)
        assert_close(compiled.g, Z.T @ (H @ x0 + g), "g over z", rtol=1e-9)
        assert_close(compiled.A, C @ Z, "the cones over z", rtol=1e-9)
        assert_close(compiled.lower, dense["lower"] - C @ x0, "the cones' bounds over z",
                     rtol=1e-9)
        rows = np.vstack([A_eq, C])
        upper = np.concatenate([b_eq, np.full(len(C), 1e30)])
        sense = np.concatenate([np.full(len(b_eq), 5), np.zeros(len(C))]).astype(np.int32)
        x, _, flag, _ = daqp.solve(H, g, rows, upper, np.concatenate([b_eq, dense["lower"]]),
                                   sense)
        assert flag == 1
        assert_close(compiled.solution, x, "the answer against DAQP's on the dense programme",
                     rtol=1e-7)


def test_a_quadruped_on_point_feet() -> None:
    """Solo12 on its four feet (3-D contacts), μ 0.7 and f_n ≥ 2 N, the base's pose a task."""
    robot = Robot.from_urdf(example_robot_urdf("solo12"), floating_base=True)
    q = robot.neutral()
    pose = robot.frame_pose(q, "base_link")
    targets = WholeBodyTargets(com=np.array([0.01, -0.02, 0.2]), frame="base_link",
                               position=pose[:3, 3] + 0.02, orientation=pose[:3, :3],
                               posture=q[7:] + 0.1, kp=(90.0, 80.0, 20.0),
                               kd=(15.0, 12.0, 5.0), weights=(5.0, 2.0, 1e-2))
    controller = WholeBodyController(robot, SOLO_FEET, targets,
                                     Ground(friction=0.7, min_normal_force=2.0))
    check_at_random_states(controller, q, 0)


def test_a_humanoid_on_soles_on_an_incline() -> None:
    """TALOS on its two soles (6-D, with sole rectangles: CoP and yaw rows) on ground tilted
    about x and y, the left hand a task."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        robot = Robot.from_urdf(example_robot_urdf("talos_reduced"), floating_base=True)
    q = robot.neutral()
    hand = robot.frame_pose(q, "arm_left_7_link")
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    targets = WholeBodyTargets(com=robot.centre_of_mass(q) + 0.02, frame="arm_left_7_link",
                               position=hand[:3, 3] + 0.1, orientation=turn @ hand[:3, :3],
                               posture=q[7:].copy())
    ground = Ground(friction=0.6, normal=(0.1, -0.2, 1.0), min_normal_force=5.0,
                    soles={"left_sole_link": SoleRectangle(0.2, 0.1),
                           "right_sole_link": SoleRectangle(0.22, 0.12)})
    controller = WholeBodyController(robot, TALOS_SOLES, targets, ground)
    check_at_random_states(controller, q, 1)


def test_a_robot_with_mimic_joints_is_refused_naming_them() -> None:
    """The programme is compiled on the kinematic tree, which takes every joint as free."""
    urdf = with_mimic(random_tree_urdf(8, seed=3), "joint_7", "joint_2", 0.5, 0.0)
    robot = Robot.from_urdf_string(urdf, floating_base=True)
    q = robot.neutral()
    pose = robot.frame_pose(q, "link_7")
    targets = WholeBodyTargets(com=robot.centre_of_mass(q), frame="link_7",
                               position=pose[:3, 3], orientation=pose[:3, :3], posture=q[7:])
    with pytest.raises(ValueError, match=r"WholeBodyController: .*mimic joints.*joint_7"):
        WholeBodyController(robot, (Contact("link_3", "3d"),), targets)
