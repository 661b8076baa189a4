"""The floating-base Pinocchio oracle, checked against itself by independent routes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin  # type: ignore[import-untyped]
import pytest

from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.floating_pinocchio_oracle import Contact, FloatingPinocchioOracle

ROBOTS = example_robot_urdf("panda").parents[2]  # the example-robot-data robots/ directory
TALOS = ROBOTS / "talos_data" / "robots" / "talos_reduced.urdf"
SOLO = ROBOTS / "solo_description" / "robots" / "solo12.urdf"
FEET: dict[str, tuple[Contact, ...]] = {
    "talos": (("left_sole_link", "6d"), ("right_sole_link", "6d")),
    "solo": tuple((f"{leg}_FOOT", "3d") for leg in ("FL", "FR", "HL", "HR")),
}
MOVING = ("revolute", "continuous", "prismatic")
Robot = tuple[FloatingPinocchioOracle, tuple[Contact, ...]]
"""An oracle and the contacts of its feet."""
State = tuple[np.ndarray, np.ndarray, np.ndarray]
"""q (nq,), v (nv,) and a third vector (nv,): v̇ or τ."""
TOLERANCE = 1e-10
"""Agreement of two routes, relative to the largest entry compared."""


def moving_joints(urdf: Path) -> list[str]:
    """The URDF's moving joints, in document order."""
    return [joint.attrib["name"] for joint in ET.parse(urdf).getroot().iter("joint")
            if joint.attrib.get("type") in MOVING]


def shuffled_oracle(urdf: Path, seed: int) -> FloatingPinocchioOracle:
    """The oracle of a URDF, its joints in a random order (not Pinocchio's)."""
    names = moving_joints(urdf)
    order = np.random.default_rng(seed).permutation(len(names))
    return FloatingPinocchioOracle(urdf, [names[i] for i in order])


@pytest.fixture(scope="module", params=sorted(FEET))
def robot(request: pytest.FixtureRequest) -> Robot:
    """TALOS (two 6d sole contacts) or Solo12 (four 3d foot contacts): oracle, contacts."""
    urdf = {"talos": TALOS, "solo": SOLO}[request.param]
    return shuffled_oracle(urdf, seed=1), FEET[request.param]


def random_state(oracle: FloatingPinocchioOracle, seed: int) -> State:
    """q (unit quaternion, joints in (-1, 1)), then v and a second nv-vector, normal."""
    rng = np.random.default_rng(seed)
    quaternion = rng.normal(size=4)
    joints = rng.uniform(-1.0, 1.0, oracle.nq - 7)
    q = np.concatenate([rng.normal(size=3), quaternion / np.linalg.norm(quaternion), joints])
    return q, rng.normal(size=oracle.nv), rng.normal(size=oracle.nv)


def assert_agree(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal to TOLERANCE times the largest expected entry (or 1)."""
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=TOLERANCE * scale)


def position_error(pose: np.ndarray, target: np.ndarray, kind: str) -> np.ndarray:
    """The documented Baumgarte position error of a contact: p − p_d for "3d", and
    [R ν; R φ] with (ν, φ) = log6(X_d⁻¹ X) for "6d"."""
    if kind == "3d":
        return pose[:3, 3] - target[:3, 3]
    log = pin.log6(pin.SE3(target).actInv(pin.SE3(pose))).vector
    return np.concatenate([pose[:3, :3] @ log[:3], pose[:3, :3] @ log[3:]])


def dense_kkt(
    oracle: FloatingPinocchioOracle,
    state: State,
    contacts: Sequence[Contact],
    gains: tuple[float, float],
    targets: Sequence[np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """v̇ and the stacked forces of [[M, −Jᵀ], [J, 0]] [v̇; λ] = [τ − nle; a*], with
    a* = −drift − kd J v − kp err, built from the oracle's unconstrained quantities."""
    q, v, tau = state
    kp, kd = gains
    jacobian = oracle.contact_jacobian(q, contacts)
    error = np.concatenate([position_error(oracle.frame_pose(q, link), target, kind)
                            for (link, kind), target in zip(contacts, targets, strict=True)])
    wanted = -oracle.contact_drift(q, v, contacts) - kd * jacobian @ v - kp * error
    rows = len(jacobian)
    kkt = np.block([[oracle.mass_matrix(q), -jacobian.T], [jacobian, np.zeros((rows, rows))]])
    solution = np.linalg.solve(kkt, np.concatenate([tau - oracle.bias_forces(q, v), wanted]))
    return solution[: oracle.nv], solution[oracle.nv :]


def test_aba_solves_the_mass_matrix_and_inverts_rnea(robot: Robot) -> None:
    oracle, _ = robot
    q, v, tau = random_state(oracle, seed=2)
    mass = oracle.mass_matrix(q)
    np.linalg.cholesky(mass)
    vdot = oracle.aba(q, v, tau)
    assert_agree(vdot, np.linalg.solve(mass, tau - oracle.bias_forces(q, v)))
    assert_agree(oracle.rnea(q, v, vdot), tau)
    assert_agree(oracle.mass_matrix_inverse(q) @ mass, np.eye(oracle.nv))
    assert_agree(oracle.bias_forces(q, np.zeros(oracle.nv)), oracle.gravity_torques(q))
    assert oracle.kinetic_energy(q, v) == pytest.approx(v @ mass @ v / 2, rel=1e-12)


@pytest.mark.parametrize("gains", [(0.0, 0.0), (40.0, 9.0)], ids=["rigid", "baumgarte"])
@pytest.mark.parametrize("moved", [False, True], ids=["held_here", "held_elsewhere"])
def test_constrained_dynamics_solves_the_dense_kkt_system(
    robot: Robot, gains: tuple[float, float], moved: bool
) -> None:
    oracle, contacts = robot
    state = random_state(oracle, seed=3)
    q = state[0]
    shifts = np.random.default_rng(4).normal(0.0, [0.02] * 3 + [0.05] * 3, (len(contacts), 6))
    targets = [oracle.frame_pose(q, link) @ (pin.exp6(shift).homogeneous if moved else np.eye(4))
               for (link, _), shift in zip(contacts, shifts, strict=True)]
    vdot, forces = oracle.constrained_forward_dynamics(
        *state, contacts, *gains, placements=targets if moved else None)
    expected_vdot, expected_forces = dense_kkt(oracle, state, contacts, gains, targets)
    assert [len(force) for force in forces] == [int(kind[0]) for _, kind in contacts]
    assert_agree(vdot, expected_vdot)
    assert_agree(np.concatenate(forces), expected_forces)


def test_drift_is_the_classical_acceleration_of_points_and_spatial_of_frames(
    robot: Robot,
) -> None:
    oracle, contacts = robot
    q, v, _ = random_state(oracle, seed=5)
    drift = np.split(oracle.contact_drift(q, v, contacts), len(contacts))
    for (link, kind), rows in zip(contacts, drift, strict=True):
        classical = oracle.classical_acceleration(q, v, link)
        linear_velocity, angular_velocity = np.split(oracle.jacobian(q, link) @ v, 2)
        if kind == "3d":
            assert_agree(rows, classical[:3])
        else:
            spatial = classical[:3] - np.cross(angular_velocity, linear_velocity)
            assert_agree(rows, np.concatenate([spatial, classical[3:]]))


def test_bad_contacts_are_reported() -> None:
    oracle = shuffled_oracle(TALOS, seed=6)
    q, v, tau = random_state(oracle, seed=6)
    foot = FEET["talos"][0]
    with pytest.raises(ValueError, match="not independent"):
        oracle.constrained_forward_dynamics(q, v, tau, [foot, foot])
    with pytest.raises(ValueError, match="neither"):
        oracle.contact_jacobian(q, [("left_sole_link", "2d")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="1 placements for 2 contacts"):
        oracle.constrained_forward_dynamics(q, v, tau, FEET["talos"], placements=[np.eye(4)])
    with pytest.raises(KeyError, match="no link"):
        oracle.contact_drift(q, v, [("left_shoe", "6d")])


@pytest.mark.parametrize("urdf", [example_robot_urdf("kinova"), SOLO], ids=["kinova", "solo"])
def test_coordinates_round_trip_and_joint_order_permutes_every_result(urdf: Path) -> None:
    """Kinova has continuous joints (cos, sin in Pinocchio); two joint orders agree."""
    first, second = shuffled_oracle(urdf, seed=7), shuffled_oracle(urdf, seed=8)
    q, v, x = random_state(first, seed=9)
    q_pin = first.q(q)
    assert pin.isNormalized(first.model, q_pin)
    np.testing.assert_array_equal(q_pin[:7], q[:7])
    np.testing.assert_allclose(first.q_to_ours(q_pin), q, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(first.v(v)[:6], v[:6])
    np.testing.assert_array_equal(first.to_ours(first.v(v)), v)
    joints = [first.joint_names.index(name) for name in second.joint_names]
    order_q, order_v = np.r_[0:7, 7 + np.array(joints)], np.r_[0:6, 6 + np.array(joints)]
    both_v = np.ix_(order_v, order_v)
    q2, v2, x2 = q[order_q], v[order_v], x[order_v]
    np.testing.assert_allclose(second.rnea(q2, v2, x2), first.rnea(q, v, x)[order_v])
    np.testing.assert_allclose(second.aba(q2, v2, x2), first.aba(q, v, x)[order_v])
    np.testing.assert_allclose(second.mass_matrix(q2), first.mass_matrix(q)[both_v])
    np.testing.assert_allclose(second.com_jacobian(q2), first.com_jacobian(q)[:, order_v])
    np.testing.assert_allclose(second.centroidal_map(q2), first.centroidal_map(q)[:, order_v])
    np.testing.assert_allclose(second.centre_of_mass(q2), first.centre_of_mass(q))
    assert second.potential_energy(q2) == pytest.approx(first.potential_energy(q))


def test_base_coordinates_are_the_free_flyers() -> None:
    """The base link sits at (x, y, z) turned by (qx, qy, qz, qw); v's base part is its linear
    and angular velocity in its own frame; A_G's linear rows are m J_com."""
    oracle = shuffled_oracle(SOLO, seed=10)
    q = random_state(oracle, seed=10)[0]
    pose = oracle.frame_pose(q, "base_link")
    np.testing.assert_allclose(pose[:3, 3], q[:3])
    np.testing.assert_allclose(pose[:3, :3], pin.Quaternion(q[6], *q[3:6]).matrix(), atol=1e-15)
    base = oracle.jacobian(q, "base_link")
    rotation = np.kron(np.eye(2), pose[:3, :3])
    np.testing.assert_allclose(base[:, :6], rotation, atol=1e-15)
    np.testing.assert_array_equal(base[:, 6:], 0.0)
    mass = oracle.body_parameters()[:, 0].sum()
    assert_agree(oracle.centroidal_map(q)[:3], mass * oracle.com_jacobian(q))


def test_regressor_and_parameters_cover_the_base_body() -> None:
    oracle = shuffled_oracle(SOLO, seed=11)
    q, v, a = random_state(oracle, seed=11)
    parameters = oracle.body_parameters()
    assert parameters.shape == (1 + len(oracle.joint_names), 10)
    regressor = oracle.joint_torque_regressor(q, v, a)
    assert_agree(regressor @ parameters.ravel(), oracle.rnea(q, v, a))
    armature = np.r_[np.zeros(6), np.linspace(0.1, 0.2, oracle.nv - 6)]
    heavier = oracle.with_parameters(parameters, armature)
    assert_agree(heavier.mass_matrix(q), oracle.mass_matrix(q) + np.diag(armature))
