"""Khatib's unified motion and force control in the operational-space controller
(control.operational_space_controller): F = Λ (Ω ẍ* − Ω̃ K_vf ẋ) + Ω̃ F_d + μ + p.

The law is held to a dense reference built from Pinocchio's J, M, C q̇ + g and J̇ q̇; in closed
loop the Panda's hand presses on a table and slides along it, the forces those of the contact
solver (contact.time_step), and the steady normal force is also held to what the law predicts
from Pinocchio's Λ⁻¹ and the contact wrench.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robodyn_ros.contact import collision_shapes, contact_points, world_of
from robodyn_ros.control import ControllerState
from robodyn_ros.control.operational_space_controller import OperationalSpace, rotation_error
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import ScenarioError, scenario_from_mapping
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing import example_robot_urdf

from helpers.cases import Case, case_named
from helpers.tolerances import assert_close

TCP = "panda_hand_tcp"
Q_NEAR = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])  # away from singularities
# The arm reaching along world y, the hand pointing down: world x runs across the arm.
Q_ACROSS = np.array([np.pi / 2, 0.2, 0.0, -2.2, 0.0, 2.4, 0.785])
HAND_LINKS = ("panda_hand", "panda_leftfinger", "panda_rightfinger")
PRESS = np.array([0.0, 0.0, -10.0, 0.0, 0.0, 0.0])  # N: 10 N down on the table
DT = 1e-3


@pytest.fixture(scope="module")
def panda() -> Case:
    """example-robot-data's Panda with its fingers locked, and its Pinocchio oracle."""
    return case_named("panda")


def configured(case: Case, parameters: dict[str, object]) -> OperationalSpace:
    controller = OperationalSpace()
    controller.configure(case.robot, {"frame": TCP, **parameters})
    return controller


# -- the law ----------------------------------------------------------------------------------


def test_without_force_axes_the_law_is_the_pose_law_bit_for_bit(panda):
    """No force axes (the default, or six zeros with a damping and a zero target): τ is the
    pose law's, bit for bit."""
    rng = np.random.default_rng(11)
    pose = panda.robot.frame_pose(Q_NEAR, TCP)
    plain = configured(panda, {"rest_posture": Q_NEAR})
    explicit = configured(panda, {"rest_posture": Q_NEAR, "force_axes": [0] * 6,
                                  "force_target": np.zeros(6), "force_damping": 7.0})
    for controller in (plain, explicit):
        controller.set_target(pose[:3, 3] + [0.05, -0.02, 0.03], pose[:3, :3])
    explicit.set_force_target(np.zeros(6))
    for _ in range(5):
        state = ControllerState(0.0, Q_NEAR + rng.uniform(-0.3, 0.3, 7), rng.uniform(-1, 1, 7))
        assert np.array_equal(explicit.update(state), plain.update(state))


def reference_torque(case: Case, q: np.ndarray, qd: np.ndarray, controller: OperationalSpace
                     ) -> np.ndarray:
    """τ = Jᵀ F + Nᵀ (τ_posture + b), F = Λ (Ω ẍ* − Ω̃ K_vf ẋ) + Ω̃ F_d + μ + p, every term
    from Pinocchio's J (LOCAL_WORLD_ALIGNED), M, b = C q̇ + g, g and J̇ q̇, dense; the
    orientation error by scipy's rotation vector."""
    oracle = case.oracle
    J = oracle.jacobian(q, TCP)
    M_inv = np.linalg.inv(oracle.mass_matrix(q))
    b, g = oracle.bias_forces(q, qd), oracle.gravity_torques(q)
    Lambda = np.linalg.inv(J @ M_inv @ J.T)
    Jbar = M_inv @ J.T @ Lambda
    mu = Jbar.T @ (b - g) - Lambda @ oracle.classical_acceleration(q, qd, TCP)
    p = Jbar.T @ g
    pose = oracle.frame_pose(q, TCP)
    turn = controller.rotation_target @ pose[:3, :3].T
    error = np.concatenate([controller.position_target - pose[:3, 3],
                            Rotation.from_matrix(turn).as_rotvec()])
    velocity = J @ qd
    force = np.diag(controller.force_axes.astype(float))  # Ω̃
    motion = np.eye(6) - force  # Ω
    F = (Lambda @ (motion @ (controller.kp * error - controller.kd * velocity)
                   - force @ (controller.force_damping * velocity))
         + force @ controller.force_target + mu + p)
    posture = (controller.null_stiffness * (controller.rest_posture - q)
               - controller.null_damping * qd + b)
    return J.T @ F + (np.eye(len(q)) - J.T @ Jbar.T) @ posture


def test_the_law_is_the_dense_reference_for_random_states_and_selections(panda):
    """Eight random states, gains, targets and selections (none, all six, and random ones):
    τ is the dense reference to 1e-9 of its largest entry. The states keep Λ⁻¹'s smallest
    eigenvalue above 2e-4 of its largest (the Panda's tcp is near 3e-4 to 6e-4 in ordinary
    postures), where the controller inverts Λ⁻¹ exactly (its threshold is 1e-4); κ(Λ⁻¹) < 5e3
    then magnifies the rounding of the two inversions to well below 1e-9."""
    rng = np.random.default_rng(5)
    selections = [np.zeros(6, int), np.ones(6, int),
                  *(rng.integers(0, 2, 6) for _ in range(6))]
    for selection in selections:
        q, qd = Q_NEAR + rng.uniform(-0.3, 0.3, 7), rng.uniform(-1.0, 1.0, 7)
        J = panda.oracle.jacobian(q, TCP)
        eigenvalues = np.linalg.eigvalsh(J @ panda.oracle.mass_matrix_inverse(q) @ J.T)
        assert eigenvalues[0] > 2e-4 * eigenvalues[-1]
        kp = rng.uniform(50.0, 500.0, 6)
        wrench = np.where(selection == 1, rng.uniform(-20.0, 20.0, 6), 0.0)
        controller = configured(panda, {
            "kp": kp, "kd": rng.uniform(5.0, 40.0, 6), "force_axes": selection.tolist(),
            "force_damping": rng.uniform(5.0, 40.0, 6),
            "null_stiffness": rng.uniform(1.0, 20.0, 7), "null_damping": rng.uniform(0.5, 3.0, 7),
            "rest_posture": Q_NEAR + rng.uniform(-0.2, 0.2, 7)})
        controller.set_force_target(wrench)
        pose = panda.robot.frame_pose(q, TCP)
        controller.set_target(pose[:3, 3] + rng.uniform(-0.05, 0.05, 3),
                              Rotation.from_rotvec(rng.uniform(-0.3, 0.3, 3)).as_matrix()
                              @ pose[:3, :3])
        tau = controller.update(ControllerState(0.0, q, qd))
        assert_close(tau, reference_torque(panda, q, qd, controller),
                     f"τ with force axes {selection.tolist()}")
        if selection.any():  # the force part matters: without it τ is another
            pose_only = configured(panda, {name: getattr(controller, name) for name in (
                "kp", "kd", "null_stiffness", "null_damping", "rest_posture")})
            pose_only.set_target(controller.position_target, controller.rotation_target)
            assert np.abs(pose_only.update(ControllerState(0.0, q, qd)) - tau).max() > 1e-3


# -- the hand on a table ----------------------------------------------------------------------


def hand_shapes() -> tuple:
    """The collision shapes of the Panda's hand and fingers (example-robot-data's meshes)."""
    path = example_robot_urdf("panda")
    return tuple(shape for shape in collision_shapes(path.read_text(), path.parent,
                                                     [path.parents[4]])
                 if shape.link in HAND_LINKS)


def hand_over_a_table(panda: Case, friction: float) -> SimulatedRobot:
    """The Panda at Q_ACROSS, its hand 5 mm over a table of `friction`, at rest."""
    robot, shapes = panda.robot, hand_shapes()
    floor = world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": 0}]})
    lowest = min(contact_points(shape, robot.frame_pose(Q_ACROSS, shape.link),
                                floor.planes[0]).heights.min() for shape in shapes)
    table = world_of({"planes": [{"normal": [0, 0, 1], "point": [0.0, 0.0, lowest - 0.005],
                                  "friction": friction}]})
    return SimulatedRobot(robot, "semi_implicit_euler", DT, q=Q_ACROSS, world=table,
                          collision_shapes=shapes)


def contact_wrench(sim: SimulatedRobot, origin: np.ndarray) -> np.ndarray:
    """The table's wrench on the robot about `origin`, world axes: what a wrist sensor reads."""
    return sum((np.concatenate([c.force, np.cross(c.point - origin, c.force)])
                for c in sim.world_contacts), np.zeros(6))


def test_the_hand_presses_ten_newtons_on_a_table_while_it_slides_along_a_line(panda):
    """The Panda's hand (its fingers' and the hand's collision shapes; the arm's links are
    left out, they stay far above the table) starts 5 mm above a table with μ = 0.2, force
    control along world z, motion control of x, y and the orientation (kp 900 1/s² linear,
    400 angular). It approaches pressing with 2 N (F_d leaks into the motion directions as
    Λ⁻¹ Ω̃ F_d while nothing holds it, and a gentle approach keeps the tilt it lands with
    small), presses with 10 N from 0.6 s, and from 0.8 s follows a target moving along −x at
    4 cm/s for 1.6 s, sliding across the arm.

    In steady sliding (the last second), with the forces the contact solver reports:
    - the total normal force is 10 N within 5 %; it departs from F_d by what the law leaves:
      at rest in contact the frame exerts F_d + Ω̃ Λ Ω ẍ*, the motion servo's effort coupled
      into z, so the table pushes with −F_d,z − (Λ⁻¹)_zz⁻¹ Σ_m (Λ⁻¹)_zm F_m, F the contact
      wrench on the hand about the frame and m the motion directions; the reported force is
      that prediction (Pinocchio's Λ⁻¹) to 0.02 N. Across
      the arm (Λ⁻¹)_zx / (Λ⁻¹)_zz ≈ 0.12: the friction of 2 N moves the normal force by about
      0.25 N; along the arm the ratio is ≈ 1.2 and the same friction would move it by 25 %;
    - the hand lags the moving target by at most 5 mm along the line (the lag that holds the
      friction, μ N / (kp Λ_xx)), stays within 1 mm of it across, and within 0.02 rad of its
      orientation;
    - every contact force pushes (f_n ≥ 0) and stays in its friction cone, ‖f_t‖ ≤ μ f_n.
    """
    robot, oracle, friction = panda.robot, panda.oracle, 0.2
    sim = hand_over_a_table(panda, friction)
    controller = configured(panda, {
        "kp": [900.0] * 3 + [400.0] * 3, "force_axes": [0, 0, 1, 0, 0, 0],
        "force_target": 0.2 * PRESS, "force_damping": 40.0, "rest_posture": Q_ACROSS})
    start = robot.frame_pose(Q_ACROSS, TCP)
    controller.set_target(start[:3, 3], start[:3, :3])
    speed, slide_from, steady_from, end = -0.04, 0.8, 1.4, 2.4  # m/s, s
    normal_forces, predicted, errors = [], [], []
    for k in range(round(end / DT)):
        t = k * DT
        if k == round(0.6 / DT):
            controller.set_force_target(PRESS)
        if t >= slide_from:
            controller.set_target(start[:3, 3] + [speed * (t - slide_from), 0.0, 0.0])
        state = ControllerState(t, sim.q, sim.qd)
        sim.step(controller.update(state))
        for contact in sim.world_contacts:
            normal = float(contact.force @ contact.normal)
            tangential = np.linalg.norm(contact.force - normal * contact.normal)
            assert normal >= 0.0 and tangential <= friction * normal * (1 + 1e-6) + 1e-9, (
                f"t = {t:.3f} s: {contact.link} force {contact.force} outside its cone")
        if t < steady_from:
            continue
        pose = robot.frame_pose(state.q, TCP)
        wrench = contact_wrench(sim, pose[:3, 3])
        J = oracle.jacobian(state.q, TCP)
        mobility = (J @ oracle.mass_matrix_inverse(state.q) @ J.T)[2]  # row z of Λ⁻¹
        coupled = (mobility @ wrench - mobility[2] * wrench[2]) / mobility[2]
        normal_forces.append(sum(float(c.force @ c.normal) for c in sim.world_contacts))
        predicted.append(-PRESS[2] - coupled)
        errors.append(np.concatenate([controller.position_target - pose[:3, 3],
                                      rotation_error(controller.rotation_target,
                                                     pose[:3, :3])]))
    normal_forces, predicted, errors = map(np.array, (normal_forces, predicted, errors))
    assert np.abs(normal_forces - 10.0).max() <= 0.5, normal_forces
    assert np.abs(normal_forces - predicted).max() <= 0.02
    assert np.abs(errors[:, 0]).max() <= 5e-3  # along the line
    assert np.abs(errors[:, 1]).max() <= 1e-3  # across it
    assert np.linalg.norm(errors[:, 3:], axis=1).max() <= 0.02
    travelled = start[0, 3] - robot.frame_pose(sim.q, TCP)[0, 3]
    assert travelled > 0.055  # it slid (the target moved 6.4 cm)


def test_measured_force_feedback_holds_ten_newtons_sliding_along_the_arm(panda):
    """Along the arm (Λ⁻¹)_zy / (Λ⁻¹)_zz is large: open loop the 2 N of friction move the
    normal force by about a quarter. With the table's wrench measured at the hand (a wrist
    sensor) and force_integral_gain 20 /s, the last second of a 1.6 s slide along world y
    holds 10 N within 5 %; open loop it does not (more than 10 % off)."""
    normal = {}
    for gain in (0.0, 20.0):
        sim, robot = hand_over_a_table(panda, 0.2), panda.robot
        controller = configured(panda, {
            "kp": [900.0] * 3 + [400.0] * 3, "force_axes": [0, 0, 1, 0, 0, 0],
            "force_target": 0.2 * PRESS, "force_damping": 40.0, "rest_posture": Q_ACROSS,
            "force_integral_gain": gain})
        start = robot.frame_pose(Q_ACROSS, TCP)
        controller.set_target(start[:3, 3], start[:3, :3])
        forces = []
        for k in range(round(2.4 / DT)):
            t = k * DT
            if k == round(0.6 / DT):
                controller.set_force_target(PRESS)
            if t >= 0.8:
                controller.set_target(start[:3, 3] + [0.0, -0.04 * (t - 0.8), 0.0])
            origin = robot.frame_pose(sim.q, TCP)[:3, 3]
            state = ControllerState(t, sim.q, sim.qd,
                                    wrenches={TCP: contact_wrench(sim, origin)})
            sim.step(controller.update(state))
            if t >= 1.4:
                forces.append(sum(float(c.force @ c.normal) for c in sim.world_contacts))
        normal[gain] = np.array(forces)
    assert np.abs(normal[20.0] - 10.0).max() <= 0.5, normal[20.0]
    assert np.abs(normal[0.0] - 10.0).max() > 1.0


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("parameters", "named"), [
    ({"force_axes": [0, 0, 1]}, "force_axes"),
    ({"force_axes": [0, 0, 2, 0, 0, 0]}, "force_axes"),
    ({"force_axes": [0, 0, 0.5, 0, 0, 0]}, "force_axes"),
    ({"force_axes": [0, 0, float("nan"), 0, 0, 0]}, "force_axes"),
    ({"force_axes": "z"}, "force_axes"),
    ({"force_axes": [0, 0, 1, 0, 0, 0], "force_target": [0, 0, float("nan"), 0, 0, 0]},
     "force_target"),
    ({"force_axes": [0, 0, 1, 0, 0, 0], "force_target": [0, 0, -10]}, "force_target"),
    ({"force_axes": [0, 0, 1, 0, 0, 0], "force_target": [1.0, 0, -10, 0, 0, 0]},
     "force_target"),  # along x, a motion direction
    ({"force_axes": [0, 0, 1, 0, 0, 0], "force_damping": -1.0}, "force_damping"),
    ({"force_axes": [0, 0, 1, 0, 0, 0], "force_damping": [1.0, float("inf")] + [1.0] * 4},
     "force_damping"),
])
def test_bad_force_parameters_are_refused_naming_the_parameter(panda, parameters, named):
    with pytest.raises(ValueError, match=named):
        configured(panda, parameters)


def test_a_bad_force_target_at_runtime_is_refused_and_the_old_one_kept(panda):
    controller = configured(panda, {"force_axes": [0, 0, 1, 0, 0, 0], "force_target": PRESS})
    for wrench in ([0, 0, np.nan, 0, 0, 0], [0, 0, -10], [0, 0, -10, 0.5, 0, 0], "down"):
        with pytest.raises(ValueError, match="force_target"):
            controller.set_force_target(wrench)
    np.testing.assert_array_equal(controller.force_target, PRESS)


def test_a_preview_presses_the_hand_on_a_table_while_it_moves_along_it(panda):
    """A pose_target scenario with force control in a world: the Panda's hand, resting on a
    table (μ 0.2), moves 3 cm along it pressing 10 N down, the preview feeding the table's
    wrench back (force_integral_gain). Over the last half second the table carries 10 N
    within 5 %, 1 % on average (the contact solver's forces; open loop 9.74 N: the motion
    servo's share), the hand slid about 3 cm and never lifted, the metrics say so."""
    path = example_robot_urdf("panda")
    shapes = tuple(shape for shape in collision_shapes(path.read_text(), path.parent,
                                                       [path.parents[4]])
                   if shape.link in HAND_LINKS)
    start = panda.robot.frame_pose(Q_ACROSS, TCP)
    floor = world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": 0}]})
    lowest = min(contact_points(shape, panda.robot.frame_pose(Q_ACROSS, shape.link),
                                floor.planes[0]).heights.min() for shape in shapes)
    spec = {"name": "wipe", "world": {"planes": [
                {"normal": [0, 0, 1], "point": [0.0, 0.0, float(lowest)], "friction": 0.2}]},
            "pose_target": {"frame": TCP, "position": (start[:3, 3] - [0.03, 0, 0]).tolist(),
                            "kp": [900.0] * 3 + [400.0] * 3, "force_axes": [0, 0, 1, 0, 0, 0],
                            "force_target": PRESS.tolist(), "force_damping": 40.0,
                            "force_integral_gain": 20.0}}
    scenario = scenario_from_mapping(panda.robot, spec)
    result = preview(panda.robot, [scenario], PreviewSettings(horizon=1.5, dt=DT), Q_ACROSS,
                     np.zeros(7), collision_shapes=shapes)[0]
    last = result.times[result.samples] >= 1.0  # the last half second, the hand arrived
    pressed = np.array([sum(float(c.force @ c.normal) for c in contacts)
                        for contacts, late in zip(result.contacts, last, strict=True) if late])
    assert np.abs(pressed - 10.0).max() <= 0.5 and abs(pressed.mean() - 10.0) <= 0.1, pressed
    travelled = start[0, 3] - result.frame_path[-1, 0, 3]
    assert travelled == pytest.approx(0.03, abs=5e-3)
    contact = result.metrics.contact
    assert contact.lost_contacts == 0 and contact.penetration < 2e-3
    assert contact.slip_distance == pytest.approx(travelled, rel=0.2)


@pytest.mark.parametrize(("field", "value"), [
    ("force_axes", [0, 0, 2, 0, 0, 0]), ("force_axes", [0, 0, 1]),
    ("force_target", [1.0, 0, -10, 0, 0, 0]), ("force_damping", -1.0),
    ("force_integral_gain", -1.0)])
def test_a_preview_pose_target_refuses_bad_force_fields(panda, field, value):
    spec = {"name": "press", "pose_target": {"frame": TCP, "position": [0.4, 0.0, 0.3],
                                             "force_axes": [0, 0, 1, 0, 0, 0], field: value}}
    with pytest.raises(ScenarioError, match=f"pose_target.{field}"):
        scenario_from_mapping(panda.robot, spec)
