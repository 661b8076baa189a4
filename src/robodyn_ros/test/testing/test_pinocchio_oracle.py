"""The Pinocchio oracle answers in robodyn's joint order and coordinates."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from urdf_parser_py.urdf import URDF

from robodyn_ros.model.generate import random_tree_urdf
from robodyn_ros.testing import EXAMPLE_ROBOTS, PANDA_FINGERS, example_robot_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

TREE = random_tree_urdf(24, seed=11)
MOVING = ("revolute", "continuous", "prismatic")


def urdf_joints(xml: str) -> list[tuple[str, str]]:
    """(joint, child link) of every moving joint, in URDF document order."""
    robot = URDF.from_xml_string(xml.encode())  # lxml refuses str with an XML declaration
    return [(joint.name, joint.child) for joint in robot.joints if joint.type in MOVING]


def kinova_xml() -> str:
    return example_robot_urdf("kinova").read_text()


def make_oracle(robot: str, reverse: bool = False) -> tuple[PinocchioOracle, list[str]]:
    """Oracle with joints in URDF order (or reversed) and the child link of each joint."""
    xml = TREE if robot == "tree" else kinova_xml()
    names, links = zip(*urdf_joints(xml), strict=True)
    if reverse:
        names, links = names[::-1], links[::-1]
    return PinocchioOracle(xml, names, is_string=True), list(links)


def random_state(nv: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.0, 1.0, size=nv) for _ in range(3))


@pytest.mark.parametrize("robot", ["kinova", "tree"])
def test_aba_inverts_rnea_and_mass_matrix_is_spd(robot: str) -> None:
    oracle, _ = make_oracle(robot)
    q, qd, qdd = random_state(oracle.nv, seed=1)
    mass = oracle.mass_matrix(q)
    np.testing.assert_array_equal(mass, mass.T)
    np.linalg.cholesky(mass)
    tau = oracle.rnea(q, qd, qdd)
    np.testing.assert_allclose(oracle.aba(q, qd, tau), qdd, rtol=0, atol=1e-9)
    np.testing.assert_allclose(tau, mass @ qdd + oracle.bias_forces(q, qd), atol=1e-9)
    np.testing.assert_allclose(oracle.mass_matrix_inverse(q) @ mass, np.eye(oracle.nv), atol=1e-9)
    assert oracle.kinetic_energy(q, qd) == pytest.approx(qd @ mass @ qd / 2, rel=1e-12)


@pytest.mark.parametrize("robot", ["kinova", "tree"])
def test_reversed_joint_names_permute_every_result(robot: str) -> None:
    forward, links = make_oracle(robot)
    backward, _ = make_oracle(robot, reverse=True)
    q, qd, qdd = random_state(forward.nv, seed=2)
    r = slice(None, None, -1)
    np.testing.assert_allclose(backward.rnea(q[r], qd[r], qdd[r]), forward.rnea(q, qd, qdd)[r])
    np.testing.assert_allclose(backward.gravity_torques(q[r]), forward.gravity_torques(q)[r])
    np.testing.assert_allclose(backward.mass_matrix(q[r]), forward.mass_matrix(q)[r, r])
    np.testing.assert_allclose(
        backward.jacobian(q[r], links[-1]), forward.jacobian(q, links[-1])[:, r]
    )
    np.testing.assert_allclose(backward.frame_pose(q[r], links[0]), forward.frame_pose(q, links[0]))
    assert backward.potential_energy(q[r]) == pytest.approx(forward.potential_energy(q))


def test_continuous_joints_round_trip_as_cos_sin() -> None:
    oracle, _ = make_oracle("kinova")
    kinds = {joint.shortname() for joint in oracle.model.joints}
    assert "JointModelRUBZ" in kinds and oracle.model.nq > oracle.nv
    joints = [oracle.model.joints[oracle.model.getJointId(name)] for name in oracle.joint_names]
    continuous = np.array([joint.nq == 2 for joint in joints])
    q = np.linspace(-3.0, 3.0, oracle.nv)
    q_pin = oracle.q(q + 2 * np.pi * continuous)  # continuous angles come back wrapped
    assert pin.isNormalized(oracle.model, q_pin)
    np.testing.assert_allclose(oracle.q_to_ours(q_pin), q, atol=1e-12)
    first = joints[0]
    assert continuous[0]
    np.testing.assert_allclose(q_pin[first.idx_q : first.idx_q + 2], [np.cos(q[0]), np.sin(q[0])])


@pytest.mark.parametrize("robot", ["kinova", "tree"])
def test_jacobian_columns_match_finite_differences_of_the_pose(robot: str) -> None:
    oracle, links = make_oracle(robot)
    q, _, _ = random_state(oracle.nv, seed=3)
    link, step = links[-1], 1e-6
    jacobian = oracle.jacobian(q, link)
    for i in range(oracle.nv):
        dq = np.zeros(oracle.nv)
        dq[i] = step
        ahead, behind = oracle.frame_pose(q + dq, link), oracle.frame_pose(q - dq, link)
        np.testing.assert_allclose(
            (ahead[:3, 3] - behind[:3, 3]) / (2 * step), jacobian[:3, i], atol=1e-7
        )


def test_external_wrench_in_the_body_frame_acts_through_the_jacobian() -> None:
    oracle, links = make_oracle("tree")
    q, qd, qdd = random_state(oracle.nv, seed=4)
    body = 7
    wrench = np.array([1.0, -2.0, 3.0, 0.5, 0.25, -1.0])
    f_ext = np.zeros((oracle.nv, 6))
    f_ext[body] = wrench
    rotation = oracle.frame_pose(q, links[body])[:3, :3]
    world_aligned = np.concatenate([rotation @ wrench[:3], rotation @ wrench[3:]])
    expected = oracle.rnea(q, qd, qdd) - oracle.jacobian(q, links[body]).T @ world_aligned
    tau = oracle.rnea(q, qd, qdd, f_ext)
    np.testing.assert_allclose(tau, expected, atol=1e-9)
    np.testing.assert_allclose(oracle.aba(q, qd, tau, f_ext), qdd, atol=1e-9)


def test_operational_space_inertia_inverts_the_projected_inverse_inertia() -> None:
    oracle, links = make_oracle("kinova")  # a 6-joint arm: its hand Jacobian has full rank
    q, _, _ = random_state(oracle.nv, seed=5)
    jacobian = oracle.jacobian(q, links[-1])
    projected = jacobian @ oracle.mass_matrix_inverse(q) @ jacobian.T
    lam = oracle.operational_space_inertia(q, links[-1])
    np.testing.assert_allclose(lam @ projected, np.eye(6), atol=1e-8)


def test_locked_panda_fingers() -> None:
    arm = [f"panda_joint{i}" for i in range(1, 8)]
    oracle = PinocchioOracle(
        example_robot_urdf("panda"), arm, locked_joints=dict.fromkeys(PANDA_FINGERS, 0.02)
    )
    q, qd, qdd = random_state(7, seed=6)
    assert oracle.model.nv == 7
    np.testing.assert_allclose(oracle.aba(q, qd, oracle.rnea(q, qd, qdd)), qdd, atol=1e-9)
    assert oracle.frame_pose(q, "panda_leftfinger").shape == (4, 4)
    with pytest.raises(ValueError, match="panda_finger_joint1"):
        PinocchioOracle(
            example_robot_urdf("panda"),
            [*arm, "panda_finger_joint1"],
            locked_joints=dict.fromkeys(PANDA_FINGERS, 0.0),
        )


def test_bad_names_are_reported() -> None:
    xml = kinova_xml()
    names = [name for name, _ in urdf_joints(xml)]
    with pytest.raises(ValueError, match="missing"):
        PinocchioOracle(xml, names[1:], is_string=True)
    with pytest.raises(ValueError, match="not in the model"):
        PinocchioOracle(xml, [*names, "elbow"], is_string=True)
    oracle = PinocchioOracle(xml, names, is_string=True)
    with pytest.raises(KeyError, match="no link"):
        oracle.frame_pose(np.zeros(oracle.nv), "gripper")
    with pytest.raises(ValueError, match="shape"):
        oracle.mass_matrix(np.zeros(oracle.nv + 1))


def test_example_robots_are_found() -> None:
    for name in EXAMPLE_ROBOTS:
        assert example_robot_urdf(name).is_file()
    with pytest.raises(FileNotFoundError, match="pip install example-robot-data"):
        example_robot_urdf("wall-e")
