"""Physics that must hold whatever the oracle says: M symmetric positive definite and inverted by
M⁻¹, ABA inverts RNEA, the Coriolis term is what is left without gravity, the kinetic energy is
½ q̇ᵀ M q̇, a torque-free robot conserves energy; and bad input is refused with clear errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.model import ModelError

RTOL = 1e-9  # as in test_robot_against_pinocchio: relative to the largest magnitude involved
ROBOTS = ("bundled_panda", "kinova", "talos", "chain7", "chain64", "tree12_seed1", "tree40_seed2")
STATES = 3


def random_states(robot: Robot, count: int, seed: int) -> tuple[np.ndarray, ...]:
    """q inside the limits (cut to [-π, π]), q̇ and q̈ uniform in [-1, 1], shapes (count, n)."""
    rng = np.random.default_rng(seed)
    low = np.maximum(robot.model.lower, -np.pi)
    high = np.minimum(robot.model.upper, np.pi)
    q = rng.uniform(low, high, size=(count, robot.nv))
    qd = rng.uniform(-1.0, 1.0, size=(count, robot.nv))
    qdd = rng.uniform(-1.0, 1.0, size=(count, robot.nv))
    return q, qd, qdd


def max_abs(x) -> float:
    return float(np.max(np.abs(x)))


@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_is_symmetric_positive_definite_and_inverted(load_robot, name: str) -> None:
    robot = load_robot(name)
    q, _, _ = random_states(robot, STATES, seed=1)
    M, Minv = robot.mass_matrix(q), robot.mass_matrix_inverse(q)
    for i in range(STATES):
        assert max_abs(M[i] - M[i].T) <= 1e-14 * max_abs(M[i]), f"{name} state {i}: M asymmetric"
        eigenvalues = np.linalg.eigvalsh(M[i])
        assert eigenvalues[0] > 1e-12 * eigenvalues[-1], f"{name} state {i}: M not definite"
        np.linalg.cholesky(M[i])
        assert max_abs(M[i] @ Minv[i] - np.eye(robot.nv)) <= RTOL, f"{name} state {i}: M Minv ≠ I"
        assert max_abs(Minv[i] - Minv[i].T) <= 1e-12 * max_abs(Minv[i])


@pytest.mark.parametrize("method", ["aba", "cholesky"])
@pytest.mark.parametrize("name", ROBOTS)
def test_forward_dynamics_inverts_inverse_dynamics(load_robot, name: str, method: str) -> None:
    robot = load_robot(name)
    q, qd, qdd = random_states(robot, STATES, seed=2)
    f_ext = np.random.default_rng(3).uniform(-5.0, 5.0, size=(STATES, robot.nv, 6))
    for wrenches in (None, f_ext):
        tau = robot.inverse_dynamics(q, qd, qdd, f_ext=wrenches)
        back = robot.forward_dynamics(q, qd, tau, method=method, f_ext=wrenches)
        assert max_abs(back - qdd) <= RTOL * max_abs(qdd), f"{name}: ABA(RNEA(q̈)) ≠ q̈"
    # and the equation of motion it solves: τ = M q̈ + h
    M, h = robot.mass_matrix(q), robot.bias_forces(q, qd)
    tau = robot.inverse_dynamics(q, qd, qdd)
    assert max_abs(np.einsum("bij,bj->bi", M, qdd) + h - tau) <= RTOL * max_abs(tau)


@pytest.mark.parametrize("name", ROBOTS)
def test_bias_without_gravity_is_the_velocity_product(load_robot, name: str) -> None:
    """bias − gravity = C(q, q̇) q̇, the same robot with gravity off; C q̇ is quadratic in q̇ and
    q̇ᵀ C q̇ = ½ q̇ᵀ Ṁ q̇ (Ṁ − 2C skew-symmetric), Ṁ by central differences along q̇."""
    robot = load_robot(name)
    weightless = Robot(dataclasses.replace(robot.model, gravity=np.zeros(3)))
    q, qd, _ = random_states(robot, STATES, seed=4)
    zero = np.zeros_like(q)
    coriolis = robot.bias_forces(q, qd) - robot.gravity_torques(q)
    scale = max_abs(robot.bias_forces(q, qd))
    assert max_abs(weightless.gravity_torques(q)) == 0.0
    assert max_abs(weightless.bias_forces(q, qd) - coriolis) <= RTOL * scale
    velocity_part = robot.inverse_dynamics(q, qd, zero) - robot.inverse_dynamics(q, zero, zero)
    assert max_abs(velocity_part - coriolis) <= RTOL * scale
    assert max_abs(weightless.bias_forces(q, 2.0 * qd) - 4.0 * coriolis) <= RTOL * scale
    step = 1e-5  # central-difference error ≤ 3e-9 relative on these robots (measured)
    for i in range(STATES):
        M_dot = (robot.mass_matrix(q[i] + step * qd[i]) - robot.mass_matrix(q[i] - step * qd[i]))
        power = qd[i] @ M_dot @ qd[i] / (2.0 * step)
        assert qd[i] @ coriolis[i] * 2.0 == pytest.approx(power, rel=1e-7, abs=RTOL * scale)


@pytest.mark.parametrize("name", ROBOTS)
def test_kinetic_energy_is_half_the_inertia_quadratic_form(load_robot, name: str) -> None:
    robot = load_robot(name)
    q, qd, _ = random_states(robot, STATES, seed=5)
    T = robot.kinetic_energy(q, qd)
    expected = 0.5 * np.einsum("bi,bij,bj->b", qd, robot.mass_matrix(q), qd)
    assert T.shape == (STATES,)
    assert max_abs(T - expected) <= RTOL * max_abs(expected)
    assert np.all(T > 0.0)


# -- energy conservation ----------------------------------------------------------------------

DT = 1e-4  # s, RK4 fixed step
DURATION = 0.5  # s
# Relative drift |E(t) − E(0)| / (max T + max |V − V(0)|), i.e. against the energy actually
# exchanged (a few J). Measured with RK4 at this step: bundled panda 4e-12 (RK4 truncation: 4e-8
# at dt = 1e-3, ∝ dt⁴), chain7 6e-15. A relative error ε in the Coriolis term gives a drift ≈ ε.
ENERGY_RTOL = 1e-9


def rk4_energy_drift(robot: Robot, q: np.ndarray, qd: np.ndarray) -> float:
    """Integrate q̈ = FD(q, q̇, τ = 0) and return the largest relative energy change."""
    tau = np.zeros(robot.nv)

    def acceleration(q, qd):
        return robot.forward_dynamics(q, qd, tau)

    energies, kinetic, potential = [], [], []
    for step in range(round(DURATION / DT) + 1):
        if step % 50 == 0:
            T, V = float(robot.kinetic_energy(q, qd)), float(robot.potential_energy(q))
            energies.append(T + V)
            kinetic.append(T)
            potential.append(V)
        k1q, k1v = qd, acceleration(q, qd)
        k2q, k2v = qd + DT / 2 * k1v, acceleration(q + DT / 2 * k1q, qd + DT / 2 * k1v)
        k3q, k3v = qd + DT / 2 * k2v, acceleration(q + DT / 2 * k2q, qd + DT / 2 * k2v)
        k4q, k4v = qd + DT * k3v, acceleration(q + DT * k3q, qd + DT * k3v)
        q = q + DT / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        qd = qd + DT / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    energies, potential = np.array(energies), np.array(potential)
    exchanged = max(kinetic) + max_abs(potential - potential[0])
    assert exchanged > 1.0, "the robot should move and swap kinetic and potential energy"
    return max_abs(energies - energies[0]) / exchanged


@pytest.mark.parametrize("name", ["chain7", "bundled_panda"])
def test_torque_free_robot_conserves_energy(load_robot, name: str) -> None:
    """No damping or friction is modelled (the URDF <dynamics> tags are ignored)."""
    robot = load_robot(name)
    q, qd, _ = random_states(robot, 1, seed=6)
    drift = rk4_energy_drift(robot, q[0], qd[0])
    assert drift <= ENERGY_RTOL, f"{name}: relative energy drift {drift:.2e}"


# -- bad input --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def panda(load_robot) -> Robot:
    return load_robot("bundled_panda")


def test_wrong_joint_count_names_the_joints(panda) -> None:
    z = np.zeros(7)
    for bad in (np.zeros(6), np.zeros((2, 8)), np.zeros((2, 3, 7)), 0.0):
        with pytest.raises(ValueError, match=r"shape \(7,\) or \(B, 7\)") as error:
            panda.inverse_dynamics(bad, z, z)
        assert "panda_joint1" in str(error.value) and "panda_joint7" in str(error.value)
        with pytest.raises(ValueError, match=r"shape \(7,\) or \(B, 7\)"):
            panda.mass_matrix(bad)
        with pytest.raises(ValueError, match=r"shape \(7,\) or \(B, 7\)"):
            panda.frame_pose(bad, "panda_hand")


def _variants(x: np.ndarray) -> dict[str, object]:
    """One state in the forms a single-state call must convert rather than read in place."""
    strided = np.zeros(2 * x.size)
    strided[::2] = x
    read_only = x.copy()
    read_only.flags.writeable = False
    return {
        "list": x.tolist(),
        "float32": x.astype(np.float32),
        "int": np.round(x).astype(np.int64),
        "strided": strided[::2],
        "big-endian": x.astype(">f8"),
        "read-only": read_only,
    }


RTOL_FORMS = 1e-14
ONE_STATE_CALLS = {
    "inverse_dynamics": lambda r, x: r.inverse_dynamics(x, x, x),
    "bias_forces": lambda r, x: r.bias_forces(x, x),
    "gravity_torques": lambda r, x: r.gravity_torques(x),
    "coriolis_matrix": lambda r, x: r.coriolis_matrix(x, x),
    "mass_matrix": lambda r, x: r.mass_matrix(x),
    "mass_matrix_diagonal": lambda r, x: r.mass_matrix_diagonal(x),
    "mass_matrix_inverse": lambda r, x: r.mass_matrix_inverse(x),
    "forward_dynamics": lambda r, x: r.forward_dynamics(x, x, x),
    "kinetic_energy": lambda r, x: r.kinetic_energy(x, x),
    "potential_energy": lambda r, x: r.potential_energy(x),
    "frame_pose": lambda r, x: r.frame_pose(x, "panda_hand_tcp"),
    "jacobian": lambda r, x: r.jacobian(x, "panda_hand_tcp"),
    "operational_space_inertia": lambda r, x: r.operational_space_inertia(x, "panda_hand_tcp"),
    "operational_space_inertia_inverse": lambda r, x: r.operational_space_inertia(
        x, "panda_hand_tcp", inverse=True
    ),
}


@pytest.mark.parametrize("function", ONE_STATE_CALLS)
def test_a_single_state_in_any_form_gives_the_same_answer(panda, function: str) -> None:
    """A plain float64 state enters the kernel through its C entry; every other form is
    converted and takes the batch kernels. Both must answer alike, to rounding (the two compiled
    forms may fuse multiply-adds differently)."""
    call = ONE_STATE_CALLS[function]
    x = np.linspace(-1.0, 1.0, panda.nv)
    np.testing.assert_allclose(call(panda, x[None])[0], call(panda, x), rtol=RTOL_FORMS, atol=0)
    for form, variant in _variants(x).items():
        expected = call(panda, np.array(variant, dtype=float))  # float32, int: values change
        np.testing.assert_allclose(
            call(panda, variant), expected, rtol=RTOL_FORMS, atol=0, err_msg=f"{form} state"
        )


def test_mismatched_state_shapes(panda) -> None:
    z = np.zeros(7)
    with pytest.raises(ValueError, match=r"qd must have shape \(7,\), one value per .*got \(6,\)"):
        panda.bias_forces(z, np.zeros(6))
    with pytest.raises(ValueError, match=r"qdd must have shape \(2, 7\).*got \(7,\)"):
        panda.inverse_dynamics(np.zeros((2, 7)), np.zeros((2, 7)), z)
    with pytest.raises(ValueError, match="tau must have shape"):
        panda.forward_dynamics(z, z, np.zeros((1, 7)))


def test_wrong_wrench_shape(panda) -> None:
    z = np.zeros(7)
    with pytest.raises(ValueError, match=r"f_ext must have shape \(7, 6\)"):
        panda.inverse_dynamics(z, z, z, f_ext=np.zeros((7, 3)))
    with pytest.raises(ValueError, match=r"f_ext must have shape \(2, 7, 6\)"):
        panda.forward_dynamics(np.zeros((2, 7)), np.zeros((2, 7)), np.zeros((2, 7)), f_ext=z)
    with pytest.raises(ValueError, match=r"f_ext must have shape \(7, 6\).*got \(6, 6\)"):
        panda.forward_dynamics(z, z, z, method="cholesky", f_ext=np.zeros((6, 6)))


def test_unknown_frame_lists_the_frames(panda) -> None:
    z = np.zeros(7)
    calls = (
        lambda: panda.frame_pose(z, "panda_gripper"),
        lambda: panda.jacobian(z, "panda_gripper"),
        lambda: panda.operational_space_inertia(z, "panda_gripper"),
    )
    for call in calls:
        with pytest.raises(ModelError, match="unknown frame 'panda_gripper'") as error:
            call()
        assert "panda_link0" in str(error.value) and "panda_hand_tcp" in str(error.value)


def test_unknown_method_lists_the_methods(panda) -> None:
    z = np.zeros(7)
    with pytest.raises(ValueError, match="unknown method 'rk4'; choose one of aba, cholesky"):
        panda.forward_dynamics(z, z, z, method="rk4")
    with pytest.raises(ValueError, match=r"mass_matrix: unknown method 'aba'.*crba"):
        panda.mass_matrix(z, method="aba")
    with pytest.raises(ValueError, match=r"unknown method 'lu'.*ltdl"):
        panda.mass_matrix_inverse(z, method="lu")
    with pytest.raises(ValueError, match=r"unknown method 'sparse'.*dense"):
        panda.operational_space_inertia(z, "panda_hand", method="sparse")


def test_non_numeric_input(panda) -> None:
    z = np.zeros(7)
    with pytest.raises(TypeError, match="q must be an array of numbers"):
        panda.gravity_torques(["a"] * 7)
    with pytest.raises(TypeError, match="q must be an array of numbers"):
        panda.mass_matrix([object()] * 7)
    with pytest.raises(TypeError, match="qd must be an array of numbers"):
        panda.kinetic_energy(z, [0.0] * 6 + ["fast"])
    with pytest.raises(TypeError, match="f_ext must be an array of numbers"):
        panda.inverse_dynamics(z, z, z, f_ext="wrench")


def test_none_is_not_a_joint_position(panda) -> None:
    with pytest.raises(TypeError, match="q must be an array of numbers"):
        panda.gravity_torques([None] * 7)


def test_zero_dimensional_q_is_refused_clearly(panda) -> None:
    with pytest.raises(ValueError, match=r"shape \(7,\) or \(B, 7\)"):
        panda.gravity_torques(np.array(0.0))


def test_lambda_of_a_rank_deficient_frame_is_refused(panda) -> None:
    """panda_link3 has three joints above it: J M⁻¹ Jᵀ has rank 3, Λ does not exist."""
    with pytest.raises(np.linalg.LinAlgError, match="inverse=True"):
        panda.operational_space_inertia(np.full(7, 0.3), "panda_link3")
