"""Excitation trajectories (identification.excitation) on the bundled Panda and a generated
chain (a prismatic joint, two continuous ones): the Fourier series against its own finite
differences, at rest at both ends; the optimum within every limit on a grid far denser than
the optimiser's, its efforts from Robot.inverse_dynamics and the friction law, not from the
regressor; a better condition number than the random start's; a clean preview; the same
answer for the same seed; `robodyn excite` writing files that parse, that a
trajectory_msgs/JointTrajectory takes and that `robodyn preview` plays; clear errors."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.cli import main
from robodyn_ros.identification import excitation as excitation_module
from robodyn_ros.identification.base_parameters import base_parameters
from robodyn_ros.identification.errors import IdentificationError
from robodyn_ros.identification.excitation import (
    CHECK_PER_HARMONIC,
    Excitation,
    ExcitationSettings,
    FourierTrajectory,
    condition_number,
    optimise_excitation,
)
from robodyn_ros.identification.excitation_report import (
    EXCITATION_FILE,
    LEAD_IN,
    PARAMS_FILE,
    SCENARIO_FILE,
    TRACKING_TOLERANCE,
    TRAJECTORY_FILE,
    Playback,
    verify_in_preview,
    write_excitation,
)
from robodyn_ros.model.model import FRICTION_VELOCITY

from helpers.robots import CHAIN, PANDA

DENSE = 20_000  # times of the dense grid, over one period
SLACK = 1e-3  # share of a margin limit the trajectory may pass it by between check points
SAMPLES = 30  # waypoints of the previewed and written trajectories
PLAYBACK = Playback(0.01)  # as config/sim.yaml's simulation plays it: a command every 10 ms


@pytest.fixture(scope="module")
def chain() -> Robot:
    return Robot.from_urdf_string(CHAIN)


@pytest.fixture(scope="module")
def excitations(load_robot, chain) -> dict[str, tuple[Robot, Excitation]]:
    """Short, few-harmonic excitations of both robots (a long one is the CLI's business)."""
    panda = load_robot("bundled_panda")
    return {
        "panda": (panda, optimise_excitation(
            panda, ExcitationSettings(2.0, harmonics=3, seed=0, max_iterations=30))),
        "chain": (chain, optimise_excitation(
            chain, ExcitationSettings(2.0, harmonics=3, seed=0, max_iterations=30))),
    }


def dense_times(period: float) -> np.ndarray:
    return np.linspace(0.0, period, DENSE)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 6), st.floats(0.5, 20.0), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_the_series_rests_at_both_ends_and_its_derivatives_are_exact(
    harmonics: int, period: float, joints: int, seed: int
) -> None:
    """q̇(0) = q̈(0) = q̇(T) = q̈(T) = 0, q(0) = q(T), q0 the mean, and q̇, q̈ the central
    differences of q, q̇."""
    rng = np.random.default_rng(seed)
    trajectory = FourierTrajectory.at_rest(period, rng.uniform(-1.0, 1.0, joints),
                                           *rng.normal(size=(2, joints, harmonics - 1)))
    assert trajectory.harmonics == harmonics
    ends = np.array([0.0, period])
    q, qd, qdd = trajectory.states(ends)
    scale = 1.0 + np.abs(trajectory.a).sum() + np.abs(trajectory.b).sum()
    np.testing.assert_allclose(qd, 0.0, atol=1e-12 * scale)
    np.testing.assert_allclose(qdd, 0.0, atol=1e-12 * scale * trajectory.frequency * harmonics)
    np.testing.assert_allclose(q[0], q[1], atol=1e-12 * scale * period)
    period_grid = period * np.arange(4 * harmonics) / (4 * harmonics)
    np.testing.assert_allclose(trajectory.positions(period_grid).mean(axis=0), trajectory.q0,
                               atol=1e-12 * scale * period)
    t = rng.uniform(0.0, period, 50)
    step = 1e-5 * period
    for derivative, integral in ((trajectory.velocities, trajectory.positions),
                                 (trajectory.accelerations, trajectory.velocities)):
        difference = (integral(t + step) - integral(t - step)) / (2.0 * step)
        exact = derivative(t)
        np.testing.assert_allclose(difference, exact, rtol=0.0,
                                   atol=1e-6 * (1.0 + np.abs(exact).max()))


@pytest.mark.parametrize("name", ["panda", "chain"])
def test_the_optimum_keeps_every_limit_on_a_dense_grid(excitations, name: str) -> None:
    """Positions, velocities and efforts (inverse dynamics + d q̇ + f tanh(q̇/ε)) within the
    margin limits up to SLACK between the check grid's points, and within the description's
    limits outright; continuous joints unbounded."""
    robot, excitation = excitations[name]
    model, limits = robot.model, excitation.limits
    q, qd, qdd = excitation.trajectory.states(dense_times(excitation.settings.period))
    tau = (robot.inverse_dynamics(q, qd, qdd) + model.damping * qd
           + model.friction * np.tanh(qd / FRICTION_VELOCITY))
    width = limits.upper - limits.lower
    bounded = np.isfinite(width)
    assert np.all(q[:, bounded] >= limits.lower[bounded] - SLACK * width[bounded])
    assert np.all(q[:, bounded] <= limits.upper[bounded] + SLACK * width[bounded])
    assert np.all(np.abs(qd) <= limits.velocity * (1.0 + SLACK))
    assert np.all(np.abs(tau) <= limits.effort * (1.0 + SLACK))
    assert np.all((q >= model.lower) & (q <= model.upper))
    assert np.all(np.abs(qd) < model.velocity_limit)
    assert np.all(np.abs(tau) < model.effort_limit)
    assert excitation.limits.margin == 0.9 and np.all(limits.effort == 0.9 * model.effort_limit)


@pytest.mark.parametrize("name", ["panda", "chain"])
def test_the_optimum_starts_and_ends_at_rest(excitations, name: str) -> None:
    _, excitation = excitations[name]
    trajectory = excitation.trajectory
    q, qd, qdd = trajectory.states(np.array([0.0, trajectory.period]))
    np.testing.assert_allclose(np.concatenate([qd, qdd]), 0.0, atol=1e-9)
    np.testing.assert_allclose(q[0], q[1], atol=1e-9)


@pytest.mark.parametrize("name", ["panda", "chain"])
def test_the_optimum_excites_better_than_the_random_start(excitations, name: str) -> None:
    """Both condition numbers are those of the base regressor along each trajectory on the
    check grid, recomputed here; the optimum's is at least ten times smaller."""
    robot, excitation = excitations[name]
    period, harmonics = excitation.settings.period, excitation.settings.harmonics
    check = period * np.arange(CHECK_PER_HARMONIC * harmonics) / (CHECK_PER_HARMONIC * harmonics)
    base = base_parameters(robot)
    for trajectory, reported in ((excitation.trajectory, excitation.condition_number),
                                 (excitation.start, excitation.start_condition_number)):
        Y = robot.inverse_dynamics_regressor(*trajectory.states(check))[..., base.independent]
        assert np.linalg.cond(Y.reshape(-1, len(base))) == pytest.approx(reported, rel=1e-9)
    assert excitation.condition_number < excitation.start_condition_number / 10.0
    assert excitation.condition_number == pytest.approx(
        condition_number(robot, excitation.trajectory, check), rel=1e-9)


@pytest.mark.parametrize("name", ["panda", "chain"])
def test_the_preview_plays_the_optimum_within_the_limits(excitations, name: str) -> None:
    robot, excitation = excitations[name]
    verdict = verify_in_preview(robot, excitation.trajectory, SAMPLES, PLAYBACK)
    assert verdict.clean, verdict.problems
    assert verdict.metrics.effort_ratio < 1.0
    assert not verdict.metrics.limit_violations.any()
    assert (verdict.tracking_error < TRACKING_TOLERANCE).all()
    np.testing.assert_array_equal(verdict.effort_limit, robot.model.effort_limit)


def test_a_seed_gives_one_trajectory(chain, excitations) -> None:
    """The chain's excitation again with seed 0 is the same to the bit; seed 1 another."""
    _, first = excitations["chain"]
    again = optimise_excitation(chain, first.settings)
    for field in ("q0", "a", "b"):
        np.testing.assert_array_equal(getattr(again.trajectory, field),
                                      getattr(first.trajectory, field))
    other = optimise_excitation(chain, dataclasses.replace(first.settings, seed=1))
    assert not np.allclose(other.start.q0, first.start.q0)


def test_a_trajectory_beyond_the_limits_fails_the_preview_and_is_not_written(
    tmp_path, excitations
) -> None:
    """Ten times the optimum's velocities from its mean posture: the preview finds efforts
    beyond the limits or joints stopped at them, and write_excitation writes the verdict but
    no JointTrajectory."""
    robot, excitation = excitations["chain"]
    violent = violent_motion(excitation.trajectory)
    verdict = verify_in_preview(robot, violent, SAMPLES, PLAYBACK)
    assert not verdict.clean
    assert all(re.match(r"joint_\d: (commanded effort .* beyond its limit|stopped at a "
                        r"position limit for \d+ steps|left the trajectory by)", problem)
               for problem in verdict.problems)
    written = write_excitation(tmp_path, robot, dataclasses.replace(excitation, trajectory=violent),
                               verdict, SAMPLES)
    assert [path.name for path in written] == [EXCITATION_FILE, SCENARIO_FILE]
    document = yaml.safe_load((tmp_path / EXCITATION_FILE).read_text())
    assert document["preview"]["clean"] is False
    assert document["preview"]["problems"] == list(verdict.problems)


def violent_motion(trajectory: FourierTrajectory) -> FourierTrajectory:
    """Ten times the cosine coefficients of q̇ and no sine ones: still at rest at the ends,
    from the mean posture (inside the limits), far beyond them on the way."""
    return dataclasses.replace(trajectory, a=10.0 * trajectory.a, b=np.zeros_like(trajectory.b))


def test_excite_writes_the_files_and_preview_plays_the_scenario(tmp_path, chain, capsys) -> None:
    """`robodyn excite` on the chain: excitation.yaml gives back the trajectory, the
    JointTrajectory YAML fills a trajectory_msgs message with the robot's joints at monotone
    times from 0 to the period, and `robodyn preview` plays the scenario file."""
    urdf = tmp_path / "chain.urdf"
    urdf.write_text(CHAIN)
    output = tmp_path / "excitation"
    code = main(["excite", "--urdf", str(urdf), "--duration", "1.5", "--harmonics", "2",
                 "--samples", str(SAMPLES), "--max-iterations", "30", "--seed", "3",
                 "--gravity", "0,0,-9.81", "--output", str(output)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert ("preview (computed torque, Kp 400 1/s², Kd 40 1/s, a command every 0.01 s): clean"
            in out), out
    assert "condition number of the base regressor" in out
    assert f"written to {output}" in out
    assert (f"robodyn sim --trajectory {output / TRAJECTORY_FILE} --record BAG --urdf {urdf} "
            "--gravity 0,0,-9.81") in out
    assert f"robodyn preview {urdf} {output / SCENARIO_FILE} --gravity 0,0,-9.81" in out

    document = yaml.safe_load((output / EXCITATION_FILE).read_text())
    assert document["robot"] == chain.model.name
    assert document["joint_names"] == list(chain.joint_names)
    assert (document["period"], document["harmonics"], document["seed"]) == (1.5, 2, 3)
    assert document["condition_number"] < document["start_condition_number"]
    assert document["preview"]["clean"] is True and document["margin"] == 0.9
    joints = [document["joints"][name] for name in chain.joint_names]
    trajectory = FourierTrajectory(1.5, np.array([joint["q0"] for joint in joints]),
                                   np.array([joint["a"] for joint in joints]),
                                   np.array([joint["b"] for joint in joints]))

    message = yaml.safe_load((output / TRAJECTORY_FILE).read_text())
    assert message["joint_names"] == list(chain.joint_names)
    times = np.array([point["time_from_start"]["sec"] + 1e-9 * point["time_from_start"]["nanosec"]
                      for point in message["points"]]) - LEAD_IN
    assert times[0] == 0.0 and times[-1] == pytest.approx(1.5) and len(times) == SAMPLES + 1
    assert np.all(np.diff(times) > 0.0)
    for field, states in zip(("positions", "velocities", "accelerations"),
                             trajectory.states(times), strict=True):
        np.testing.assert_allclose([point[field] for point in message["points"]], states,
                                   atol=1e-6)
    parameters = yaml.safe_load((output / PARAMS_FILE).read_text())
    sim, controller = (parameters[f"/**/{node}"]["ros__parameters"]
                       for node in ("sim_node", "controller_node"))
    assert (sim["publish_period"], sim["dt"], sim["lockstep"]) == (0.01, 0.001, True)
    np.testing.assert_allclose(sim["initial_positions"], trajectory.positions(np.zeros(1))[0],
                               atol=1e-6)
    assert controller["controller"] == "computed_torque"
    assert controller["controller_parameters"] == {"kp": 400.0, "kd": 40.0}
    assert controller["joints"] == sim["joints"] == list(chain.joint_names)
    assert document["preview"]["controller"] == "computed_torque"
    assert document["preview"]["control_period"] == 0.01
    assert max(document["preview"]["tracking_error"]) < TRACKING_TOLERANCE
    filled = joint_trajectory_of(message)
    assert list(filled.joint_names) == list(chain.joint_names)
    assert filled.points[-1].time_from_start.sec == 6
    assert filled.points[-1].time_from_start.nanosec == 500_000_000

    assert main(["preview", str(urdf), str(output / SCENARIO_FILE), "--no-plots",
                 "--backend", "serial"]) == 0
    table = capsys.readouterr().out
    assert "horizon 1.5 s" in table and "excitation" in table


def joint_trajectory_of(message: dict) -> object:
    """A trajectory_msgs/msg/JointTrajectory filled from its YAML form, as `ros2 topic pub`
    fills it: the constructors refuse a field the message does not have."""
    builtin = pytest.importorskip("builtin_interfaces.msg")
    std = pytest.importorskip("std_msgs.msg")
    trajectory = pytest.importorskip("trajectory_msgs.msg")
    header = message["header"]
    points = [trajectory.JointTrajectoryPoint(
        **{**point, "time_from_start": builtin.Duration(**point["time_from_start"])})
        for point in message["points"]]
    return trajectory.JointTrajectory(
        header=std.Header(stamp=builtin.Time(**header["stamp"]), frame_id=header["frame_id"]),
        joint_names=message["joint_names"], points=points)


def test_excite_exits_1_when_the_preview_finds_the_limits_crossed(
    tmp_path, chain, excitations, monkeypatch, capsys
) -> None:
    """An optimiser that gave a violent motion: the preview's problems, exit code 1, no
    JointTrajectory file."""
    _, excitation = excitations["chain"]
    violent = dataclasses.replace(excitation, trajectory=violent_motion(excitation.trajectory))
    monkeypatch.setattr(excitation_module, "optimise_excitation", lambda *_: violent)
    urdf = tmp_path / "chain.urdf"
    urdf.write_text(CHAIN)
    code = main(["excite", "--urdf", str(urdf), "--duration", "2", "--output",
                 str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 1
    assert "): OUTSIDE THE LIMITS" in captured.out
    assert "the preview finds the trajectory outside the limits" in captured.err
    assert not (tmp_path / "out" / TRAJECTORY_FILE).exists()
    assert (tmp_path / "out" / EXCITATION_FILE).exists()


def limited(urdf: str, joint: str, **limits: str) -> str:
    """The URDF with attributes of `joint`'s <limit> replaced."""
    start = urdf.index(f'<joint name="{joint}"')
    end = urdf.index("</joint>", start)
    element = urdf[start:end]
    for attribute, value in limits.items():
        element = re.sub(rf'{attribute}="[^"]*"', f'{attribute}="{value}"', element)
    return urdf[:start] + element + urdf[end:]


@pytest.mark.parametrize(("options", "urdf", "message"), [
    (["--duration", "0"], None, "the duration must be a number of seconds > 0; got 0.0"),
    (["--duration", "-2"], None, "the duration must be a number of seconds > 0; got -2.0"),
    (["--duration", "nan"], None, "the duration must be a number of seconds > 0; got nan"),
    (["--duration", "2", "--harmonics", "0"], None, "harmonics must be at least 2"),
    (["--duration", "2", "--harmonics", "1"], None, "harmonics must be at least 2"),
    (["--duration", "2", "--margin", "0"], None, "the margin must be in (0, 1]; got 0.0"),
    (["--duration", "2", "--margin", "1.5"], None, "the margin must be in (0, 1]; got 1.5"),
    (["--duration", "2", "--samples", "0"], None, "--samples must be at least 1; got 0"),
    (["--duration", "2", "--rate", "0"], None, "--rate must be a number of waypoints per second"),
    (["--duration", "2", "--control-period", "0.0125"], None,
     "the control period must be 0 (every step) or a whole number of steps of 0.001 s; got "
     "0.0125"),
    (["--duration", "2", "--control-period", "-0.01"], None, "the control period must be"),
    (["--duration", "2"], "missing", "nowhere.urdf"),
    (["--duration", "2"], limited(PANDA, "panda_joint3", velocity="0"),
     "the limits of panda_joint3 leave no room to move"),
    (["--duration", "2"], limited(PANDA, "panda_joint4", lower="-1.0", upper="-1.0"),
     "the limits of panda_joint4 leave no room to move"),
    (["--duration", "2"], limited(PANDA, "panda_joint2", effort="1"),
     "no feasible start in 20 random postures: the efforts"),
], ids=["duration-0", "duration-negative", "duration-nan", "harmonics-0", "harmonics-1",
        "margin-0", "margin-above-1", "samples-0", "rate-0", "control-period-fraction",
        "control-period-negative", "unknown-urdf", "no-velocity",
        "no-range", "too-weak"])
def test_bad_input_is_a_clear_error(tmp_path, capsys, options, urdf, message) -> None:
    path = tmp_path / "nowhere.urdf"
    if urdf is not None and urdf != "missing":
        path.write_text(urdf)
    arguments = ["excite", *options, "--output", str(tmp_path / "out")]
    if urdf is not None:
        arguments[1:1] = ["--urdf", str(path)]
    assert main(arguments) == 1
    err = capsys.readouterr().err
    assert err.startswith("robodyn: ") and message in err, err
    assert not (tmp_path / "out").exists()


def test_settings_refuse_what_cannot_be_optimised() -> None:
    with pytest.raises(IdentificationError, match="grid_points must be at least 2 per harmonic"):
        ExcitationSettings(1.0, harmonics=3, grid_points=5)
    with pytest.raises(IdentificationError, match="max_iterations must be ≥ 1"):
        ExcitationSettings(1.0, max_iterations=0)
