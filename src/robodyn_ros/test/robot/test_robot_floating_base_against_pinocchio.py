"""A floating-base Robot against Pinocchio's free flyer (FloatingPinocchioOracle) on the
humanoids and quadrupeds of example-robot-data and on generated floating chains and trees: every
quantity to RTOL (helpers.tolerances), one state and batches."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from helpers.floating import random_states, robot_and_oracle
from helpers.tolerances import BATCH_RTOL, KAPPA_REF, assert_close

# robot → (frames whose pose, Jacobian and drift are checked, a frame with six joints above it
# for Λ)
ROBOTS = {
    "talos_reduced": (("left_sole_link", "arm_right_7_link", "head_2_link"), "arm_left_7_link"),
    "solo12": (("FL_FOOT", "HR_FOOT", "base_link"), "FR_FOOT"),
    "anymal": (("LF_FOOT", "RH_FOOT", "base"), "LH_FOOT"),
    "icub": (("l_sole", "r_hand", "head"), "l_hand"),
    "chain7": (("link_6", "link_2"), "link_6"),
    "tree12_seed1": (("link_11", "link_5"), None),
    "tree40_seed2": (("link_39", "link_17"), None),
}


def assert_solves(
    actual: np.ndarray, expected: np.ndarray, M: np.ndarray, rhs: np.ndarray, what: str
) -> None:
    """A solve x of M x = rhs against the reference: the forward error to RTOL scaled by
    κ(M) / KAPPA_REF (the humanoids' fingers and feet make M ill conditioned, κ up to 1e10, and
    the reference is no better than the problem), the backward error M x − rhs to RTOL."""
    scale = max(1.0, float(np.linalg.cond(M)) / KAPPA_REF)
    assert_close(actual, expected, what, scale=scale)
    assert_close(M @ actual, rhs, what + ": residual")


@pytest.fixture(scope="module", params=list(ROBOTS))
def name(request: pytest.FixtureRequest) -> str:
    return request.param


def test_joint_space_dynamics_match_pinocchio(name: str) -> None:
    robot, oracle = robot_and_oracle(name)
    for q, v, vdot, tau in zip(*random_states(robot, 3), strict=True):
        assert_close(robot.inverse_dynamics(q, v, vdot), oracle.rnea(q, v, vdot), "τ")
        assert_close(robot.bias_forces(q, v), oracle.bias_forces(q, v), "C v + g")
        assert_close(robot.gravity_torques(q), oracle.gravity_torques(q), "g")
        assert_close(robot.mass_matrix(q), oracle.mass_matrix(q), "M")
        assert_close(robot.mass_matrix(q, "gdahj"), oracle.mass_matrix(q), "M by gdahj")
        M = oracle.mass_matrix(q)
        # an explicit inverse's residual M X − 1 grows with κ too: the forward error only
        assert_close(robot.mass_matrix_inverse(q), oracle.mass_matrix_inverse(q), "M⁻¹",
                     scale=max(1.0, float(np.linalg.cond(M)) / KAPPA_REF))
        for method in ("aba", "cholesky"):
            assert_solves(robot.forward_dynamics(q, v, tau, method), oracle.aba(q, v, tau), M,
                          tau - oracle.bias_forces(q, v), f"v̇ by {method}")
        assert_close(robot.kinetic_energy(q, v), oracle.kinetic_energy(q, v), "T")
        assert_close(robot.potential_energy(q), oracle.potential_energy(q), "V")


def test_centroidal_quantities_match_pinocchio(name: str) -> None:
    robot, oracle = robot_and_oracle(name)
    for q in random_states(robot, 3)[0]:
        assert_close(robot.centre_of_mass(q), oracle.centre_of_mass(q), "centre of mass")
        assert_close(robot.com_jacobian(q), oracle.com_jacobian(q), "J_com")
        assert_close(robot.centroidal_momentum_matrix(q), oracle.centroidal_map(q), "A_g")


def test_frames_match_pinocchio(name: str) -> None:
    robot, oracle = robot_and_oracle(name)
    frames, _ = ROBOTS[name]
    for q, v, _, _ in zip(*random_states(robot, 3), strict=True):
        for frame in frames:
            assert_close(robot.frame_pose(q, frame), oracle.frame_pose(q, frame), frame)
            assert_close(robot.jacobian(q, frame), oracle.jacobian(q, frame), f"J of {frame}")
            assert_close(robot.classical_acceleration(q, v, frame),
                         oracle.classical_acceleration(q, v, frame), f"J̇ v of {frame}")


@pytest.mark.parametrize("method", ["recursive", "dense"])
def test_operational_space_inertia_matches_pinocchio(name: str, method: str) -> None:
    robot, oracle = robot_and_oracle(name)
    _, tip = ROBOTS[name]
    if tip is None:
        pytest.skip("no frame with six joints above it")
    for q in random_states(robot, 3)[0]:
        J = oracle.jacobian(q, tip)
        Lambda_inv = J @ oracle.mass_matrix_inverse(q) @ J.T
        assert_close(robot.operational_space_inertia(q, tip, method, inverse=True), Lambda_inv,
                     "Λ⁻¹")
        assert_close(robot.operational_space_inertia(q, tip, method),
                     oracle.operational_space_inertia(q, tip), "Λ", scale=1e2)
        linear = J[:3] @ oracle.mass_matrix_inverse(q) @ J[:3].T
        assert_close(robot.operational_space_inertia(q, tip, method, axes="xyz"),
                     np.linalg.inv(linear), "Λ of the position", scale=1e2)


def test_lie_group_matches_pinocchio(name: str) -> None:
    robot, oracle = robot_and_oracle(name)
    q, v, _, _ = random_states(robot, 3)
    assert_close(robot.neutral(), oracle.q_to_ours(pin.neutral(oracle.model)), "neutral")
    for q0, q1, step in zip(q, q[::-1], v, strict=True):
        moved = oracle.q_to_ours(pin.integrate(oracle.model, oracle.q(q0), oracle.v(0.1 * step)))
        # one configuration, a continuous joint's angle perhaps a turn apart
        assert_close(robot.difference(moved, robot.integrate(q0, step, 0.1)),
                     np.zeros(robot.nv), "q ⊕ v dt")
        difference = oracle.to_ours(pin.difference(oracle.model, oracle.q(q0), oracle.q(q1)))
        assert_close(robot.difference(q0, q1), difference, "q1 ⊖ q0")


def test_batches_are_their_states(name: str) -> None:
    robot, _ = robot_and_oracle(name)
    q, v, vdot, tau = random_states(robot, 4, seed=1)
    batches = {
        "τ": (robot.inverse_dynamics(q, v, vdot), lambda k: robot.inverse_dynamics(q[k], v[k],
                                                                                  vdot[k])),
        "v̇": (robot.forward_dynamics(q, v, tau), lambda k: robot.forward_dynamics(q[k], v[k],
                                                                                 tau[k])),
        "M": (robot.mass_matrix(q), lambda k: robot.mass_matrix(q[k])),
        "g": (robot.gravity_torques(q), lambda k: robot.gravity_torques(q[k])),
        "A_g": (robot.centroidal_momentum_matrix(q),
                lambda k: robot.centroidal_momentum_matrix(q[k])),
    }
    kappa = float(np.max(np.linalg.cond(robot.mass_matrix(q))))  # v̇ solves with M
    for what, (batch, single) in batches.items():
        for k in range(len(q)):
            assert_close(batch[k], single(k), f"{what} of state {k}", rtol=BATCH_RTOL,
                         scale=kappa if what == "v̇" else 1.0)


def test_operational_space_matches_pinocchio(name: str) -> None:
    """Λ, μ, p and J̇ v of a whole frame from Pinocchio's M, nonlinear effects, gravity, J
    and classical acceleration: Λ ẍ + μ + p = F for τ = Jᵀ F."""
    robot, oracle = robot_and_oracle(name)
    _, tip = ROBOTS[name]
    if tip is None:
        pytest.skip("no frame with six joints above it")
    for q, v, _, _ in zip(*random_states(robot, 2, seed=5), strict=True):
        task = robot.operational_space(q, v, tip)
        J, Minv = oracle.jacobian(q, tip), oracle.mass_matrix_inverse(q)
        Lambda = oracle.operational_space_inertia(q, tip)
        Jbar = Minv @ J.T @ Lambda
        gravity = oracle.gravity_torques(q)
        Jdot_v = oracle.classical_acceleration(q, v, tip)
        assert_close(task.J, J, "J")
        assert_close(task.Lambda, Lambda, "Λ", scale=1e2)
        assert_close(task.Jdot_qd, Jdot_v, "J̇ v")
        assert_close(task.p, Jbar.T @ gravity, "p", scale=1e2)
        assert_close(task.mu, Jbar.T @ (oracle.bias_forces(q, v) - gravity) - Lambda @ Jdot_v,
                     "μ", scale=1e2)
