"""Controller plugins in closed loop with the bundled Panda, in plain numpy (no ROS).

The plant is `robot.forward_dynamics` integrated by semi-implicit Euler at dt = 1 ms (the rate
of a real torque-controlled arm); the controllers see the exact model, so the tolerances below
bound the controllers' own behaviour and the integrator's error, not model mismatch.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robodyn_ros import Robot
from robodyn_ros.control import (
    BUILTIN_CONTROLLERS,
    Controller,
    ControllerState,
    available_controllers,
    load_controller,
    plugin,
)
from robodyn_ros.control.computed_torque import ComputedTorque
from robodyn_ros.control.gravity_compensation import GravityCompensation
from robodyn_ros.control.joint_impedance import JointImpedance
from robodyn_ros.control.operational_space_controller import (
    OperationalSpace,
    log_so3,
    quaternion_to_matrix,
    rotation_error,
)
from robodyn_ros.control.whole_body import WholeBody

PANDA = Path(__file__).resolve().parents[2] / "urdf" / "panda.urdf"
TCP = "panda_hand_tcp"
Q_START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])  # away from singularities
DT = 1e-3


@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot.from_urdf(PANDA)


def simulate(robot, controller, q, qd, duration, t0=0.0):
    """Semi-implicit Euler: q̇ += dt q̈(q, q̇, τ); q += dt q̇. Returns q, q̇, the last τ."""
    t = t0
    for _ in range(round(duration / DT)):
        tau = controller.update(ControllerState(t, q, qd))
        qdd = robot.forward_dynamics(q, qd, tau)
        qd = qd + DT * qdd
        q = q + DT * qd
        t += DT
    return q, qd, tau


def rot(axis: str, angle: float) -> np.ndarray:
    return Rotation.from_euler(axis, angle).as_matrix()


# -- closed loop ------------------------------------------------------------------------------


def test_gravity_compensation_holds_still(robot):
    controller = load_controller("gravity_compensation")()
    controller.configure(robot, {})
    q, qd, _ = simulate(robot, controller, Q_START, np.zeros(7), 1.0)
    # exact model: q̈ is round-off only; drift < 1e-6 rad over 1 s (uncompensated: ~1 rad)
    assert np.max(np.abs(q - Q_START)) < 1e-6
    assert np.max(np.abs(qd)) < 1e-6


def test_joint_impedance_converges(robot):
    controller = load_controller("joint_impedance")()
    controller.configure(
        robot,
        {  # the URDF has no rotor inertia (the wrist's M⁻¹ has eigenvalues ~ 500 1/(kg m²)),
            # so semi-implicit Euler at 1 ms needs dt·max|eig(M⁻¹D)| < 2: here ≤ 0.9
            "stiffness": [200, 200, 200, 200, 20, 20, 20],
            "damping": [20, 20, 20, 20, 1.5, 1.5, 1.5],
        },
    )
    q_star = Q_START + np.array([0.3, 0.2, -0.2, 0.3, 0.4, -0.3, 0.5])
    controller.set_target(q_star)
    q, qd, _ = simulate(robot, controller, Q_START, np.zeros(7), 2.0)
    # gravity is compensated exactly, so the spring's rest point is q*: within 1e-3 rad in 2 s
    assert np.max(np.abs(q - q_star)) < 1e-3
    assert np.max(np.abs(qd)) < 1e-2


def test_joint_impedance_feedforward_tracks_better(robot):
    """With M q̈* + C q̇, tracking a sinusoid is much closer than with the spring alone."""
    errors = {}
    for feedforward in (False, True):
        controller = JointImpedance()
        controller.configure(
            robot, {"stiffness": 100.0, "damping": 5.0, "feedforward": feedforward}
        )
        amplitude, omega = 0.2, 2.0  # every joint: q*(t) = q_start + a sin ωt
        q, qd, worst = Q_START.copy(), np.full(7, amplitude * omega), 0.0  # on the trajectory
        for k in range(1000):
            t = k * DT
            s, c = np.sin(omega * t), np.cos(omega * t)
            controller.set_target(
                Q_START + amplitude * s,
                np.full(7, amplitude * omega * c),
                np.full(7, -amplitude * omega**2 * s),
            )
            tau = controller.update(ControllerState(t, q, qd))
            qd = qd + DT * robot.forward_dynamics(q, qd, tau)
            q = q + DT * qd
            worst = max(worst, np.max(np.abs(q - (Q_START + amplitude * np.sin(omega * (t + DT))))))
        errors[feedforward] = worst
    assert errors[True] < 0.1 * errors[False]


def test_computed_torque_is_the_inverse_dynamics_of_the_corrected_acceleration(robot):
    """τ = RNEA(q, q̇, q̈* + Kp e + Kd ė) + d q̇* + f tanh(q̇*/ε), against Pinocchio's RNEA."""
    from robodyn_ros.model.model import FRICTION_VELOCITY
    from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

    oracle = PinocchioOracle(PANDA, robot.joint_names)
    rng = np.random.default_rng(3)
    q, qd, q_ref, qd_ref, qdd_ref = Q_START + rng.uniform(-0.3, 0.3, (5, 7))
    kp, kd = rng.uniform(100.0, 900.0, 7), 40.0
    model = robot.model
    for friction in (True, False):
        controller = load_controller("computed_torque")()
        controller.configure(robot, {"kp": kp, "kd": kd, "friction_feedforward": friction})
        controller.set_target(q_ref, qd_ref, qdd_ref)
        tau = controller.update(ControllerState(0.0, q, qd))
        expected = oracle.rnea(q, qd, qdd_ref + kp * (q_ref - q) + kd * (qd_ref - qd))
        if friction:
            expected += (model.damping * qd_ref
                         + model.friction * np.tanh(qd_ref / FRICTION_VELOCITY))
        np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9)


def test_computed_torque_tracks_at_a_hundred_hertz(robot):
    """Commands held for 10 ms, as sim_node holds them at its 100 Hz publish period: one pair
    of gains keeps every joint, shoulder and light wrist, within 5 mrad of a sinusoid (the
    description's friction included), where joint impedance with 100 N·m/rad and 5 N·m·s/rad
    diverges on the wrist."""
    from robodyn_ros.sim.simulated_robot import SimulatedRobot

    amplitude, omega, hold = 0.3, 2.0, 10  # every joint: q*(t) = q_start + a sin ωt
    errors = {}
    for name, parameters in (("computed_torque", {"kp": 400.0, "kd": 40.0}),
                             ("joint_impedance", {"stiffness": 100.0, "damping": 5.0,
                                                  "feedforward": True})):
        controller = load_controller(name)()
        controller.configure(robot, parameters)
        simulated = SimulatedRobot(robot, "rk4", DT, q=Q_START, qd=np.full(7, amplitude * omega))
        worst = 0.0
        for k in range(2000):
            t = k * DT
            if k % hold == 0:
                s, c = np.sin(omega * t), np.cos(omega * t)
                controller.set_target(Q_START + amplitude * s, np.full(7, amplitude * omega * c),
                                      np.full(7, -amplitude * omega**2 * s))
                tau = controller.update(ControllerState(t, simulated.q, simulated.qd))
            simulated.step(tau)
            reference = Q_START + amplitude * np.sin(omega * (t + DT))
            worst = max(worst, float(np.max(np.abs(simulated.q - reference))))
        errors[name] = worst
    assert errors["computed_torque"] < 5e-3
    assert errors["joint_impedance"] > 0.1


def test_operational_space_reaches_three_poses(robot):
    controller = load_controller("operational_space")()
    controller.configure(robot, {"frame": TCP})
    T0 = robot.frame_pose(Q_START, TCP)
    p0, R0 = T0[:3, 3], T0[:3, :3]
    targets = [
        # orientations as a quaternion (x, y, z, w) and as rotation matrices
        (p0 + np.array([0.10, 0.0, 0.0]), Rotation.from_matrix(R0).as_quat()),
        (p0 + np.array([0.0, 0.15, -0.10]), rot("z", 0.4) @ R0),
        (p0 + np.array([-0.05, -0.10, 0.10]), rot("x", -0.3) @ rot("z", -0.3) @ R0),
    ]
    q, qd, t = Q_START.copy(), np.zeros(7), 0.0
    for position, orientation in targets:
        controller.set_target(position, orientation)
        q, qd, tau = simulate(robot, controller, q, qd, 3.0, t)
        t += 3.0
        T = robot.frame_pose(q, TCP)
        R_target = controller.target_pose[:3, :3]
        # within 3 s each: position error < 5 mm, orientation error < 0.02 rad
        assert np.linalg.norm(position - T[:3, 3]) < 5e-3
        assert np.linalg.norm(rotation_error(R_target, T[:3, :3])) < 0.02
        assert np.all(np.isfinite(tau))


def test_operational_space_uses_precomputed_dynamics(robot):
    rng = np.random.default_rng(3)
    q, qd = Q_START + rng.uniform(-0.2, 0.2, 7), rng.uniform(-0.5, 0.5, 7)
    T = robot.frame_pose(Q_START, TCP)
    taus = []
    for state in (
        ControllerState(0.0, q, qd),
        ControllerState(
            0.0,
            q,
            qd,
            M=robot.mass_matrix(q),
            bias=robot.bias_forces(q, qd),
            gravity=robot.gravity_torques(q),
            operational_space={TCP: robot.operational_space(q, qd, TCP, singular_threshold=1e-4)},
        ),
    ):
        controller = OperationalSpace()
        controller.configure(robot, {"frame": TCP, "rest_posture": Q_START})
        controller.set_target(T[:3, 3], T[:3, :3])
        taus.append(controller.update(state))
    np.testing.assert_allclose(taus[0], taus[1], rtol=1e-8, atol=1e-8)


def test_operational_space_without_feedback_holds_the_task_acceleration_at_zero(robot):
    """With Kp = Kd = 0 the law is τ = Jᵀ (μ + p) + Nᵀ (τ_posture + b): μ and p cancel the
    task's share of C q̇ + g, and the projected terms add no task acceleration, so
    ẍ = J q̈ + J̇ q̇ = 0 at any state (away from singularities), moving or not."""
    controller = OperationalSpace()
    controller.configure(robot, {"frame": TCP, "kp": 0.0, "kd": 0.0, "rest_posture": Q_START})
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, qd = Q_START + rng.uniform(-0.3, 0.3, 7), rng.uniform(-1.0, 1.0, 7)
        tau = controller.update(ControllerState(0.0, q, qd))
        task = robot.operational_space(q, qd, TCP)
        xdd = task.J @ robot.forward_dynamics(q, qd, tau) + task.Jdot_qd
        assert np.abs(xdd).max() < 1e-9, xdd
        assert np.abs(robot.forward_dynamics(q, qd, tau)).max() > 1e-2  # the joints do move


def test_operational_space_at_singularities_is_finite(robot):
    controller = OperationalSpace()
    controller.configure(robot, {"frame": TCP})
    controller.set_target([0.3, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0])
    for q in (np.zeros(7), np.array([0.7, 0, 0, 0, 0, 0, -0.4])):  # upright, stretched
        Lambda_inv = robot.operational_space_inertia(q, TCP, inverse=True)
        assert np.linalg.eigvalsh(Lambda_inv)[0] < 1e-2  # really (near-)singular
        tau = controller.update(ControllerState(0.0, q, np.ones(7)))
        assert np.all(np.isfinite(tau))


# -- orientation error ------------------------------------------------------------------------


def test_orientation_error_zero_iff_equal_and_signed():
    rng = np.random.default_rng(1)
    for R in Rotation.random(20, random_state=2).as_matrix():
        assert np.linalg.norm(rotation_error(R, R)) < 1e-12
        other = Rotation.from_rotvec(rng.normal(size=3) * 0.5).as_matrix() @ R
        assert np.linalg.norm(rotation_error(other, R)) > 1e-3
    R = Rotation.random(random_state=4).as_matrix()
    # the target turned by a small +δ about world z: error +δ ẑ
    delta = 0.01
    np.testing.assert_allclose(rotation_error(rot("z", delta) @ R, R), [0, 0, delta], atol=1e-12)
    np.testing.assert_allclose(rotation_error(rot("z", -delta) @ R, R), [0, 0, -delta], atol=1e-12)


def test_log_map_matches_scipy_including_near_pi():
    rotvecs = [np.zeros(3), [1e-9, 0, 0], [0.3, -0.2, 0.1], [0, 0, np.pi - 1e-6]]
    rng = np.random.default_rng(5)
    for _ in range(50):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        rotvecs += [axis * rng.uniform(0, np.pi), axis * (np.pi - 10 ** rng.uniform(-9, -3))]
    for v in rotvecs:
        R = Rotation.from_rotvec(v).as_matrix()
        np.testing.assert_allclose(log_so3(R), v, atol=1e-6)
    # exactly π: either sign of the axis is right
    R = Rotation.from_rotvec([0, np.pi, 0]).as_matrix()
    np.testing.assert_allclose(np.abs(log_so3(R)), [0, np.pi, 0], atol=1e-9)


def test_quaternion_order_is_xyzw():
    quat = Rotation.from_euler("xyz", [0.1, -0.4, 0.7]).as_quat()  # scipy: (x, y, z, w)
    np.testing.assert_allclose(
        quaternion_to_matrix(quat), Rotation.from_quat(quat).as_matrix(), atol=1e-12
    )


# -- parameters and states ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "parameters", "named"),
    [
        (GravityCompensation, {"stifness": 1.0}, "stifness"),
        (JointImpedance, {"damping": 1.0}, "stiffness"),
        (JointImpedance, {"stiffness": -1.0, "damping": 1.0}, "stiffness"),
        (JointImpedance, {"stiffness": [1.0, 2.0], "damping": 1.0}, "stiffness"),
        (JointImpedance, {"stiffness": 1.0, "damping": float("nan")}, "damping"),
        (JointImpedance, {"stiffness": 1.0, "damping": "soft"}, "damping"),
        (JointImpedance, {"stiffness": 1.0, "damping": 1.0, "feedforward": "yes"}, "feedforward"),
        (JointImpedance, {"stiffness": 1.0, "damping": 1.0, "target": np.zeros(6)}, "target"),
        (ComputedTorque, {"kd": 1.0}, "kp"),
        (ComputedTorque, {"kp": [1.0, 2.0], "kd": 1.0}, "kp"),
        (ComputedTorque, {"kp": 1.0, "kd": -1.0}, "kd"),
        (ComputedTorque, {"kp": 1.0, "kd": 1.0, "friction_feedforward": 1}, "friction"),
        (OperationalSpace, {}, "frame"),
        (OperationalSpace, {"frame": "panda_link99"}, "frame"),
        (OperationalSpace, {"frame": TCP, "kp": [1.0, 2.0, 3.0]}, "kp"),
        (OperationalSpace, {"frame": TCP, "kd": -1.0}, "kd"),
        (OperationalSpace, {"frame": TCP, "null_stiffness": np.ones(8)}, "null_stiffness"),
        (OperationalSpace, {"frame": TCP, "singular_threshold": 0.0}, "singular_threshold"),
        (OperationalSpace, {"frame": TCP, "singular_threshold": 1.0}, "singular_threshold"),
    ],
)
def test_bad_parameters_name_the_parameter(robot, cls, parameters, named):
    with pytest.raises(ValueError, match=named):
        cls().configure(robot, parameters)


def test_bad_targets_and_states(robot):
    controller = OperationalSpace()
    controller.configure(robot, {"frame": TCP})
    with pytest.raises(ValueError, match="orientation"):
        controller.set_target([0, 0, 0], [0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="orientation"):
        controller.set_target([0, 0, 0], 2 * np.eye(3))
    with pytest.raises(ValueError, match="position"):
        controller.set_target([0, 0])
    with pytest.raises(ValueError, match="7 positions and 6 velocities"):
        controller.update(ControllerState(0.0, np.zeros(7), np.zeros(6)))
    with pytest.raises(ValueError, match="q"):
        ControllerState(0.0, [0.0, np.nan], np.zeros(2))
    with pytest.raises(ValueError, match="M"):
        ControllerState(0.0, np.zeros(7), np.zeros(7), M=np.eye(6))
    with pytest.raises(ValueError, match="joints"):
        controller.update(ControllerState(0.0, np.zeros(6), np.zeros(6)))
    with pytest.raises(TypeError, match="no target"):
        GravityCompensation().set_target(np.zeros(7))
    with pytest.raises(RuntimeError, match="configure"):
        GravityCompensation().update(ControllerState(0.0, np.zeros(7), np.zeros(7)))


# -- discovery ----------------------------------------------------------------------------------


def test_load_controller_finds_builtins():
    expected = {
        "computed_torque": ComputedTorque,
        "gravity_compensation": GravityCompensation,
        "joint_impedance": JointImpedance,
        "operational_space": OperationalSpace,
        "whole_body": WholeBody,
    }
    assert set(BUILTIN_CONTROLLERS) == set(expected)
    for name, cls in expected.items():
        assert load_controller(name) is cls
        assert cls.name == name
        assert name in available_controllers()


def test_load_controller_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown controller 'pid'") as error:
        load_controller("pid")
    for name in BUILTIN_CONTROLLERS:
        assert name in str(error.value)


def test_load_controller_finds_a_user_plugin_through_its_entry_point(tmp_path, monkeypatch):
    """A distribution installed on the path (dist-info with entry_points.txt) registers a
    controller and a wrong target; discovery goes through importlib.metadata for real."""
    (tmp_path / "my_controllers.py").write_text(
        "from robodyn_ros.control.gravity_compensation import GravityCompensation\n"
        "class Custom(GravityCompensation):\n    pass\n"
    )
    info = tmp_path / "my_controllers-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-controllers\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[{plugin.ENTRY_POINT_GROUP}]\n"
        "custom = my_controllers:Custom\nnot_a_controller = numpy:zeros\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    custom = load_controller("custom")
    assert custom.__name__ == "Custom" and issubclass(custom, Controller)
    assert "custom" in available_controllers()
    with pytest.raises(TypeError, match="not a Controller"):
        load_controller("not_a_controller")


def test_builtins_are_registered_as_entry_points():
    """setup.py registers every built-in under the plugin group, with the same target."""
    registered = {
        point.name: point.value
        for point in importlib.metadata.entry_points(group=plugin.ENTRY_POINT_GROUP)
        if point.dist is not None and point.dist.name == "robodyn_ros"
    }
    assert registered == dict(BUILTIN_CONTROLLERS)
