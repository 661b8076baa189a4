"""The parts of identification, each against an independent reference: base parameters
(W_b π_b = W π for any π, on real robots and generated chains and trees; the Panda's 43 base
parameters of its bodies, as Gaz et al. 2019 find), the log-Cholesky map (rigid bodies only,
round trip; the log-det divergence as a sum of squares, and its Jacobian), which joint
parameters a run informs (against the projection of the stacked regressor), a load's columns
(against Robot.with_payload), normal equations (against the residual computed sample by
sample; chunks and backends add up to the whole), and weighted least squares (the true
parameters of noisy data within their standard errors, at the scatter the covariance
predicts)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.identification.accumulation import RunSamples, accumulate
from robodyn_ros.identification.base_parameters import base_parameters
from robodyn_ros.identification.errors import IdentificationError
from robodyn_ros.identification.estimation import weighted_least_squares
from robodyn_ros.identification.informed import joint_parameter_spread
from robodyn_ros.identification.log_cholesky import (
    divergence_residual,
    divergence_residual_jacobian,
    parameters_of_theta,
    pseudo_inertia,
    theta_of_parameters,
)
from robodyn_ros.identification.normal_equations import NormalEquations
from robodyn_ros.identification.payload import PayloadEstimate, payload_columns
from robodyn_ros.model.inertia import (
    impossible_inertia,
    inertia_about_com,
    principal_moments,
    rotation_from_rpy,
    spatial_inertia,
)
from robodyn_ros.model.inertial_parameters import body_parameters, spatial_inertia_of
from robodyn_ros.parallel import backend
from robodyn_ros.testing.perturbed_robot import perturbed_parameters
from robodyn_ros.testing.trajectories import sine_trajectory

from helpers.robots import PANDA
from helpers.tolerances import close


def test_base_parameters_explain_every_parameter_vector(case) -> None:
    """For random π, the base regressor times K π is the whole regressor times π, at states
    other than those the base parameters were found at."""
    if case.robot.nv > 64:
        pytest.skip("the stacked regressor of a 128- or 256-joint chain is large; 64 suffice")
    base = base_parameters(case.robot)
    q, qd, qdd, _ = case.states(4, seed=21)
    Y = case.robot.inverse_dynamics_regressor(q, qd, qdd)
    for seed in range(3):
        parameters = np.random.default_rng(seed).normal(size=Y.shape[-1])
        close(base.regressor(Y) @ base.of(parameters), Y @ parameters)
    assert np.abs(Y[..., base.unidentifiable]).max(initial=0.0) <= 1e-12 * np.abs(Y).max()
    np.testing.assert_array_equal(base.combination[:, base.independent], np.eye(len(base)))


def test_the_panda_has_43_base_parameters_of_its_bodies() -> None:
    """The rank of the bodies' columns alone: 43 (Gaz, Cognetti, Oliva, Robuffo Giordano & De
    Luca, RA-L 4(4), 2019); with armature and friction the identification fits 69."""
    robot = Robot.from_urdf_string(PANDA)
    rng = np.random.default_rng(0)
    q = rng.uniform(robot.model.lower, robot.model.upper, (300, robot.nv))
    Y = robot.inverse_dynamics_regressor(q, *rng.uniform(-2, 2, (2, 300, robot.nv)))
    bodies = Y[..., : 10 * robot.nv].reshape(-1, 10 * robot.nv)
    pivots = np.abs(np.diag(scipy.linalg.qr(bodies, mode="r", pivoting=True)[0]))
    assert np.sum(pivots > 1e-9 * pivots[0]) == 43
    assert len(base_parameters(robot)) == 69
    names = base_parameters(robot).names
    assert "panda_link4.mcx - 0.0825·panda_link5.m - 0.0825·panda_link6.m" \
        " - 0.0825·panda_link7.m" in names


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_log_cholesky_gives_rigid_bodies_only_and_round_trips(seed: int) -> None:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.5, (5, 10))
    bodies = parameters_of_theta(theta)
    for body in bodies:
        moments = principal_moments(inertia_about_com(spatial_inertia_of(body)))
        assert body[0] > 0.0 and not impossible_inertia(moments)
    # the round trip loses what the pseudo-inertia's conditioning costs: up to 3 ε κ(J) over
    # 3000 seeds (κ reaches 1e11 with θ drawn this wide), held here to 1e-14 κ beyond 1e-7
    tolerance = 1e-7 + 1e-14 * np.linalg.cond(pseudo_inertia(bodies))
    assert np.all(np.abs(theta_of_parameters(bodies) - theta).max(axis=1) <= tolerance)
    assert np.all(np.linalg.eigvalsh(pseudo_inertia(bodies)) > 0.0)


def test_log_cholesky_refuses_an_impossible_body() -> None:
    flat = body_parameters(spatial_inertia(1.0, np.zeros(3), np.diag([0.1, 0.1, 0.5])))
    with pytest.raises(np.linalg.LinAlgError):
        theta_of_parameters(flat)


@pytest.mark.parametrize("spread", [1.5, 1e-3, 1e-7])
def test_the_divergence_residual_is_the_log_det_divergence_and_its_slope(spread) -> None:
    """½‖r‖² = tr(J₀⁻¹ J) − log det(J₀⁻¹ J) − 4 from far off down to where its series takes
    over, and ∂r/∂θ by central differences."""
    rng = np.random.default_rng(4)
    reference = rng.normal(0.0, 1.0, (3, 10))
    theta = reference + rng.normal(0.0, spread, (3, 10))
    J, J0 = pseudo_inertia(parameters_of_theta(theta)), pseudo_inertia(
        parameters_of_theta(reference))
    relative = np.linalg.solve(J0, J)
    divergence = (np.trace(relative, axis1=-2, axis2=-1)
                  - np.log(np.linalg.det(relative)) - 4.0)
    residual = divergence_residual(theta, reference)
    np.testing.assert_allclose(0.5 * np.sum(residual**2, axis=-1), divergence,
                               rtol=1e-6, atol=1e-12 * spread**2 + 1e-15)
    step = 1e-6
    numeric = np.stack([(divergence_residual(theta + step * unit, reference)
                         - divergence_residual(theta - step * unit, reference)) / (2 * step)
                        for unit in np.eye(10)], -1)
    np.testing.assert_allclose(divergence_residual_jacobian(theta, reference), numeric,
                               rtol=1e-5, atol=1e-6 * np.abs(numeric).max())


def test_a_joint_parameters_spread_is_its_column_beside_the_bodies() -> None:
    """The spread of each joint parameter against 1/√(N (1 − R²)), R² from projecting its
    weighted column of the stacked regressor on the bodies' columns by lstsq."""
    robot = Robot.from_urdf_string(PANDA)
    trajectory = sine_trajectory(robot, 600, 50.0, seed=3, reach=0.1)
    Y = robot.inverse_dynamics_regressor(trajectory.q, trajectory.qd, trajectory.qdd)
    sigma = np.linspace(0.1, 0.4, robot.nv)
    tau = np.random.default_rng(2).normal(size=trajectory.q.shape)
    spread = joint_parameter_spread(NormalEquations.of(Y, tau), sigma, robot.nv)
    weighted = (Y / sigma[None, :, None]).reshape(-1, Y.shape[-1])
    split = 10 * robot.nv
    bodies = weighted[:, :split]
    expected = np.empty(weighted.shape[1] - split)
    for k, column in enumerate(weighted[:, split:].T):
        fitted = bodies @ np.linalg.lstsq(bodies, column, rcond=1e-10)[0]
        explained = float(fitted @ fitted / (column @ column))
        expected[k] = 1.0 / np.sqrt(600 * (1.0 - explained)) if explained < 1 - 1e-9 else np.inf
    finite = np.isfinite(expected) & (expected < 1e3)
    np.testing.assert_allclose(spread.ravel()[finite], expected[finite], rtol=1e-4)
    assert np.all(spread.ravel()[~finite] > 1e2)  # joint 1's armature is link 1's inertia


@pytest.mark.parametrize("frame", ["panda_hand_tcp", "panda_link8", "panda_hand", "panda_link3"])
def test_a_loads_columns_are_those_with_payload_adds(frame: str) -> None:
    robot = Robot.from_urdf_string(PANDA)
    inertia = (rotation_from_rpy((0.3, -0.2, 0.7)) @ np.diag([0.004, 0.006, 0.009])
               @ rotation_from_rpy((0.3, -0.2, 0.7)).T)
    com = np.array([0.02, -0.01, 0.08])
    held = robot.with_payload(frame, 1.3, com, inertia)
    load = body_parameters(spatial_inertia(1.3, com, inertia))
    close(held.inertial_parameters() - robot.inertial_parameters(),
          payload_columns(robot.model, frame) @ load)
    estimate = PayloadEstimate.of(frame, load)
    close(estimate.com, com)
    close(estimate.inertia, inertia)
    with pytest.raises(IdentificationError, match="fixed base"):
        payload_columns(robot.model, "panda_link0")


def test_normal_equations_give_the_residual_of_any_parameters() -> None:
    robot = Robot.from_urdf_string(PANDA)
    trajectory = sine_trajectory(robot, 300, 100.0, seed=2)
    Y = robot.inverse_dynamics_regressor(trajectory.q, trajectory.qd, trajectory.qdd)
    tau = np.random.default_rng(3).normal(size=trajectory.q.shape)
    tau[[5, 9], 2] = np.nan  # two samples without an effort on joint 2
    equations = NormalEquations.of(Y, tau)
    parameters = perturbed_parameters(robot, seed=4)
    residual = tau - Y @ parameters
    np.testing.assert_allclose(equations.squared_residuals(parameters),
                               np.nansum(residual**2, axis=0), rtol=1e-9)
    assert equations.counts.tolist() == [300, 300, 298, 300, 300, 300, 300]
    halves = NormalEquations.of(Y[:100], tau[:100]) + NormalEquations.of(Y[100:], tau[100:])
    # Two summation orders of y_aᵀ y_b differ by rounding, at most ~ m ε ‖y_a‖ ‖y_b‖ (the BLAS
    # and the CPU choose the order): an entry that cancels is off more than relative 1e-12.
    norms = np.sqrt(np.einsum("jaa->ja", equations.products))
    rounding = 1e-12 * norms[:, :, np.newaxis] * norms[:, np.newaxis, :]
    assert np.all(np.abs(halves.products - equations.products) <= rounding)


@pytest.mark.parametrize("name", ["threads", "processes"])
def test_accumulation_on_a_backend_is_the_serial_one(name: str) -> None:
    robot = Robot.from_urdf_string(PANDA)
    trajectory = sine_trajectory(robot, 2500, 100.0, seed=5)
    tau = np.random.default_rng(6).normal(size=trajectory.q.shape)
    samples = RunSamples(trajectory.q, trajectory.qd, trajectory.qdd, tau)
    serial = accumulate(robot, samples, chunk=700)
    with backend(name, workers=2) as pool:
        parallel = accumulate(robot, samples, chunk=700, pool=pool)
    np.testing.assert_allclose(parallel.products, serial.products, rtol=1e-12)
    np.testing.assert_allclose(parallel.moments, serial.moments, rtol=1e-12)
    assert parallel.counts.tolist() == serial.counts.tolist()


def test_weighted_least_squares_scatters_as_its_covariance_says() -> None:
    """Ten noisy runs of one trajectory (σ different per joint): the estimates' z-scores
    against the true base parameters have unit variance (χ² within its 99.9 % range) and
    the estimated σ per joint is the noise's."""
    robot = Robot.from_urdf_string(PANDA)
    true = perturbed_parameters(robot, seed=8)
    base = base_parameters(robot)
    trajectory = sine_trajectory(robot, 4000, 200.0, seed=9)
    Y = robot.inverse_dynamics_regressor(trajectory.q, trajectory.qd, trajectory.qdd)
    sigma = np.linspace(0.2, 0.8, robot.nv)
    z = []
    for seed in range(10):
        tau = Y @ true + np.random.default_rng(seed).normal(0.0, sigma, trajectory.q.shape)
        estimate = weighted_least_squares(NormalEquations.of(Y, tau), base)
        z.append((estimate.values - base.of(true)) / estimate.standard_errors)
        np.testing.assert_allclose(estimate.sigma, sigma, rtol=0.05)
    chi2 = float(np.sum(np.square(z)))
    degrees = 10 * len(base)
    assert degrees - 3.3 * np.sqrt(2 * degrees) < chi2 < degrees + 3.3 * np.sqrt(2 * degrees)


def test_a_run_that_does_not_move_a_joint_is_refused_naming_what_it_cannot_fit() -> None:
    robot = Robot.from_urdf_string(PANDA)
    trajectory = sine_trajectory(robot, 2000, 100.0, seed=10)
    q, qd, qdd = trajectory.q.copy(), trajectory.qd.copy(), trajectory.qdd.copy()
    q[:, 6], qd[:, 6], qdd[:, 6] = 0.3, 0.0, 0.0  # the wrist joint 7 held still
    Y = robot.inverse_dynamics_regressor(q, qd, qdd)
    tau = Y @ robot.inertial_parameters() + np.random.default_rng(1).normal(0, 0.1, q.shape)
    with pytest.raises(IdentificationError, match="does not excite every base parameter"):
        weighted_least_squares(NormalEquations.of(Y, tau), base_parameters(robot))
