"""`robodyn bag analyze` on bags written at test time (sqlite3 and mcap) from a known
trajectory, with efforts from Pinocchio's RNEA plus Gaussian noise of known σ: the analysis
recovers σ as the residual RMS, its per-sample quantities match Pinocchio and dense references,
its output bag holds what Robot computes, and bad bags give errors naming what is wrong."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from robodyn_ros.bag import (
    AnalysisOptions,
    BagError,
    BagWarning,
    JointStateSeries,
    analyze,
    analyze_bag,
    read_joint_states,
    write_joint_states,
)
from robodyn_ros.bag.plots import analysis_figures
from robodyn_ros.bag.reading import open_bag
from robodyn_ros.bag.typestore import typestore
from robodyn_ros.bag.writing import header, open_writer
from robodyn_ros.cli import main
from robodyn_ros.figures.plotting import CLIPPED, EDGE, pyplot
from robodyn_ros.parallel import backend
from robodyn_ros.testing.trajectories import sine_trajectory

from helpers.cases import BUNDLED_PANDA, case_named
from helpers.figures import drawn, legend_labels
from helpers.tolerances import assert_as_serial

SAMPLES, RATE = 2000, 500.0
SIGMA = 0.2  # N·m, the effort noise the residual RMS must recover
RMS_TOLERANCE = 0.08  # relative: the RMS of 2000 samples scatters by σ/√4000 ≈ 1.6 %
DERIVATIVE_ATOL = 1e-3  # N·m: τ from Savitzky-Golay q̈ against τ at the exact q̈ (σ = 0.2)
SECOND_DERIVATIVE_ATOL = 0.05  # N·m: the cubic fit's q̈ bias (ω⁴ terms) over 11 samples at 500 Hz
WINDOW = 11  # samples
TIP = "panda_hand_tcp"
STORAGES = ("sqlite3", "mcap")


@pytest.fixture(scope="module")
def case():
    return case_named("bundled_panda")


@pytest.fixture(scope="module")
def recorded(case):
    """The known trajectory, the exact RNEA torques (Pinocchio) and the noisy efforts."""
    trajectory = sine_trajectory(case.robot, SAMPLES, RATE, seed=3)
    exact = np.array([
        case.oracle.rnea(q, qd, qdd)
        for q, qd, qdd in zip(trajectory.q, trajectory.qd, trajectory.qdd, strict=True)
    ])
    noise = np.random.default_rng(4).normal(0.0, SIGMA, exact.shape)
    return trajectory, exact, exact + noise


def write_bag(path, storage, case, recorded, *, velocity=True, order=None, stamps=None):
    """The recorded run as a bag, joints in reversed order (a driver's own order); `order`:
    the samples in the order the bag records them (at increasing times)."""
    trajectory, _, effort = recorded
    names = list(reversed(case.robot.joint_names))
    flip = slice(None, None, -1)
    rows = slice(None) if order is None else order
    write_joint_states(path, storage,
                       JointStateSeries(names,
                                        trajectory.stamps[rows] if stamps is None else stamps,
                                        trajectory.q[rows][:, flip],
                                        trajectory.qd[rows][:, flip] if velocity else None,
                                        effort[rows][:, flip]),
                       recorded=trajectory.stamps)
    return path


@pytest.mark.parametrize("storage", STORAGES)
def test_residual_rms_recovers_the_noise(tmp_path, case, recorded, storage) -> None:
    bag = write_bag(tmp_path / "run", storage, case, recorded)
    options = AnalysisOptions(frames=(TIP,), output=tmp_path / "out", plots=storage == "mcap")
    outputs = analyze_bag(bag, case.robot, options)
    analysis = outputs.analysis
    trajectory, exact, effort = recorded

    np.testing.assert_allclose(analysis.rms_residual(), SIGMA, rtol=RMS_TOLERANCE)
    np.testing.assert_allclose(analysis.torque, exact, atol=DERIVATIVE_ATOL, rtol=0)
    np.testing.assert_array_equal(analysis.run.stamps, trajectory.stamps)
    check_against_references(case, analysis, trajectory)

    report = outputs.report
    assert all(name in report for name in case.robot.joint_names)
    assert "worst instants" in report and "cond(M)" in report
    check_csv(outputs.folder / "samples.csv", analysis)
    if storage == "mcap":
        pngs = sorted(p.name for p in outputs.folder.glob("*.png"))
        assert pngs == sorted(["energy.png", "inertia_eigenvalues_panda_hand_tcp.png",
                               "mass_matrix_condition.png", "torque_residual.png"])
        assert all((outputs.folder / p).stat().st_size > 10_000 for p in pngs)
    check_dynamics_bag(outputs.folder / "dynamics", storage, case.robot, analysis, effort)


def check_against_references(case, analysis, trajectory) -> None:
    """cond(M), energies, Λ's eigenvalues and manipulability against Pinocchio, every 97th
    sample."""
    oracle = case.oracle
    for k in range(0, SAMPLES, 97):
        q, qd = trajectory.q[k], analysis.velocity[k]
        M = oracle.mass_matrix(q)
        assert analysis.mass_matrix_condition[k] == pytest.approx(np.linalg.cond(M), rel=1e-8)
        assert analysis.kinetic_energy[k] == pytest.approx(oracle.kinetic_energy(q, qd), rel=1e-10)
        assert analysis.potential_energy[k] == pytest.approx(oracle.potential_energy(q), abs=1e-9)
        Lambda = oracle.operational_space_inertia(q, TIP)
        frame = analysis.frames[0]
        np.testing.assert_allclose(
            frame.inertia_eigenvalues[k], np.linalg.eigvalsh(Lambda), rtol=1e-7
        )
        J = oracle.jacobian(q, TIP)
        assert frame.manipulability[k] == pytest.approx(np.sqrt(np.linalg.det(J @ J.T)), rel=1e-9)
        for rows, eigenvalues in ((slice(0, 3), frame.translational_inertia),
                                  (slice(3, 6), frame.rotational_inertia)):
            block = J[rows] @ np.linalg.solve(M, J[rows].T)  # that of Λ⁻¹ = J M⁻¹ Jᵀ
            np.testing.assert_allclose(eigenvalues[k], np.linalg.eigvalsh(np.linalg.inv(block)),
                                       rtol=1e-7)
    np.testing.assert_allclose(analysis.velocity, trajectory.qd, rtol=0, atol=0)  # recorded


def check_csv(path, analysis) -> None:
    table = np.genfromtxt(path, delimiter=",", names=True)
    assert len(table) == SAMPLES
    joint = analysis.joint_names[3]
    np.testing.assert_allclose(table[f"residual_{joint}"], analysis.residual[:, 3], rtol=1e-8)
    np.testing.assert_allclose(table["cond_M"], analysis.mass_matrix_condition, rtol=1e-8)
    np.testing.assert_allclose(table[f"rotational_inertia2_kgm2_{TIP}"],
                               analysis.frames[0].rotational_inertia[:, 2], rtol=1e-8)
    np.testing.assert_allclose(table["time_s"], analysis.run.times, atol=1e-9)


def check_dynamics_bag(path, storage, robot, analysis, effort) -> None:
    """The output bag, read back: one JointSpaceDynamics and one OperationalSpaceDynamics per
    joint state, at its stamp, holding what Robot computes there."""
    assert any(path.glob("*.db3" if storage == "sqlite3" else "*.mcap"))
    store, n = typestore(), robot.nv
    joint_space, operational = [], []
    with open_bag(path) as reader:
        for connection, recorded, raw in reader.messages():
            message = store.deserialize_cdr(raw, connection.msgtype)
            stamp = message.header.stamp.sec * 10**9 + message.header.stamp.nanosec
            assert stamp == recorded
            target = joint_space if connection.topic == "dynamics/joint_space" else operational
            target.append((stamp, message))
    assert [s for s, _ in joint_space] == analysis.run.stamps.tolist()
    assert [s for s, _ in operational] == analysis.run.stamps.tolist()
    for k in (0, 777, SAMPLES - 1):
        q, qd = analysis.run.position[k], analysis.velocity[k]
        message = joint_space[k][1]
        assert list(message.joint_names) == list(robot.joint_names)
        np.testing.assert_array_equal(message.position, q)
        np.testing.assert_allclose(message.mass_matrix.reshape(n, n), robot.mass_matrix(q),
                                   rtol=1e-12)
        np.testing.assert_allclose(message.bias_forces, robot.bias_forces(q, qd), rtol=1e-12)
        np.testing.assert_allclose(message.effort, effort[k], rtol=1e-12)
        np.testing.assert_allclose(message.acceleration,
                                   robot.forward_dynamics(q, qd, effort[k]), rtol=1e-10)
        frame = operational[k][1]
        task = robot.operational_space(q, qd, TIP, singular_threshold=frame.singular_threshold)
        assert frame.frame == TIP and frame.rank == task.rank
        np.testing.assert_allclose(frame.inertia.reshape(6, 6), task.Lambda, rtol=1e-10)
        np.testing.assert_allclose(frame.jacobian.reshape(6, n), task.J, rtol=1e-12, atol=1e-15)
        position = frame.pose.position
        np.testing.assert_allclose([position.x, position.y, position.z],
                                   robot.frame_pose(q, TIP)[:3, 3], rtol=1e-12)


def test_positions_only_are_differentiated(tmp_path, case, recorded) -> None:
    """No velocities recorded: q̇ and q̈ both from Savitzky-Golay; the residual still gives σ."""
    bag = write_bag(tmp_path / "run", "sqlite3", case, recorded, velocity=False)
    run = read_joint_states(bag, "/joint_states", case.robot.joint_names)
    assert run.velocity is None
    analysis = analyze(case.robot, run, window=WINDOW)
    trajectory, exact, _ = recorded
    np.testing.assert_allclose(analysis.velocity, trajectory.qd, atol=1e-4)  # edges: 5e-5
    inside = slice(WINDOW, -WINDOW)  # the filter is least accurate within a window of the ends
    np.testing.assert_allclose(analysis.torque[inside], exact[inside], atol=SECOND_DERIVATIVE_ATOL)
    np.testing.assert_allclose(analysis.torque, exact, atol=0.1)
    np.testing.assert_allclose(analysis.rms_residual(), SIGMA, rtol=RMS_TOLERANCE)


@pytest.fixture(scope="module")
def differentiated(tmp_path_factory, case, recorded):
    """The analysis of a run recorded without velocities, with TIP: its figures by name."""
    bag = write_bag(tmp_path_factory.mktemp("plots") / "run", "mcap", case, recorded,
                    velocity=False)
    run = read_joint_states(bag, "/joint_states", case.robot.joint_names)
    return analyze(case.robot, run, frames=(TIP,))


def test_every_plot_has_units_and_a_legend_where_lines_share_an_axis(case, differentiated):
    figures = analysis_figures(case.robot, differentiated)
    assert set(figures) == {"torque_residual", "mass_matrix_condition", "energy",
                            f"inertia_eigenvalues_{TIP}"}
    try:
        for name, figure in figures.items():
            for axes in figure.axes:
                assert re.fullmatch(r".+ \[.+\]", axes.get_ylabel()), (name, axes.get_ylabel())
            assert figure.axes[-1].get_xlabel() == "time [s]", name
        residual = figures["torque_residual"]
        assert [axes.get_ylabel() for axes in residual.axes] == ["residual [N·m]"] * 7
        assert [axes.get_title(loc="left") for axes in residual.axes] == list(
            case.robot.joint_names)
        for axes in residual.axes:  # the first and last WINDOW // 2 samples, shaded
            assert len(drawn(axes, EDGE)) == 2
        assert "derivative edge" in legend_labels(residual)
        assert {"kinetic", "potential", "total", "derivative edge"} <= legend_labels(
            figures["energy"])
        translational, rotational = figures[f"inertia_eigenvalues_{TIP}"].axes
        assert translational.get_ylabel() == "mass [kg]"
        assert rotational.get_ylabel() == "inertia [kg·m²]"
        frame = differentiated.frames[0]
        for axes, eigenvalues in ((translational, frame.translational_inertia),
                                  (rotational, frame.rotational_inertia)):
            lines = np.column_stack([line.get_ydata() for line in axes.get_lines()])
            np.testing.assert_array_equal(lines, eigenvalues)
        assert {"smallest eigenvalue", "largest eigenvalue"} <= legend_labels(
            figures[f"inertia_eigenvalues_{TIP}"])
    finally:
        for figure in figures.values():
            pyplot().close(figure)


def test_an_edge_spike_does_not_set_the_residual_range(case, differentiated) -> None:
    """A -22 N·m residual at the first sample (what a differentiation's edge can give): the
    range stays that of the bulk (σ = 0.2), the spike marked where it leaves the axis."""
    residual = differentiated.residual.copy()
    residual[0, 3] = -22.0
    spiked = dataclasses.replace(differentiated, residual=residual)
    figure = analysis_figures(case.robot, spiked)["torque_residual"]
    try:
        axes = figure.axes[3]
        low, high = axes.get_ylim()
        bulk = np.diff(np.percentile(residual[:, 3], [1, 99]))[0]
        assert bulk / (high - low) > 0.6, (low, high)
        assert any(differentiated.run.times[0] in line.get_xdata()
                   for line in drawn(axes, CLIPPED))
        assert "beyond the axis" in legend_labels(figure)
    finally:
        pyplot().close(figure)


@pytest.mark.parametrize("name", ["processes", "threads"])
def test_workers_answer_as_serial(tmp_path, case, recorded, name: str) -> None:
    """Time chunks computed whole in spawned worker processes, or at once on threads (the
    kernels' GIL-free builds), equal the serial analysis."""
    bag = write_bag(tmp_path / "run", "mcap", case, recorded)
    run = read_joint_states(bag, "/joint_states", case.robot.joint_names)
    serial = analyze(case.robot, run, frames=[TIP], chunk=300)
    with backend(name, workers=2) as pool:
        parallel = analyze(case.robot, run, frames=[TIP], chunk=300, pool=pool)
    for field in ("torque", "residual", "mass_matrix_condition", "kinetic_energy"):
        assert_as_serial(getattr(parallel, field), getattr(serial, field), name, field)
    # the eigenvalues of Λ carry its condition number (up to ~1e2 here) on top
    assert_as_serial(parallel.frames[0].inertia_eigenvalues,
                     serial.frames[0].inertia_eigenvalues, name, "inertia_eigenvalues", 1e-10)


def test_command_writes_the_report_and_csv(tmp_path, case, recorded, capsys) -> None:
    bag = write_bag(tmp_path / "run", "sqlite3", case, recorded)
    out = tmp_path / "out"
    assert main(["bag", "analyze", str(bag), "--urdf", str(BUNDLED_PANDA), "--window", "15",
                 "--output", str(out), "--no-plots", "--no-bag", "--progress"]) == 0
    printed = capsys.readouterr()
    assert "over 15 samples" in printed.out
    assert printed.out.startswith((out / "report.txt").read_text())
    assert f"dynamics [{'#' * 30}] 100%  {SAMPLES}/{SAMPLES}" in printed.err
    assert "ETA 0:00:00" in printed.err
    assert sorted(p.name for p in out.iterdir()) == ["report.txt", "samples.csv"]
    # a second run does not overwrite the first
    assert main(["bag", "analyze", str(bag), "--urdf", str(BUNDLED_PANDA),
                 "--output", str(out)]) == 1
    assert "already holds an analysis" in capsys.readouterr().err


def test_missing_topic_lists_the_topics(tmp_path, case, recorded) -> None:
    bag = write_bag(tmp_path / "run", "mcap", case, recorded)
    listed = r"the bag's topics: /joint_states \(sensor_msgs/msg/JointState\)"
    with pytest.raises(BagError, match=rf"no topic '/arm/joint_states'; {listed}"):
        read_joint_states(bag, "/arm/joint_states", case.robot.joint_names)
    # the command says the same and fails
    assert main(["bag", "analyze", str(bag), "--urdf", str(BUNDLED_PANDA), "--topic", "/js",
                 "--output", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()


def test_messages_of_mixed_layouts_are_read_one_by_one(tmp_path, case, recorded) -> None:
    """Name order changing between messages and efforts in only some: every message is
    deserialised on its own (no common byte layout) and lands in the URDF's joint order."""
    trajectory, _, effort = recorded
    store = typestore()
    JointState = store.types["sensor_msgs/msg/JointState"]
    names = list(case.robot.joint_names)
    with open_writer(tmp_path / "mixed", "mcap") as writer:
        connection = writer.add_connection("/joint_states", JointState.__msgtype__,
                                           typestore=store)
        for k, stamp in enumerate(trajectory.stamps.tolist()):
            order = slice(None, None, -1 if k % 2 else 1)
            q, qd, tau = (np.ascontiguousarray(x[k][order]) for x in (trajectory.q,
                                                                        trajectory.qd, effort))
            message = JointState(header=header(stamp, ""), name=names[order], position=q,
                                 velocity=qd, effort=tau if k % 3 else np.empty(0))
            writer.write(connection, stamp, store.serialize_cdr(message, JointState.__msgtype__))
    with pytest.warns(BagWarning, match=f"{SAMPLES // 3 + 1} of {SAMPLES} messages have no effort"):
        run = read_joint_states(tmp_path / "mixed", "/joint_states", names)
    np.testing.assert_array_equal(run.position, trajectory.q)
    np.testing.assert_array_equal(run.velocity, trajectory.qd)
    with_effort = np.arange(SAMPLES) % 3 != 0
    np.testing.assert_array_equal(run.effort[with_effort], effort[with_effort])
    assert np.isnan(run.effort[~with_effort]).all()


def test_joints_not_in_the_urdf(tmp_path, case, recorded) -> None:
    trajectory = recorded[0]
    names = [f"ur_joint{k}" for k in range(case.robot.nv)]
    write_joint_states(tmp_path / "ur", "sqlite3",
                       JointStateSeries(names, trajectory.stamps, trajectory.q))
    unknown = r"^bag .*ur, topic '/joint_states': the messages name joints ur_joint0.*; the " \
        r"URDF's joints panda_joint1.* are not among them, and ur_joint0.* are not in the URDF$"
    with pytest.raises(BagError, match=unknown):
        read_joint_states(tmp_path / "ur", "/joint_states", case.robot.joint_names)
    extra = [*case.robot.joint_names, "gripper_joint"]
    state = np.column_stack([trajectory.q, np.zeros(SAMPLES)])
    write_joint_states(tmp_path / "extra", "sqlite3",
                       JointStateSeries(extra, trajectory.stamps, state))
    with pytest.warns(BagWarning, match="gripper_joint"):
        run = read_joint_states(tmp_path / "extra", "/joint_states", case.robot.joint_names)
    np.testing.assert_array_equal(run.position, trajectory.q)


@pytest.mark.parametrize("storage", STORAGES)
def test_truncated_bag_is_an_error(tmp_path, case, recorded, storage) -> None:
    bag = write_bag(tmp_path / "run", storage, case, recorded)
    (data,) = bag.glob("*.db3" if storage == "sqlite3" else "*.mcap")
    size = data.stat().st_size
    with data.open("r+b") as file:
        file.truncate(size // 2)
    with pytest.raises(BagError, match=rf"bag {bag}.*(truncated|damaged)"):
        read_joint_states(bag, "/joint_states", case.robot.joint_names)


def test_stamps_out_of_order_are_sorted_with_a_warning(tmp_path, case, recorded) -> None:
    order = np.arange(SAMPLES)
    order[[100, 101]] = order[[101, 100]]  # recorded in the wrong order
    bag = write_bag(tmp_path / "run", "sqlite3", case, recorded, order=order)
    with pytest.warns(BagWarning, match="backwards 1 time"):
        run = read_joint_states(bag, "/joint_states", case.robot.joint_names)
    trajectory = recorded[0]
    np.testing.assert_array_equal(run.stamps, trajectory.stamps)
    np.testing.assert_array_equal(run.position, trajectory.q)


def test_repeated_stamps_are_an_error(tmp_path, case, recorded) -> None:
    stamps = recorded[0].stamps.copy()
    stamps[500] = stamps[499]
    bag = write_bag(tmp_path / "run", "mcap", case, recorded, stamps=stamps)
    with pytest.raises(BagError, match=r"repeat an earlier header stamp.*messages 499 and 500"):
        read_joint_states(bag, "/joint_states", case.robot.joint_names)


def test_bad_window_and_missing_bag(tmp_path, case, recorded) -> None:
    bag = write_bag(tmp_path / "run", "sqlite3", case, recorded, velocity=False)
    run = read_joint_states(bag, "/joint_states", case.robot.joint_names)
    with pytest.raises(BagError, match=r"window must be an odd number.*got 10"):
        analyze(case.robot, run, window=10)
    with pytest.raises(ValueError, match=r"unknown frame 'wrist_cam'.*panda_hand_tcp"):
        analyze_bag(bag, case.robot, AnalysisOptions(frames=("wrist_cam",), output=tmp_path / "o"))
    with pytest.raises(BagError, match=r"nowhere: not a rosbag2 folder"):
        read_joint_states(tmp_path / "nowhere", "/joint_states", case.robot.joint_names)


def write_messages(path, messages) -> None:
    """A bag of JointState messages given as (stamp ns, names, position, velocity, effort),
    each recorded at its stamp, on /joint_states (mcap)."""
    store = typestore()
    JointState = store.types["sensor_msgs/msg/JointState"]
    with open_writer(path, "mcap") as writer:
        connection = writer.add_connection("/joint_states", JointState.__msgtype__,
                                           typestore=store)
        for stamp, names, *fields in messages:
            position, velocity, effort = (np.ascontiguousarray(x, dtype=float) for x in fields)
            message = JointState(header=header(stamp, ""), name=list(names), position=position,
                                 velocity=velocity, effort=effort)
            writer.write(connection, stamp, store.serialize_cdr(message, JointState.__msgtype__))


@pytest.mark.parametrize(("names", "efforts"), [(7, 4), (9, 7)], ids=["short", "long"])
def test_effort_lengths_other_than_the_names_are_refused(tmp_path, case, recorded, names,
                                                         efforts) -> None:
    """Messages of one layout (read together) whose effort has another length than the
    names: an error naming the topic, the message, the field and both counts."""
    trajectory = recorded[0]
    joints = [*case.robot.joint_names, "gripper_joint1", "gripper_joint2"][:names]
    state = np.column_stack([trajectory.q, np.zeros((SAMPLES, 2))])[:, :names]
    bag = tmp_path / "run"
    write_joint_states(bag, "sqlite3",
                       JointStateSeries(joints, trajectory.stamps, state,
                                        effort=recorded[2][:, :efforts]))
    stamp = trajectory.stamps[0]
    with pytest.raises(BagError, match=rf"^bag {bag}, topic '/joint_states': message 0 \(stamp "
                                       rf"{stamp} ns\).* has {efforts} effort values for "
                                       rf"{names} names$"):
        read_joint_states(bag, "/joint_states", case.robot.joint_names)


def test_a_short_field_in_messages_of_mixed_layouts_is_refused(tmp_path, case, recorded) -> None:
    trajectory, _, effort = recorded
    names = case.robot.joint_names
    messages = [(stamp, names, trajectory.q[k], trajectory.qd[k], effort[k])
                for k, stamp in enumerate(trajectory.stamps[:10].tolist())]
    messages[3] = (*messages[3][:4], effort[3][:4])  # 4 efforts for 7 names
    messages[5] = (messages[5][0], names[::-1], *(x[::-1] for x in messages[5][2:]))
    write_messages(tmp_path / "run", messages)
    with pytest.raises(BagError, match=rf"topic '/joint_states': message 3 \(stamp "
                                       rf"{messages[3][0]} ns\): effort has 4 entries for 7 "
                                       "names$"):
        read_joint_states(tmp_path / "run", "/joint_states", names)


@pytest.mark.parametrize("lead", [0, 200_000], ids=["one-stamp", "first-half-earlier"])
def test_split_messages_are_merged_by_name(tmp_path, case, recorded, lead) -> None:
    """Each sample in two messages (panda_joint1-4, then 5-7 with a gripper joint not in the
    URDF), as one driver for two groups publishes it: merged by name into one sample per
    state, at the stamp of its last message; then the analysis recovers σ as from one
    message per sample."""
    trajectory, _, effort = recorded
    names = np.array(case.robot.joint_names)
    head, tail = slice(0, 4), slice(4, 7)
    messages = []
    for k, stamp in enumerate(trajectory.stamps.tolist()):
        fields = (trajectory.q[k], trajectory.qd[k], effort[k])
        messages.append((stamp - lead, names[head], *(x[head] for x in fields)))
        messages.append((stamp, [*names[tail], "gripper_joint"],
                         *(np.append(x[tail], 0.0) for x in fields)))
    write_messages(tmp_path / "split", messages)
    with pytest.warns(BagWarning, match="gripper_joint"):
        run = read_joint_states(tmp_path / "split", "/joint_states", case.robot.joint_names)
    np.testing.assert_array_equal(run.stamps, trajectory.stamps)
    np.testing.assert_array_equal(run.position, trajectory.q)
    np.testing.assert_array_equal(run.velocity, trajectory.qd)
    np.testing.assert_array_equal(run.effort, effort)
    analysis = analyze(case.robot, run, window=WINDOW)
    np.testing.assert_allclose(analysis.rms_residual(), SIGMA, rtol=RMS_TOLERANCE)


def test_a_half_that_falls_silent_is_an_error(tmp_path, case, recorded) -> None:
    """The second half stops after 100 samples while the first goes on: past 0.5 s without
    them, its joints are named, as a node refuses such a state."""
    trajectory = recorded[0]
    names = case.robot.joint_names
    messages = []
    for k, stamp in enumerate(trajectory.stamps.tolist()):
        q = trajectory.q[k]
        messages.append((stamp, names[:4], q[:4], [], []))
        if k < 100:
            messages.append((stamp + 1000, names[4:], q[4:], [], []))
    write_messages(tmp_path / "silent", messages)
    with pytest.raises(BagError, match=r"message \d+ \(stamp \d+ ns\): no state of joint\(s\) "
                                       r"panda_joint5 \(heard 0.50\d s ago\), panda_joint6"):
        read_joint_states(tmp_path / "silent", "/joint_states", names)
