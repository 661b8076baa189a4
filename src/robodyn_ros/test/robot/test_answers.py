"""Where an answer does not exist, every path says so: a joint that moves no mass is found at
load, and q̈, M⁻¹ and Λ raise SingularMassMatrixError naming the joints on one state (the C
entry), a batch, threads and every method; a configuration where M is singular does the same;
finite inputs never give NaN or inf silently; what exists (M, τ, g) still matches Pinocchio."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.errors import NonFiniteResultError, SingularMassMatrixError
from robodyn_ros.model import URDFWarning
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import TorqueProfile
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing.example_robots import example_robot_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.robots import axis_point_mass_xml

PANDA_XML = bundled_urdf("panda").read_text()
MASSLESS_TIP_LINKS = ("panda_link6", "panda_link7", "panda_link8", "panda_hand", "panda_hand_tcp")
MASSLESS_TIP_JOINTS = ("panda_joint6", "panda_joint7")
RTOL = 1e-9


def without_inertials(xml: str, links: tuple[str, ...]) -> str:
    """The URDF with the <inertial> of each named link removed."""
    for link in links:
        xml = re.sub(rf'(<link name="{link}">.*?)<inertial>.*?</inertial>', r"\1", xml,
                     flags=re.S)
    return xml


@pytest.fixture(scope="module")
def massless_tip() -> tuple[Robot, str]:
    xml = without_inertials(PANDA_XML, MASSLESS_TIP_LINKS)
    with pytest.warns(URDFWarning, match="'panda_joint6', 'panda_joint7' move no mass"):
        return Robot.from_urdf_string(xml), xml


def assert_names_joints(error: pytest.ExceptionInfo, joints: tuple[str, ...]) -> None:
    assert error.value.joints == joints
    for joint in joints:
        assert f"'{joint}'" in str(error.value)


@pytest.fixture(scope="module")
def panda(load_robot) -> Robot:
    return load_robot("bundled_panda")


def test_a_joint_that_moves_no_mass_is_found_at_load(massless_tip) -> None:
    robot, _ = massless_tip
    assert robot.massless_joints == MASSLESS_TIP_JOINTS


@pytest.mark.parametrize("method", Robot.FORWARD_DYNAMICS_METHODS)
def test_forward_dynamics_raises_naming_the_joints_by_every_method(massless_tip, method) -> None:
    robot, _ = massless_tip
    q = np.full(robot.nv, 0.1)
    for state in (q, np.tile(q, (5, 1))):
        with pytest.raises(SingularMassMatrixError) as error:
            robot.forward_dynamics(state, state, state, method)
        assert_names_joints(error, MASSLESS_TIP_JOINTS)


@pytest.mark.parametrize("method", Robot.MASS_MATRIX_INVERSE_METHODS)
def test_the_inverse_raises_by_every_method(massless_tip, method) -> None:
    robot, _ = massless_tip
    with pytest.raises(SingularMassMatrixError) as error:
        robot.mass_matrix_inverse(np.zeros(robot.nv), method)
    assert_names_joints(error, MASSLESS_TIP_JOINTS)


@pytest.mark.parametrize("method", Robot.OPERATIONAL_SPACE_METHODS)
def test_the_operational_space_raises_by_every_method(massless_tip, method) -> None:
    robot, _ = massless_tip
    q = np.zeros(robot.nv)
    for call in (
        lambda: robot.operational_space_inertia(q, "panda_link5", method),
        lambda: robot.operational_space_inertia(q, "panda_link5", method, inverse=True),
        lambda: robot.operational_space(q, q, "panda_link5", method),
    ):
        with pytest.raises(SingularMassMatrixError):
            call()
    with pytest.raises(SingularMassMatrixError):
        robot.operational_space_inertia_inverse_times(q, "panda_link5", np.ones(6))


def test_threads_raise_the_same(massless_tip) -> None:
    robot, _ = massless_tip
    Q = np.zeros((4000, robot.nv))
    with pytest.raises(SingularMassMatrixError):
        robot.with_threads(2).forward_dynamics(Q, Q, Q)


def test_what_exists_still_matches_pinocchio(massless_tip) -> None:
    robot, xml = massless_tip
    oracle = PinocchioOracle(xml, robot.joint_names, is_string=True)
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-1, 1, (3, robot.nv))
    M = robot.mass_matrix(q)
    np.testing.assert_allclose(M, oracle.mass_matrix(q), rtol=RTOL, atol=RTOL * np.abs(M).max())
    tau = robot.inverse_dynamics(q, qd, qdd)
    expected = oracle.rnea(q, qd, qdd)
    np.testing.assert_allclose(tau, expected, rtol=RTOL, atol=RTOL * np.abs(expected).max())


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit_euler"])
def test_simulation_and_preview_raise_naming_the_joints(massless_tip, integrator) -> None:
    """The simulated robot's step, the compiled rollout and the stepped one (cholesky)."""
    robot, _ = massless_tip
    with pytest.raises(SingularMassMatrixError) as error:
        SimulatedRobot(robot, integrator).step(np.zeros(robot.nv))
    assert_names_joints(error, MASSLESS_TIP_JOINTS)
    idle = TorqueProfile("idle", "panda_hand_tcp", np.zeros(1), np.zeros((1, robot.nv)))
    for method in ("aba", "cholesky"):
        settings = PreviewSettings(horizon=0.01, integrator=integrator,
                                   forward_dynamics_method=method)
        with pytest.raises(SingularMassMatrixError) as error:
            preview(robot, [idle], settings)
        assert_names_joints(error, MASSLESS_TIP_JOINTS)


def test_armature_on_the_massless_joints_gives_the_simulation_pinocchios_motion(
        massless_tip) -> None:
    """The remedy: with armature on joints 6 and 7 the robot has forward dynamics, and the
    simulated robot and the preview's rollout follow Pinocchio's ABA with that armature."""
    robot, xml = massless_tip
    armature = dict.fromkeys(MASSLESS_TIP_JOINTS, 0.05)
    armed = robot.with_armature(armature)
    assert armed.massless_joints == ()
    oracle = PinocchioOracle(xml, robot.joint_names, armature=armature, is_string=True)
    model, dt = armed.model, 1e-3
    q0, effort = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8]), np.linspace(-1.0, 1.0, 7)
    push = TorqueProfile("push", "panda_hand_tcp", np.array([0.0, 0.02]), np.tile(effort, (2, 1)))
    settings = PreviewSettings(horizon=0.02, dt=dt, integrator="semi_implicit_euler")
    (result,) = preview(armed, [push], settings, q0)
    simulated = SimulatedRobot(armed, "semi_implicit_euler", dt, q=q0)
    q, qd = q0.copy(), np.zeros(7)
    for k in range(settings.steps):
        simulated.step(effort)
        friction = model.friction * np.tanh(qd / settings.friction_velocity)
        qd = qd + dt * oracle.aba(q, qd, effort - model.damping * qd - friction)
        q = q + dt * qd
        np.testing.assert_allclose(simulated.q, q, rtol=0, atol=1e-9)
        np.testing.assert_allclose(result.q[k + 1], q, rtol=0, atol=1e-9)


def test_a_real_humanoid_with_massless_hands_names_its_finger_joints() -> None:
    with pytest.warns(URDFWarning, match="move no mass"):
        robot = Robot.from_urdf(example_robot_urdf("romeo"), mimic=False)
    assert "LFinger21" in robot.massless_joints and "RThumb1" in robot.massless_joints
    assert "LShoulderPitch" not in robot.massless_joints
    q = np.zeros(robot.nv)
    with pytest.raises(SingularMassMatrixError, match="LFinger21"):
        robot.forward_dynamics(q, q, q)
    locked = Robot.from_urdf(
        example_robot_urdf("romeo"),
        locked_joints=dict.fromkeys(robot.massless_joints, 0.0), mimic=False,
    )
    assert locked.massless_joints == ()
    assert np.isfinite(locked.forward_dynamics(*np.zeros((3, locked.nv)))).all()


def test_a_configuration_where_m_is_singular_names_the_joint(capfd) -> None:
    robot = Robot.from_urdf_string(axis_point_mass_xml())
    assert robot.massless_joints == ()
    singular = np.zeros(2)
    tau = np.array([1.0, 0.5])
    for method in ("aba", "cholesky"):
        with pytest.raises(SingularMassMatrixError, match="at this state") as error:
            robot.forward_dynamics(singular, singular, tau, method)
        assert_names_joints(error, ("spin",))
    with pytest.raises(SingularMassMatrixError, match="at state 1 of the batch"):
        robot.forward_dynamics(np.array([[0.0, 0.5], [0.0, 0.0]]), np.zeros((2, 2)),
                               np.ones((2, 2)))
    with pytest.raises(SingularMassMatrixError, match="spin"):
        robot.mass_matrix_inverse(singular)
    assert "Exception ignored" not in capfd.readouterr().err
    q = np.array([0.3, 0.5])
    M, b = robot.mass_matrix(q), robot.bias_forces(q, q)
    np.testing.assert_allclose(robot.forward_dynamics(q, q, tau), np.linalg.solve(M, tau - b),
                               rtol=1e-12)


def test_finite_inputs_never_give_nan_silently(panda) -> None:
    q = np.zeros(panda.nv)
    huge = np.full(panda.nv, 1e300)
    for call, quantity in (
        (lambda: panda.bias_forces(q, huge), "C(q, q̇) q̇"),
        (lambda: panda.inverse_dynamics(q, huge, q), "τ"),
        (lambda: panda.forward_dynamics(q, huge, q), "q̈"),
        (lambda: panda.forward_dynamics(q, q, huge * 1e8), "q̈"),
        (lambda: panda.kinetic_energy(q, huge), "kinetic energy"),
        (lambda: panda.forward_dynamics(np.tile(q, (3, 1)), np.tile(huge, (3, 1)),
                                        np.zeros((3, panda.nv))), "state 0 of the batch"),
    ):
        with pytest.raises(NonFiniteResultError, match=re.escape(quantity)):
            call()


def test_nan_in_gives_nan_out(panda) -> None:
    q = np.zeros(panda.nv)
    q[2] = np.nan
    assert np.isnan(panda.forward_dynamics(q, np.zeros(panda.nv), np.zeros(panda.nv))).all()
    assert np.isnan(panda.mass_matrix(q)).any()
    Q = np.zeros((2, panda.nv))
    Q[1, 0] = np.inf
    qdd = panda.forward_dynamics(Q, np.zeros_like(Q), np.zeros_like(Q))
    assert np.isfinite(qdd[0]).all() and not np.isfinite(qdd[1]).all()


def test_a_vendor_urdf_with_cad_noise_on_a_fixed_link_loads_with_a_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = Robot.from_urdf(example_robot_urdf("tiago"))
    noted = [str(w.message) for w in caught if "base_antenna_left_link" in str(w.message)]
    assert noted and "fixed base" in noted[0] and "-3.53486e-08" in noted[0]
    assert np.isfinite(robot.forward_dynamics(*np.zeros((3, robot.nv)))).all()
