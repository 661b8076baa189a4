"""`robodyn bag identify --floating-base` on bags written at test time: a hidden "true" Solo12
(its bodies' masses ×0.8–1.25, centres of mass moved up to 2 cm, inertias rescaled; armature,
viscous and Coulomb friction and torque offsets on its joints, none on the base;
testing.perturbed_robot) moves its base and its joints along sums of sines while the world
pushes on its feet and a crane holds its base. Everything the bag holds comes from Pinocchio
and numpy, not from this package: the base's pose integrated on SE(3) from its twist, the
generalized forces of the true robot (pinocchio.rnea), the feet's wrenches (smooth, random)
and the crane's wrench at the base that, with them, makes up the base's six rows; the joints'
efforts are what is left, plus friction, offsets and Gaussian noise of SIGMA. The bag holds
joint_states, the base's nav_msgs/Odometry and the wrenches as geometry_msgs/WrenchStamped
(the feet's on one topic, the crane's on another), each with a noise of its own.

The identification must find the true robot again: base parameters within the Šidák bound of
their standard errors, the total mass to 0.5 %, a held-out run's joint efforts predicted to 1.1
σ RMS; a bad odometry or wrench is refused naming the topic and what is wrong."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from robodyn_ros import Robot
from robodyn_ros.bag import BagError, BagWarning
from robodyn_ros.bag.reading import read_joint_states
from robodyn_ros.bag.robot_run import read_odometry, robot_run
from robodyn_ros.bag.typestore import typestore
from robodyn_ros.bag.writing import JointStateSeries, add_joint_states, header, open_writer
from robodyn_ros.cli import main
from robodyn_ros.identification.base_parameters import base_parameters
from robodyn_ros.identification.from_bag import IdentificationOptions, identify_bag
from robodyn_ros.identification.identify import unactuated_rows
from robodyn_ros.model import URDFWarning
from robodyn_ros.model.model import FRICTION_VELOCITY
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.floating_pinocchio_oracle import FloatingPinocchioOracle
from robodyn_ros.testing.perturbed_robot import perturbed_parameters
from robodyn_ros.testing.trajectories import sine_trajectory

SIGMA = 0.05  # N·m, the joint effort noise
FORCE_SIGMA, TORQUE_SIGMA = 0.2, 0.02  # N and N·m, the wrench noise
RATE, SAMPLES = 250.0, 3000  # 12 s a run
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
CRANE = "base_link"
START = 10**18


def solo12(floating_base: bool) -> Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)  # the sensor links' inertias
        return Robot.from_urdf(example_robot_urdf("solo12"), floating_base=floating_base)


@pytest.fixture(scope="module")
def hidden(tmp_path_factory):
    """The description, the true π and the fit and validation bags of the true robot."""
    robot = solo12(floating_base=True)
    true = perturbed_parameters(robot, seed=11)
    bodies, joints = true[: 10 * robot.nv].reshape(-1, 10), true[10 * robot.nv :].reshape(-1, 4)
    joints[:6] = 0.0  # no motor on the base: no armature, friction or offset
    oracle = FloatingPinocchioOracle(str(example_robot_urdf("solo12")), robot.joint_names)
    body_rows = [5, *range(6, robot.nv)]  # the free flyer's body is on its sixth row
    oracle = oracle.with_parameters(bodies[body_rows], joints[:, 0])
    folder = tmp_path_factory.mktemp("floating")
    bags = {name: write_run(folder / name, robot, oracle, joints, seed)
            for name, seed in (("fit", 1), ("validation", 2))}
    return robot, true, bags


def base_motion(seed: int) -> tuple[np.ndarray, ...]:
    """The base's pose (B, 7), twist and its derivative (B, 6): sums of sines of the twist
    in the base frame, integrated on SE(3) at the midpoints."""
    rng = np.random.default_rng(seed)
    amplitude = np.array([0.4, 0.4, 0.3, 0.8, 0.8, 1.0])[:, None] * rng.uniform(0.3, 0.6, (6, 2))
    omega = 2.0 * np.pi * rng.uniform(0.2, 1.0, (6, 2))
    phase = rng.uniform(0.0, 2.0 * np.pi, (6, 2))

    def twist(t: float) -> np.ndarray:
        return (amplitude * np.sin(omega * t + phase)).sum(axis=1)

    t = np.arange(SAMPLES) / RATE
    v = np.array([twist(time) for time in t])
    vdot = np.array([(amplitude * omega * np.cos(omega * time + phase)).sum(axis=1)
                     for time in t])
    pose, placement = np.empty((SAMPLES, 7)), pin.SE3(pin.utils.rpyToMatrix(0.1, -0.2, 0.3),
                                                      np.array([0.1, 0.2, 0.3]))
    for k in range(SAMPLES):
        pose[k] = pin.SE3ToXYZQUAT(placement)
        placement = placement * pin.exp6(pin.Motion(twist(t[k] + 0.5 / RATE) / RATE))
    return pose, v, vdot


def write_run(path: Path, robot: Robot, oracle: FloatingPinocchioOracle, joints: np.ndarray,
              seed: int) -> str:
    """The bag of one run of the true robot (`oracle`, with `joints`' friction and offsets)."""
    rng = np.random.default_rng(100 + seed)
    motion = sine_trajectory(solo12(floating_base=False), SAMPLES, RATE, seed=seed, reach=0.4)
    pose, v_base, a_base = base_motion(seed)
    q, v, a = (np.hstack(parts) for parts in ((pose, motion.q), (v_base, motion.qd),
                                              (a_base, motion.qdd)))
    weight = 9.81 * sum(inertia.mass for inertia in oracle.model.inertias)
    phase = rng.uniform(0.0, 2.0 * np.pi, (len(FEET), 3))
    times = np.arange(SAMPLES) / RATE
    feet = np.empty((len(FEET), SAMPLES, 6))
    feet[:, :, :3] = 5.0 * np.sin(1.3 * times[None, :, None] + phase[:, None, :])
    feet[:, :, 2] += weight / len(FEET)
    feet[:, :, 3:] = 0.0  # point feet: forces only
    crane = np.empty((SAMPLES, 6))
    effort = np.empty((SAMPLES, robot.nv - 6))
    for k in range(SAMPLES):
        tau = oracle.rnea(q[k], v[k], a[k])
        for foot, wrench in zip(FEET, feet[:, k], strict=True):
            tau -= oracle.jacobian(q[k], foot).T @ wrench
        rotation = pin.Quaternion(pose[k, 3:7]).toRotationMatrix()  # coefficients x y z w
        crane[k] = np.concatenate([rotation @ tau[:3], rotation @ tau[3:6]])
        effort[k] = tau[6:]
    qd = motion.qd
    effort += joints[6:, 1] * qd + joints[6:, 2] * np.tanh(qd / FRICTION_VELOCITY) + joints[6:, 3]
    effort += rng.normal(0.0, SIGMA, effort.shape)
    wrench_noise = np.array([FORCE_SIGMA] * 3 + [TORQUE_SIGMA] * 3)
    feet += rng.normal(0.0, 1.0, feet.shape) * wrench_noise
    crane += rng.normal(0.0, 1.0, crane.shape) * wrench_noise
    with open_writer(path, "mcap") as writer:
        add_joint_states(writer, JointStateSeries(robot.measured_joints, motion.stamps,
                                                  motion.q, qd, effort))
        add_odometry(writer, "/odometry", motion.stamps, pose, v_base)
        add_wrenches(writer, "/feet", motion.stamps, dict(zip(FEET, feet, strict=True)))
        add_wrenches(writer, "/crane", motion.stamps, {CRANE: crane})
    return str(path)


def add_odometry(writer, topic: str, stamps: np.ndarray, pose: np.ndarray, twist: np.ndarray,
                 child_frame: str = "base_link") -> None:
    store = typestore()
    types = store.types
    Odometry = types["nav_msgs/msg/Odometry"]
    Point, Quaternion, Vector3 = (types[f"geometry_msgs/msg/{name}"]
                                  for name in ("Point", "Quaternion", "Vector3"))
    Pose, Twist = types["geometry_msgs/msg/Pose"], types["geometry_msgs/msg/Twist"]
    PoseCov, TwistCov = (types[f"geometry_msgs/msg/{name}WithCovariance"]
                         for name in ("Pose", "Twist"))
    connection = writer.add_connection(topic, Odometry.__msgtype__, typestore=store)
    for stamp, p, t in zip(stamps.tolist(), pose, twist, strict=True):
        message = Odometry(
            header=header(stamp, "odom"), child_frame_id=child_frame,
            pose=PoseCov(pose=Pose(position=Point(*p[:3]), orientation=Quaternion(*p[3:7])),
                         covariance=np.zeros(36)),
            twist=TwistCov(twist=Twist(linear=Vector3(*t[:3]), angular=Vector3(*t[3:])),
                           covariance=np.zeros(36)))
        writer.write(connection, stamp, store.serialize_cdr(message, Odometry.__msgtype__))


def add_wrenches(writer, topic: str, stamps: np.ndarray, wrenches: dict[str, np.ndarray]
                 ) -> None:
    store = typestore()
    types = store.types
    WrenchStamped, Wrench, Vector3 = (types[f"geometry_msgs/msg/{name}"]
                                      for name in ("WrenchStamped", "Wrench", "Vector3"))
    connection = writer.add_connection(topic, WrenchStamped.__msgtype__, typestore=store)
    for k, stamp in enumerate(stamps.tolist()):
        for frame, values in wrenches.items():
            message = WrenchStamped(header=header(stamp, frame), wrench=Wrench(
                force=Vector3(*values[k, :3]), torque=Vector3(*values[k, 3:])))
            writer.write(connection, stamp,
                         store.serialize_cdr(message, WrenchStamped.__msgtype__))


@pytest.fixture(scope="module")
def identified(hidden, tmp_path_factory):
    """`robodyn bag identify --floating-base` on the fit run, validated on the other, every
    joint parameter of the legs fitted."""
    _, _, bags = hidden
    output = tmp_path_factory.mktemp("out") / "identified"
    assert main(["bag", "identify", bags["fit"], "--urdf", str(example_robot_urdf("solo12")),
                 "--floating-base", "--wrench-topic", "/feet", "--wrench-topic", "/crane",
                 "--fit", "offsets,friction,armature",
                 "--validate", bags["validation"], "--output", str(output)]) == 0
    return output


def test_base_parameters_come_back_within_their_standard_errors(hidden, identified) -> None:
    """Every joint parameter of the legs fitted (--fit), the base's held at zero (no motor)
    and its inner rows' bodies massless: each base parameter's error in its standard errors
    is a standard normal value, all within Šidák's bound at 99 %."""
    robot, true, _ = hidden
    document = yaml.safe_load((identified / "parameters.yaml").read_text(encoding="utf-8"))
    held = np.concatenate([np.repeat(robot.model.inner_rows, 10),
                           np.repeat(unactuated_rows(robot), 4)])
    kept = np.flatnonzero(~held)
    base = base_parameters(robot, columns=np.eye(held.size)[:, kept],
                           names=tuple(np.array(robot.parameter_names)[kept]))
    entries = document["base_parameters"]
    assert [entry["name"] for entry in entries] == list(base.names)
    values = np.array([entry["value"] for entry in entries])
    errors = np.array([entry["standard_error"] for entry in entries])
    z = (values - base.of(true[kept])) / errors
    bound = norm.isf(0.005 / len(entries))
    assert np.abs(z).max() <= bound, f"worst: {entries[int(np.abs(z).argmax())]['name']}, z {z}"


def test_the_total_mass_and_a_held_out_run_come_back(hidden, identified) -> None:
    robot, true, _ = hidden
    document = yaml.safe_load((identified / "parameters.yaml").read_text())
    parameters = np.array([document["parameters"][name] for name in robot.parameter_names])
    found = robot.with_inertial_parameters(parameters)
    real = robot.with_inertial_parameters(true)
    assert found.model.total_mass == pytest.approx(real.model.total_mass, rel=0.005)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        loaded = Robot.from_urdf(identified / "solo_identified.urdf", floating_base=True,
                                 strict_inertia=True)
    scale = np.abs(parameters[: 10 * robot.nv]).max()
    np.testing.assert_allclose(loaded.inertial_parameters()[: 10 * robot.nv],
                               parameters[: 10 * robot.nv], rtol=0, atol=1e-9 * scale)
    report = (identified / "report.txt").read_text()
    rows = {line.split()[0]: [float(x) for x in line.split()[1:]]
            for line in report.splitlines() if line.split()[:1] and line.split()[0] in
            robot.joint_names}
    # columns: sigma fit; fit: description, identified, URDF alone; validation: the same
    sigma, validation, description = (np.array([rows[joint][column] for joint in
                                                robot.joint_names]) for column in (0, 5, 4))
    assert np.all(validation <= 1.1 * sigma), f"validation RMS {validation}, sigma {sigma}"
    assert np.all(description[6:] > 2.0 * validation[6:]), f"the description's {description}"
    assert {"efforts_fit.png", "efforts_validation.png"} <= {p.name for p in identified.iterdir()}


def test_without_the_contact_wrenches_the_base_rows_do_not_fit(hidden) -> None:
    """The feet's wrenches left out, the base's residuals grow far past their noise: a bag
    that misses a contact shows it in the report."""
    robot, _, bags = hidden
    result = identify_bag(bags["validation"], robot,
                          IdentificationOptions(wrench_topics=("/crane",)))
    sigma = result.found.estimate.sigma
    assert (sigma[:3] > 10 * FORCE_SIGMA).all(), sigma[:6]


def test_bad_base_topics_are_refused_naming_them(hidden, tmp_path) -> None:
    robot, _, bags = hidden
    joints = read_joint_states(bags["fit"], "/joint_states", robot.measured_joints)
    with pytest.raises(BagError, match="no topic '/odom'"):
        robot_run(bags["fit"], joints, robot, "/odom")
    with pytest.raises(BagError, match="'/feet' holds geometry_msgs/msg/WrenchStamped, not "
                       "nav_msgs/msg/Odometry"):
        robot_run(bags["fit"], joints, robot, "/feet")
    stamps = START + np.arange(4) * 4_000_000
    pose = np.tile([0.0, 0, 0, 0, 0, 0, 1], (4, 1))
    for name, child, bad_pose, match in (
            ("child", "trunk", pose, "child_frame_id is 'trunk', not the robot's root link "
             "'base_link'"),
            ("norm", "base_link", pose * [1, 1, 1, 1, 1, 1, 2], "not a unit quaternion"),
            ("nan", "base_link", np.where(np.eye(4, 7, 1) > 0, np.nan, pose),
             "pose or twist has non-finite values")):
        bag = tmp_path / name
        with open_writer(bag, "sqlite3") as writer:
            add_joint_states(writer, JointStateSeries(robot.measured_joints, stamps,
                                                      joints.position[:4],
                                                      effort=np.zeros((4, robot.nv - 6))))
            add_odometry(writer, "/odometry", stamps, bad_pose, np.zeros((4, 6)), child)
            add_wrenches(writer, "/wrong", stamps, {"no_such_frame": np.zeros((4, 6))})
        short = read_joint_states(bag, "/joint_states", robot.measured_joints)
        with pytest.raises(BagError, match=match):
            robot_run(bag, short, robot, "/odometry")
    with pytest.raises(BagError, match=r"header\.frame_id 'no_such_frame' is not a frame"):
        robot_run(tmp_path / "child", short, solo12_named_trunk(), "/odometry", ("/wrong",))


def solo12_named_trunk() -> Robot:
    """Solo12 with its root link renamed 'trunk', which the 'child' bag's odometry names."""
    urdf = example_robot_urdf("solo12").read_text().replace('"base_link"', '"trunk"')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        return Robot.from_urdf_string(urdf, floating_base=True)


def test_joint_states_outside_the_odometry_are_dropped_with_a_warning(hidden, tmp_path):
    robot, _, bags = hidden
    joints = read_joint_states(bags["fit"], "/joint_states", robot.measured_joints)
    odometry = read_odometry(bags["fit"], "/odometry")
    bag = tmp_path / "late_odometry"
    with open_writer(bag, "sqlite3") as writer:
        add_joint_states(writer, JointStateSeries(robot.measured_joints, joints.stamps[:50],
                                                  joints.position[:50],
                                                  effort=joints.effort[:50]))
        add_odometry(writer, "/odometry", odometry.stamps[10:50], odometry.values[10:50, :7],
                     odometry.values[10:50, 7:])
    short = read_joint_states(bag, "/joint_states", robot.measured_joints)
    with pytest.warns(BagWarning, match="10 of 50 joint states lie outside"):
        run = robot_run(bag, short, robot, "/odometry")
    np.testing.assert_array_equal(run.joints.stamps, joints.stamps[10:50])
    np.testing.assert_allclose(run.base_pose, odometry.values[10:50, :7], atol=1e-12)


def test_odometry_without_a_stamp_is_dropped_with_a_warning(hidden, tmp_path) -> None:
    """A driver that leaves some messages unstamped: those are not placed at time zero."""
    robot, _, bags = hidden
    joints = read_joint_states(bags["fit"], "/joint_states", robot.measured_joints)
    odometry = read_odometry(bags["fit"], "/odometry")
    stamps = odometry.stamps[:40].copy()
    stamps[[0, 17]] = 0
    bag = tmp_path / "unstamped"
    with open_writer(bag, "sqlite3") as writer:
        add_joint_states(writer, JointStateSeries(robot.measured_joints, joints.stamps[:40],
                                                  joints.position[:40],
                                                  effort=joints.effort[:40]))
        add_odometry(writer, "/odometry", stamps, odometry.values[:40, :7],
                     odometry.values[:40, 7:])
    short = read_joint_states(bag, "/joint_states", robot.measured_joints)
    with pytest.warns(BagWarning) as caught:
        run = robot_run(bag, short, robot, "/odometry")
    messages = [str(warning.message) for warning in caught]
    assert any("2 of 40 messages have a zero header stamp" in m for m in messages), messages
    np.testing.assert_array_equal(run.joints.stamps, joints.stamps[1:40])
    np.testing.assert_allclose(run.base_pose[16], odometry.values[17, :7], atol=1e-4)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), flips=st.lists(st.booleans(), min_size=6, max_size=6))
def test_quaternions_interpolate_along_the_shorter_arc(seed: int, flips: list[bool]) -> None:
    """Odometry quaternions with arbitrary signs (q and −q are one orientation), interpolated
    halfway between samples: the orientation halfway, as pinocchio.slerp gives it (nlerp
    differs from slerp by O(angle³) between samples 0.1 rad apart)."""
    from robodyn_ros.bag.robot_run import _interpolated_quaternions

    rng = np.random.default_rng(seed)
    start = pin.Quaternion(pin.exp3(rng.normal(size=3)))
    steps = [pin.Quaternion(pin.exp3(0.1 * rng.normal(size=3))) for _ in range(5)]
    quaternions = [start]
    for step in steps:
        quaternions.append(quaternions[-1] * step)
    coefficients = np.array([q.coeffs() for q in quaternions])
    coefficients[np.array(flips)] *= -1.0
    stamps = np.arange(6, dtype=np.int64) * 10_000_000
    halfway = _interpolated_quaternions(coefficients, stamps, stamps[:-1] + 5_000_000)
    for k, q in enumerate(halfway):
        expected = quaternions[k].slerp(0.5, quaternions[k + 1]).coeffs()
        assert min(np.linalg.norm(q - expected), np.linalg.norm(q + expected)) < 1e-3
