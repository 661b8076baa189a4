"""Robot.operational_space against Pinocchio and against the equations of motion it restates.

The dense reference is built from Pinocchio alone: J (computeFrameJacobian), M⁻¹
(computeMinverse), C q̇ + g and g (nonLinearEffects, computeGeneralizedGravity) and J̇ q̇
(forwardKinematics at q̈ = 0 + getFrameClassicalAcceleration, LOCAL_WORLD_ALIGNED).
"""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.robot.operational_space import SINGULAR_THRESHOLD

from helpers.tolerances import KAPPA_REF, RTOL, assert_close

STATES = 2
PANDA_TCP = "panda_hand_tcp"


def reference(case, q: np.ndarray, qd: np.ndarray) -> dict[str, np.ndarray]:
    oracle, frame = case.oracle, case.tip
    J = oracle.jacobian(q, frame)
    Minv = oracle.mass_matrix_inverse(q)
    g = oracle.gravity_torques(q)
    coriolis = oracle.bias_forces(q, qd) - g
    Jdot_qd = oracle.classical_acceleration(q, qd, frame)
    Lambda = np.linalg.inv(J @ Minv @ J.T)
    Jbar = Minv @ J.T @ Lambda
    return {
        "J": J, "Lambda_inv": J @ Minv @ J.T, "Lambda": Lambda, "Jbar": Jbar,
        "mu": Jbar.T @ coriolis - Lambda @ Jdot_qd, "p": Jbar.T @ g, "Jdot_qd": Jdot_qd,
    }


def test_operational_space_equals_pinocchio(arm_case) -> None:
    """Every quantity of one tip frame at random states (away from singularities: the tips of
    arm_case have σ_min/σ_max > 1e-4, see test_robot_against_pinocchio). Everything but J goes
    through M⁻¹, so the tolerance grows with κ(M) beyond KAPPA_REF, as for forward dynamics."""
    q, qd, _, _ = arm_case.states(STATES, seed=21)
    for i in range(STATES):
        result = arm_case.robot.operational_space(q[i], qd[i], arm_case.tip)
        assert result.rank == 6 and not result.singular, f"{arm_case.name}: {result.rank}"
        scale = max(1.0, np.linalg.cond(arm_case.oracle.mass_matrix(q[i])) / KAPPA_REF)
        for name, expected in reference(arm_case, q[i], qd[i]).items():
            what = f"{arm_case.name} state {i} {name}"
            assert_close(getattr(result, name), expected, what, scale=scale)


def test_classical_acceleration_equals_pinocchio(arm_case) -> None:
    """J̇ q̇ of the tip alone, kinematics only, and of a stacked task over a batch."""
    q, qd, _, _ = arm_case.states(STATES, seed=22)
    robot, tip = arm_case.robot, arm_case.tip
    expected = [arm_case.oracle.classical_acceleration(q[i], qd[i], tip) for i in range(STATES)]
    for i in range(STATES):
        assert_close(robot.classical_acceleration(q[i], qd[i], tip), expected[i],
                     f"{arm_case.name} state {i} J̇ q̇")
    stacked = robot.classical_acceleration(q, qd, [tip, tip], axes="xyz")
    assert_close(stacked, np.concatenate([np.array(expected)[:, :3]] * 2, axis=1),
                 f"{arm_case.name} stacked J̇ q̇")


def test_task_force_gives_the_task_acceleration(load_robot) -> None:
    """The law the quantities exist for: τ = Jᵀ F makes the task accelerate by
    ẍ = J q̈ + J̇ q̇ with Λ ẍ + μ + p = F (q̈ from forward dynamics, ABA)."""
    robot = load_robot("bundled_panda")
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(robot.model.lower, robot.model.upper)
        qd, F = rng.uniform(-1.0, 1.0, 7), rng.uniform(-10.0, 10.0, 6)
        result = robot.operational_space(q, qd, PANDA_TCP)
        qdd = robot.forward_dynamics(q, qd, result.J.T @ F)
        xdd = result.J @ qdd + result.Jdot_qd
        assert_close(result.Lambda @ xdd + result.mu + result.p, F, "Λ ẍ + μ + p vs F")


def test_null_space_torques_do_not_move_the_task(load_robot) -> None:
    robot = load_robot("bundled_panda")
    q, qd = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7]), np.zeros(7)
    result = robot.operational_space(q, qd, PANDA_TCP)
    tau0 = np.linspace(-3.0, 3.0, 7)
    g = robot.gravity_torques(q)
    qdd = robot.forward_dynamics(q, qd, g + result.null_space_projector() @ tau0)
    assert np.abs(result.J @ qdd).max() < 1e-10 and np.abs(qdd).max() > 1e-2


def test_stacked_task_and_batch(load_robot) -> None:
    """Two frames stack their rows; a batch equals its states one by one. 12 task rows on 7
    joints: Λ⁻¹ has rank 7, so Λ is damped, finite, and the rank says so."""
    robot = load_robot("bundled_panda")
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-1.0, 1.0, (3, 7)), rng.uniform(-1.0, 1.0, (3, 7))
    frames = [PANDA_TCP, "panda_link4"]
    batch = robot.operational_space(q, qd, frames)
    assert batch.J.shape == (3, 12, 7) and batch.Jbar.shape == (3, 7, 12)
    assert list(batch.rank) == [7, 7, 7] and np.all(batch.singular)
    for b in range(3):
        single = robot.operational_space(q[b], qd[b], frames)
        J = np.vstack([robot.jacobian(q[b], frame) for frame in frames])
        assert_close(single.J, J, "stacked J")
        assert_close(single.Lambda_inv, J @ robot.mass_matrix_inverse(q[b]) @ J.T, "stacked Λ⁻¹")
        for name in ("J", "Lambda_inv", "Lambda", "Jbar", "mu", "p", "Jdot_qd"):
            assert np.array_equal(getattr(batch, name)[b], getattr(single, name)), name
        assert np.all(np.isfinite(single.Lambda))


@pytest.mark.parametrize("threshold", [1e-4, None], ids=["controller", "default"])
def test_singular_configuration_gives_a_finite_damped_lambda(load_robot, threshold) -> None:
    """Panda stretched out (all zeros) has lost a task direction: Λ⁻¹ is exact, Λ is finite,
    symmetric, bounded by ≈ 1 / (threshold · s_max), and the rank and condition number report
    the singularity. Approaching it, Λ stays bounded (never the 1/s blow-up)."""
    robot = load_robot("bundled_panda")
    options = {} if threshold is None else {"singular_threshold": threshold}
    threshold = threshold or SINGULAR_THRESHOLD
    largest, s_max = 0.0, 0.0
    for offset in (1e-1, 1e-3, 1e-6, 1e-9, 0.0):
        q = np.array([0.0, offset, 0.0, -offset, 0.0, offset, 0.0])
        result = robot.operational_space(q, np.zeros(7), PANDA_TCP, **options)
        J = robot.jacobian(q, PANDA_TCP)
        assert_close(result.Lambda_inv, J @ robot.mass_matrix_inverse(q) @ J.T, "Λ⁻¹")
        assert np.all(np.isfinite(result.Lambda)) and np.allclose(result.Lambda, result.Lambda.T)
        largest = max(largest, float(np.abs(result.Lambda).max()))
        s_max = max(s_max, float(np.linalg.eigvalsh(result.Lambda_inv)[-1]))
    assert result.singular and result.rank == 5 and result.condition > 1e12
    assert largest < 2.0 / (threshold * s_max), largest
    lost = np.linalg.eigh(result.Lambda_inv)[1][:, 0]
    assert abs(lost @ result.Lambda @ lost) < 1e-9  # no force along the lost direction


def test_damping_is_continuous_at_the_threshold(load_robot) -> None:
    """With the threshold a hair below s_min / s_max Λ is exact; a hair above it, damped with a
    damping that starts from zero: the same Λ to about the relative size of the hair."""
    robot = load_robot("bundled_panda")
    q = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.5, 0.8])
    task = robot.operational_space(q, np.zeros(7), PANDA_TCP)
    s = np.linalg.eigvalsh(task.Lambda_inv)
    at = robot.operational_space(
        q, np.zeros(7), PANDA_TCP, singular_threshold=s[0] / s[-1] * (1.0 - 1e-6)
    )
    above = robot.operational_space(
        q, np.zeros(7), PANDA_TCP, singular_threshold=s[0] / s[-1] * (1.0 + 1e-6)
    )
    assert above.singular and not at.singular
    assert_close(above.Lambda, at.Lambda, "Λ across the threshold", rtol=1e-4)


def test_damped_lambda_is_exact_above_the_threshold(load_robot) -> None:
    robot = load_robot("bundled_panda")
    q = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.5, 0.8])
    result = robot.operational_space(q, np.zeros(7), PANDA_TCP)
    assert not result.singular and result.rank == 6
    assert_close(result.Lambda @ result.Lambda_inv, np.eye(6), "Λ Λ⁻¹", rtol=RTOL * 1e3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r, q: r.operational_space(q, q, "no_such_link"), "no_such_link"),
        (lambda r, q: r.operational_space(q, q, []), "at least one frame"),
        (lambda r, q: r.operational_space(q, q[:3], PANDA_TCP), "qd must have shape"),
        (lambda r, q: r.operational_space(q, q, PANDA_TCP, method="fast"), "unknown method"),
        (lambda r, q: r.operational_space(q, q, PANDA_TCP, singular_threshold=0), "threshold"),
    ],
    ids=["frame", "empty", "qd", "method", "threshold"],
)
def test_bad_arguments_name_what_is_wrong(load_robot, call, message: str) -> None:
    robot: Robot = load_robot("bundled_panda")
    with pytest.raises((KeyError, ValueError), match=message):
        call(robot, np.zeros(7))
