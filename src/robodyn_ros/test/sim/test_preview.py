"""sim.preview: the compiled rollout's frame path, energy and singular values against Robot, the
adaptive integrators against RK4, the trajectory and metrics against Pinocchio, and the errors
bad scenarios give. The compiled control laws against the controller plugins:
test/control/test_compiled_laws.py."""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.parallel import backend
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import ScenarioError, scenario_from_mapping

from helpers.preview_scenarios import FRAME, HORIZON, Q0, scenarios, specs


@pytest.fixture(scope="module")
def panda() -> Robot:
    return Robot.from_urdf(bundled_urdf("panda"))


@pytest.mark.parametrize(("integrator", "control_period"),
                         [("rk4", 0.0), ("rk4", 0.01), ("semi_implicit_euler", 0.0)])
def test_compiled_frame_path_is_frame_pose_of_the_states(panda, integrator, control_period):
    """The kernel's frame path (the law's or the first stage's kinematics at each step, one
    more pass at the last state) is Robot.frame_pose of the states, to rounding."""
    settings = PreviewSettings(horizon=0.05, integrator=integrator, control_period=control_period)
    for result in preview(panda, scenarios(panda), settings, Q0):
        np.testing.assert_allclose(result.frame_path, panda.frame_pose(result.q, FRAME),
                                   rtol=0.0, atol=1e-12, err_msg=result.name)


@pytest.mark.parametrize("control_period", [0.0, 0.01])
def test_compiled_energy_and_singular_value_are_of_the_sampled_states(panda, control_period):
    """The kernel's energy at the samples (½ q̇ᵀ M q̇ from the law's CRBA, V from the composite
    inertias) and its smallest singular value of J over them (eigvalsh only where a shifted
    Cholesky cannot rule a sample out) are those of Robot at the sampled states."""
    settings = PreviewSettings(horizon=HORIZON, control_period=control_period)
    for result in preview(panda, scenarios(panda), settings, Q0):
        q, qd = result.q[result.samples], result.qd[result.samples]
        np.testing.assert_allclose(result.energy,
                                   panda.kinetic_energy(q, qd) + panda.potential_energy(q),
                                   rtol=1e-12, atol=1e-12, err_msg=result.name)
        singular = np.linalg.svd(panda.jacobian(q, FRAME), compute_uv=False)
        np.testing.assert_allclose(result.metrics.min_singular_value, singular[:, -1].min(),
                                   rtol=1e-10, err_msg=result.name)


@pytest.mark.parametrize(("integrator", "method"), [("rk45", "aba"), ("lsoda", "pcg")])
def test_adaptive_integrators_agree_with_rk4(panda, integrator, method):
    """solve_ivp over each step (tolerance 1e-9; an iterative forward dynamics to 1e-10)
    against RK4 at 1 ms, whose error over 0.1 s is far below 1e-6 rad."""
    settings = PreviewSettings(horizon=0.1, integrator=integrator, tolerance=1e-9,
                               forward_dynamics_method=method)
    (adaptive,) = preview(panda, scenarios(panda)[2:], settings, Q0)
    (fixed,) = preview(panda, scenarios(panda)[2:], PreviewSettings(horizon=0.1), Q0)
    np.testing.assert_allclose(adaptive.q, fixed.q, atol=1e-6)


def test_open_loop_rollout_against_pinocchio(panda):
    """The torque-profile preview against RK4 over Pinocchio's ABA with the same damping,
    smoothed friction and velocity limits (no position limit is reached), and its frame path,
    energy and min singular value against Pinocchio's, to 1e-9."""
    oracle = pytest.importorskip("robodyn_ros.testing.pinocchio_oracle").PinocchioOracle(
        bundled_urdf("panda"), panda.joint_names)
    settings = PreviewSettings(horizon=HORIZON)
    scenario = scenarios(panda)[2]
    (result,) = preview(panda, [scenario], settings, Q0)
    effort = scenario.reference(result.times[:-1], Q0)[:, 0]
    q, qd = Q0.copy(), np.zeros(7)
    for k in range(settings.steps):
        q, qd = oracle_step(oracle, panda.model, settings, q, qd, effort[k])
        np.testing.assert_allclose(result.q[k + 1], q, atol=1e-9)
    final = result.q[-1]
    np.testing.assert_allclose(result.frame_path[-1], oracle.frame_pose(final, FRAME),
                               atol=1e-9)
    energy = oracle.kinetic_energy(final, result.qd[-1]) + oracle.potential_energy(final)
    np.testing.assert_allclose(result.energy[-1], energy, rtol=1e-9)
    assert result.samples[-1] == settings.steps
    sampled = result.q[result.samples]
    smallest = min(np.linalg.svd(oracle.jacobian(q, FRAME), compute_uv=False)[-1]
                   for q in sampled)
    np.testing.assert_allclose(result.metrics.min_singular_value, smallest, rtol=1e-9)


def oracle_step(oracle, model, settings, q, qd, tau):
    """One classical RK4 step of dt on (q̇, q̈) over Pinocchio's ABA with the model's damping
    and smoothed friction, the velocity then clipped to its limits: (q, q̇) after it."""
    dt = settings.dt

    def acceleration(q, qd):
        friction = model.friction * np.tanh(qd / settings.friction_velocity)
        return oracle.aba(q, qd, tau - model.damping * qd - friction)

    k1 = qd, acceleration(q, qd)
    k2 = qd + dt / 2 * k1[1], acceleration(q + dt / 2 * k1[0], qd + dt / 2 * k1[1])
    k3 = qd + dt / 2 * k2[1], acceleration(q + dt / 2 * k2[0], qd + dt / 2 * k2[1])
    k4 = qd + dt * k3[1], acceleration(q + dt * k3[0], qd + dt * k3[1])
    q, qd = (x + dt / 6 * (a[i] + 2 * b[i] + 2 * c[i] + d[i])
             for i, x, a, b, c, d in ((0, q, k1, k2, k3, k4), (1, qd, k1, k2, k3, k4)))
    return q, np.clip(qd, -model.velocity_limit, model.velocity_limit)


def test_computed_torque_trajectory_against_pinocchio(panda):
    """A joint trajectory under computed torque, a command every 10 ms held in between: the
    preview (SimulatedRobot with the plugin, which the rollout kernel has no law for) against
    Pinocchio's RNEA for the command, τ = RNEA(q, q̇, q̈* + Kp e + Kd ė) + d q̇* + f tanh(q̇*/ε),
    and its ABA for the motion, to 1e-9; it keeps to the trajectory within 5 mrad."""
    oracle = pytest.importorskip("robodyn_ros.testing.pinocchio_oracle").PinocchioOracle(
        bundled_urdf("panda"), panda.joint_names)
    spec = {"name": "swing", "joint_trajectory": {
        "frame": FRAME, "controller": "computed_torque", "kp": 400.0, "kd": 40.0,
        "times": [0.15, 0.3], "positions": [(Q0 + 0.1).tolist(), Q0.tolist()]}}
    scenario = scenario_from_mapping(panda, spec)
    settings = PreviewSettings(horizon=HORIZON, control_period=0.01)
    (result,) = preview(panda, [scenario], settings, Q0)
    model, reference = panda.model, scenario.reference(result.times[:-1], Q0)
    q, qd = Q0.copy(), np.zeros(7)
    for k in range(settings.steps):
        if k % settings.control_every == 0:
            q_ref, qd_ref, qdd_ref = reference[k]
            tau = (oracle.rnea(q, qd, qdd_ref + 400.0 * (q_ref - q) + 40.0 * (qd_ref - qd))
                   + model.damping * qd_ref
                   + model.friction * np.tanh(qd_ref / settings.friction_velocity))
        np.testing.assert_allclose(result.effort[k], tau, atol=1e-9)
        q, qd = oracle_step(oracle, model, settings, q, qd, tau)
        np.testing.assert_allclose(result.q[k + 1], q, atol=1e-9)
    assert np.abs(result.q[1:] - reference[:, 0]).max() < 5e-3


def test_metrics(panda):
    """Peak efforts are the commanded ones; the pose target gets closer; nothing hits a limit
    in these gentle scenarios."""
    reach, wave, push = preview(panda, scenarios(panda), PreviewSettings(horizon=HORIZON), Q0)
    last_command = np.array([5, 5, 5, 5, 1, 1, 1]) * 299 / 300  # the profile at 0.299 s
    np.testing.assert_allclose(push.metrics.peak_effort, last_command)
    assert np.isnan(push.metrics.final_position_error)
    start_error = np.linalg.norm(reach.frame_path[0, :3, 3] - scenarios(panda)[0].position)
    assert reach.metrics.final_position_error < 0.5 * start_error
    assert wave.metrics.final_position_error < 0.02
    for result in (reach, wave, push):
        assert result.metrics.limit_violations.sum() == 0
        assert result.real_time_factor > 0
        assert result.q.shape == (301, 7) and result.frame_path.shape == (301, 4, 4)


def test_threads_answer_as_serial(panda):
    with backend("threads", workers=2) as pool:
        threaded = preview(panda, scenarios(panda), PreviewSettings(horizon=0.05), Q0, pool=pool)
    serial = preview(panda, scenarios(panda), PreviewSettings(horizon=0.05), Q0)
    for a, b in zip(threaded, serial, strict=True):
        np.testing.assert_array_equal(a.q, b.q)


@pytest.mark.parametrize(("change", "field"), [
    ({"frame": "no_such_link"}, "pose_target.frame"),
    ({"position": [0.3, float("nan"), 0.5]}, "pose_target.position"),
    ({"orientation": [0.0, 0.0, 0.0, 0.0]}, "pose_target.orientation"),
    ({"kp": -1.0}, "pose_target.kp"),
])
def test_bad_scenarios_name_the_field(panda, change, field):
    spec = specs(panda)[0]
    spec["pose_target"].update(change)
    with pytest.raises(ScenarioError, match=f"scenario 'reach': {field}"):
        scenario_from_mapping(panda, spec)


@pytest.mark.parametrize(("settings", "field"), [
    ({"horizon": 0.0}, "horizon"), ({"horizon": -1.0}, "horizon"), ({"dt": 0.0}, "dt"),
    ({"dt": float("nan")}, "dt"), ({"integrator": "euler"}, "integrator"),
    ({"forward_dynamics_method": "magic"}, "forward_dynamics_method"),
    ({"control_period": 0.0015}, "control_period"), ({"control_period": -1.0}, "control_period"),
])
def test_bad_settings_name_the_field(settings, field):
    with pytest.raises(ScenarioError, match=f"^{field} "):
        PreviewSettings(**settings)


def test_bad_trajectory_and_kind(panda):
    with pytest.raises(ScenarioError, match=r"joint_trajectory\.controller must be one of "
                       r"joint_impedance, computed_torque; got 'pid'"):
        scenario_from_mapping(panda, {"name": "w", "joint_trajectory": {
            "controller": "pid", "times": [1.0], "positions": [[0.0] * 7]}})
    with pytest.raises(ScenarioError, match=r"joint_trajectory\.positions must have shape"):
        scenario_from_mapping(panda, {"name": "w", "joint_trajectory": {
            "times": [1.0], "positions": [[0.0] * 6]}})
    with pytest.raises(ScenarioError, match="needs exactly one of"):
        scenario_from_mapping(panda, {"name": "x", "pose_target": {}, "torque_profile": {}})
