"""Contact-constrained dynamics against Pinocchio's constraintDynamics (FloatingPinocchioOracle),
and the contact inverse dynamics against the forward problem it inverts."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros.robot.contact_dynamics import Contact, contact_drift, contact_jacobian

from helpers.floating import random_states, robot_and_oracle
from helpers.tolerances import KAPPA_REF, assert_close

FEET = {
    "talos_reduced": (("left_sole_link", "6d"), ("right_sole_link", "6d")),
    "icub": (("l_sole", "6d"), ("r_sole", "6d")),
    "solo12": tuple((foot, "3d") for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")),
    "anymal": tuple((foot, "3d") for foot in ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT")),
}
# a target placement off the frame's: 2 cm along each axis, turned by small roll, pitch, yaw
OFFSET = pin.SE3(pin.rpy.rpyToMatrix(0.05, -0.03, 0.02), np.array([0.02, -0.02, 0.02])).homogeneous


@pytest.mark.parametrize("name", list(FEET))
@pytest.mark.parametrize(("kp", "kd", "moved"),
                         [(0.0, 0.0, False), (40.0, 9.0, False), (40.0, 9.0, True)],
                         ids=["held", "damped", "baumgarte"])
@pytest.mark.parametrize("method", ["recursive", "dense"])
def test_matches_pinocchio(name: str, kp: float, kd: float, moved: bool, method: str) -> None:
    robot, oracle = robot_and_oracle(name)
    for q, v, _, tau in zip(*random_states(robot, 2, seed=2), strict=True):
        targets = [robot.frame_pose(q, frame) @ OFFSET if moved else None
                   for frame, _ in FEET[name]]
        contacts = [Contact(frame, kind, target)
                    for (frame, kind), target in zip(FEET[name], targets, strict=True)]
        ours = robot.constrained_forward_dynamics(q, v, tau, contacts, kp, kd, method)
        vdot, forces = oracle.constrained_forward_dynamics(
            q, v, tau, FEET[name], kp, kd, targets if moved else None)
        assert_close(ours.vdot, vdot, "v̇")
        for (frame, _), force, expected in zip(FEET[name], ours.forces, forces, strict=True):
            assert_close(force, expected, f"force on {frame}")


def test_batch_is_its_states() -> None:
    robot, _ = robot_and_oracle("solo12")
    q, v, _, tau = random_states(robot, 3, seed=3)
    contacts = [Contact(frame, kind) for frame, kind in FEET["solo12"]]
    batch = robot.constrained_forward_dynamics(q, v, tau, contacts, 10.0, 2.0)
    for k in range(3):
        single = robot.constrained_forward_dynamics(q[k], v[k], tau[k], contacts, 10.0, 2.0)
        assert_close(batch.vdot[k], single.vdot, f"v̇ of state {k}", rtol=1e-12)
        for force, alone in zip(batch.forces, single.forces, strict=True):
            assert_close(force[k], alone, f"force of state {k}", rtol=1e-12)


def test_gains_that_change_every_call() -> None:
    """The compiled single-state call is kept per contacts and gains, a bounded number of them:
    each answer is still the batch path's."""
    robot, _ = robot_and_oracle("solo12")
    q, v, _, tau = random_states(robot, 1, seed=5)
    contacts = [Contact(frame, kind) for frame, kind in FEET["solo12"]]
    for kd in np.linspace(0.0, 50.0, 150):
        single = robot.constrained_forward_dynamics(q[0], v[0], tau[0], contacts, 10.0, kd)
        batch = robot.constrained_forward_dynamics(q, v, tau, contacts, 10.0, kd)
        assert_close(single.vdot, batch.vdot[0], f"v̇ at kd = {kd}", rtol=1e-12)
    assert 0 < len(robot._contacts._calls) <= 64


def test_contacts_changed_between_calls_are_seen() -> None:
    """A tuple of contacts is remembered by identity, a list is not: a list changed in place
    and a new tuple of other contacts are each answered as the batch path answers them."""
    robot, _ = robot_and_oracle("solo12")
    q, v, _, tau = random_states(robot, 1, seed=6)
    feet = [Contact(frame, kind) for frame, kind in FEET["solo12"]]
    for contacts in (tuple(feet), tuple(feet[:3]), feet, feet):
        single = robot.constrained_forward_dynamics(q[0], v[0], tau[0], contacts, 10.0, 2.0)
        batch = robot.constrained_forward_dynamics(q, v, tau, contacts, 10.0, 2.0)
        assert_close(single.vdot, batch.vdot[0], f"v̇ on {len(contacts)} feet", rtol=1e-12)
        assert len(single.forces) == len(contacts)
        feet.pop()  # the list passed next holds one foot fewer, in the same object


@pytest.mark.parametrize("name", ["talos_reduced", "icub"])
def test_contact_inverse_dynamics_inverts_the_forward_problem(name: str) -> None:
    """One sole flat on the ground: six contact rows, so the motion determines the force. The
    round trip passes through M⁻¹: its error grows with κ(M) beyond KAPPA_REF (iCub's hands)."""
    robot, _ = robot_and_oracle(name)
    contact = [Contact(FEET[name][0][0], "6d")]
    for q, v, _, tau in zip(*random_states(robot, 2, seed=4), strict=True):
        tau[:6] = 0.0
        forward = robot.constrained_forward_dynamics(q, v, tau, contact)
        inverse = robot.contact_inverse_dynamics(q, v, forward.vdot, contact)
        scale = max(1.0, float(np.linalg.cond(robot.mass_matrix(q))) / KAPPA_REF)
        assert_close(inverse.tau, tau, "τ", scale=scale)
        assert_close(inverse.forces[0], forward.forces[0], "contact force", scale=scale)


def test_undetermined_forces_are_refused() -> None:
    robot, _ = robot_and_oracle("solo12")
    q, v, vdot, _ = (x[0] for x in random_states(robot, 1))
    with pytest.raises(ValueError, match="not determined by the motion"):
        robot.contact_inverse_dynamics(q, v, vdot, [Contact(f, k) for f, k in FEET["solo12"]])


def test_a_motion_the_contact_does_not_allow_is_refused() -> None:
    robot, _ = robot_and_oracle("talos_reduced")
    q, v, vdot, _ = (x[0] for x in random_states(robot, 1))
    with pytest.raises(ValueError, match="not a motion these contacts allow"):
        robot.contact_inverse_dynamics(q, v, vdot, [Contact("left_sole_link", "3d")])


def test_dependent_contacts_are_refused() -> None:
    robot, _ = robot_and_oracle("talos_reduced")
    q, v, _, tau = (x[0] for x in random_states(robot, 1))
    twice = [Contact("left_sole_link", "6d"), Contact("left_sole_link", "3d")]
    with pytest.raises(np.linalg.LinAlgError, match=r"'left_sole_link'.*not independent"):
        robot.constrained_forward_dynamics(q, v, tau, twice)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"frame": "left_sole_link", "kind": "2d"}, "kind must be '3d'"),
        ({"frame": "left_sole_link", "placement": np.eye(3)}, "placement must be a finite 4x4"),
    ],
)
def test_bad_contacts_are_named(arguments: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Contact(**arguments)


def _pose(rotation: np.ndarray, position: np.ndarray) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rotation, position
    return pose


TURN = pin.rpy.rpyToMatrix(0.3, -0.2, 1.1)


@pytest.mark.parametrize(
    ("placement", "message"),
    [
        (_pose(2.0 * TURN, np.ones(3)), "not orthonormal"),
        (_pose(np.zeros((3, 3)), np.ones(3)), "not orthonormal"),
        (_pose(TURN @ np.diag([1.0, 1.0, -1.0]), np.ones(3)), "reflection"),
        (_pose(TURN @ np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]]), np.ones(3)),
         "not orthonormal"),
        (_pose(TURN, np.ones(3)) + np.diag([0, 0, 0, 1.0]), r"last row .* not \[0 0 0 1\]"),
    ],
    ids=["scaled", "zero", "reflection", "sheared", "last_row"],
)
def test_a_placement_that_is_not_a_rigid_pose_is_refused(placement, message: str) -> None:
    with pytest.raises(ValueError, match=rf"'left_sole_link'.*rigid pose.*{message}"):
        Contact("left_sole_link", "6d", placement)


@settings(max_examples=200, deadline=None)
@given(rpy=st.lists(st.floats(-np.pi, np.pi), min_size=3, max_size=3),
       position=st.lists(st.floats(-5.0, 5.0), min_size=3, max_size=3),
       noise=st.floats(0.0, 1e-9), seed=st.integers(0, 2**32 - 1))
def test_rigid_placements_to_rounding_are_taken(rpy, position, noise: float, seed: int) -> None:
    placement = _pose(pin.rpy.rpyToMatrix(*rpy), np.array(position))
    placement[:3, :3] += noise * np.random.default_rng(seed).standard_normal((3, 3))
    contact = Contact("left_sole_link", "6d", placement)
    assert contact.placement is not None and not contact.placement.flags.writeable


@settings(max_examples=200, deadline=None)
@given(matrix=st.lists(st.floats(-2.0, 2.0), min_size=9, max_size=9).map(
    lambda x: np.reshape(x, (3, 3))))
def test_any_placement_taken_is_rigid(matrix: np.ndarray) -> None:
    placement = _pose(matrix, np.zeros(3))
    try:
        Contact("left_sole_link", "6d", placement)
    except ValueError as error:
        assert "left_sole_link" in str(error)
        return
    assert np.abs(matrix.T @ matrix - np.eye(3)).max() <= 1e-6 and np.linalg.det(matrix) > 0


def test_unknown_frames_and_gains_are_named() -> None:
    robot, _ = robot_and_oracle("talos_reduced")
    q, v, _, tau = (x[0] for x in random_states(robot, 1))
    with pytest.raises(ValueError, match="unknown frame 'left_foot'"):
        robot.constrained_forward_dynamics(q, v, tau, [Contact("left_foot")])
    with pytest.raises(ValueError, match="kp and kd must be ≥ 0"):
        robot.constrained_forward_dynamics(q, v, tau, [Contact("left_sole_link")], kd=-1.0)
    with pytest.raises(ValueError, match="at least one Contact"):
        robot.constrained_forward_dynamics(q, v, tau, [])


@pytest.mark.parametrize("name", ["talos_reduced", "solo12"])
def test_contact_jacobian_and_drift_match_pinocchio(name: str) -> None:
    robot, oracle = robot_and_oracle(name)
    contacts = [Contact(frame, kind) for frame, kind in FEET[name]]
    q, v, _, _ = (x[0] for x in random_states(robot, 1, seed=6))
    assert_close(contact_jacobian(robot, q, contacts), oracle.contact_jacobian(q, FEET[name]),
                 "J_c")
    assert_close(contact_drift(robot, q, v, contacts), oracle.contact_drift(q, v, FEET[name]),
                 "the drift")
