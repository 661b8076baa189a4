"""Armature (the reflected rotor inertia on M's diagonal) against Pinocchio with
``model.armature`` set, on the bundled Panda, a real robot from example-robot-data and generated
chains and trees: every algorithm that involves M, one state through the C entries and a batch;
its loading from a mapping or a YAML file and the errors of bad armature; a hand without mass
made usable by armature; and the constraint-force methods, which refuse it.

Armature values are of a geared arm's order (0.01–0.5 kg·m²) and a third of the joints have
none, so every comparison fails by far when armature is ignored or put on the wrong joint.
Tolerances as in test_robot_against_pinocchio (assert_close, RTOL relative, scaled by κ beyond
KAPPA_REF).
"""

from __future__ import annotations

import dataclasses
import pickle
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.model import ModelError, load_urdf, load_urdf_string
from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.sim import SimulatedRobot
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import scenario_from_mapping
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.tolerances import KAPPA_REF, assert_close

STATES = 2
BATCH = 5
CG_TOL = 1e-11
CONSTRAINT_FORCE_METHODS = (
    "schur", "schur_bcr", "jacobi", "gauss_seidel", "sor", "jacobi_si", "jacobi_cg",
)
PANDA_JOINTS = tuple(f"panda_joint{k}" for k in range(1, 8))


@dataclass(frozen=True, eq=False)
class ArmedCase:
    """A robot with armature, its Pinocchio oracle with the same, and a deep tip frame."""

    name: str
    robot: Robot
    oracle: PinocchioOracle
    armature: dict[str, float]
    tip: str
    tip_depth: int

    def states(self, count: int, seed: int) -> tuple[np.ndarray, ...]:
        """(q, qd, qdd or tau) (count, n), q inside the limits cut to [-π, π]."""
        model = self.robot.model
        rng = np.random.default_rng([len(self.name), seed])
        low, high = np.maximum(model.lower, -np.pi), np.minimum(model.upper, np.pi)
        shape = (count, self.robot.nv)
        return rng.uniform(low, high, shape), rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)


def armature_of(joint_names, seed: int) -> dict[str, float]:
    """Armature on two joints in three, 0.01–0.5."""
    rng = np.random.default_rng(seed)
    return {name: float(rng.uniform(0.01, 0.5)) for k, name in enumerate(joint_names) if k % 3}


def armed_case(name: str, source, is_string: bool, tip: str | None = None) -> ArmedCase:
    load = Robot.from_urdf_string if is_string else Robot.from_urdf
    plain = load(source)
    armature = armature_of(plain.joint_names, seed=len(name))
    robot = load(source, armature=armature)
    oracle = PinocchioOracle(source, robot.joint_names, armature=armature, is_string=is_string)
    depth = np.zeros(robot.nv, dtype=np.int64)
    for i, p in enumerate(robot.model.parent):
        depth[i] = 1 + (depth[p] if p >= 0 else 0)
    deepest = int(np.argmax(depth))
    if tip is None:  # generated robots: link_k is moved by joint_k
        tip = f"link_{robot.joint_names[deepest].removeprefix('joint_')}"
    body = robot.model.frame_body[robot.model.frame_index(tip)]
    return ArmedCase(name, robot, oracle, armature, tip, int(depth[body]))


CASES = {
    "bundled_panda": lambda: armed_case("bundled_panda", bundled_urdf("panda"), False,
                                        "panda_hand_tcp"),
    "kinova": lambda: armed_case("kinova", example_robot_urdf("kinova"), False,
                                 "j2s6s200_end_effector"),
    "chain12": lambda: armed_case("chain12", random_chain_urdf(12, seed=5), True),
    "tree24": lambda: armed_case("tree24", random_tree_urdf(24, seed=2), True),
}
_BUILT: dict[str, ArmedCase] = {}


@pytest.fixture(scope="module", params=tuple(CASES))
def case(request: pytest.FixtureRequest) -> ArmedCase:
    if request.param not in _BUILT:
        _BUILT[request.param] = CASES[request.param]()
    return _BUILT[request.param]


def kinetic_energy(oracle: PinocchioOracle, q: np.ndarray, qd: np.ndarray) -> float:
    """½ q̇ᵀ M q̇ with Pinocchio's M: its computeKineticEnergy (4.1) leaves out the armature
    of a revolute joint on an axis other than x, y or z (JointModelRevoluteUnaligned)."""
    return 0.5 * qd @ oracle.mass_matrix(q) @ qd


def kappa_scale(oracle: PinocchioOracle, q: np.ndarray) -> float:
    """The tolerance's growth with κ(M) beyond KAPPA_REF, as test_robot_against_pinocchio allows."""
    return max(1.0, np.linalg.cond(oracle.mass_matrix(q)) / KAPPA_REF)


# -- the algorithms against Pinocchio ---------------------------------------------------------


def test_mass_matrix_is_the_rigid_one_plus_the_armature_on_its_diagonal(case) -> None:
    """Every mass_matrix method, and mass_matrix_diagonal, against the robot without armature:
    M differs by diag(armature) exactly where the armature is, nowhere else."""
    plain = Robot(dataclasses.replace(case.robot.model, armature=None))
    (q, _, _) = case.states(1, seed=1)
    added = np.diag(case.robot.model.armature)
    assert np.count_nonzero(added) == len(case.armature) > 0
    for method in Robot.MASS_MATRIX_METHODS:
        if method == "recursive_doubling" and case.name == "tree24":
            continue
        difference = case.robot.mass_matrix(q[0], method) - plain.mass_matrix(q[0], method)
        assert_close(difference, added, f"{case.name} {method} M minus M_rigid")
    assert_close(case.robot.mass_matrix_diagonal(q[0]) - plain.mass_matrix_diagonal(q[0]),
                 np.diag(added), f"{case.name} diag M minus diag M_rigid")


def test_inverse_dynamics_and_mass_matrices(case) -> None:
    q, qd, qdd = case.states(STATES, seed=2)
    f_ext = np.random.default_rng(3).uniform(-5, 5, (case.robot.nv, 6))
    for i in range(STATES):
        what = f"{case.name} state {i}"
        assert_close(case.robot.inverse_dynamics(q[i], qd[i], qdd[i]),
                     case.oracle.rnea(q[i], qd[i], qdd[i]), what + " τ")
        assert_close(case.robot.inverse_dynamics(q[i], qd[i], qdd[i], f_ext=f_ext),
                     case.oracle.rnea(q[i], qd[i], qdd[i], f_ext), what + " τ with f_ext")
        assert_close(case.robot.bias_forces(q[i], qd[i]), case.oracle.bias_forces(q[i], qd[i]),
                     what + " bias forces")
        M = case.oracle.mass_matrix(q[i])
        for method in Robot.MASS_MATRIX_METHODS:
            if method == "recursive_doubling" and case.name == "tree24":
                continue
            assert_close(case.robot.mass_matrix(q[i], method), M, f"{what} M {method}")
        assert_close(case.robot.mass_matrix_diagonal(q[i]), np.diag(M), what + " diag M")
        Minv, scale = case.oracle.mass_matrix_inverse(q[i]), kappa_scale(case.oracle, q[i])
        for method in ("aba", "ltdl"):
            assert_close(case.robot.mass_matrix_inverse(q[i], method), Minv,
                         f"{what} M⁻¹ {method}", scale=scale)
        assert case.robot.kinetic_energy(q[i], qd[i]) == pytest.approx(
            kinetic_energy(case.oracle, q[i], qd[i]), rel=1e-12)


def test_forward_dynamics_every_method_that_models_armature(case) -> None:
    """ABA and the factored route to RTOL (scaled by κ(M)); CG and PCG to their tolerance:
    the residual of M q̈ = τ − b with Pinocchio's M and b."""
    q, qd, tau = case.states(STATES, seed=4)
    for i in range(STATES):
        expected = case.oracle.aba(q[i], qd[i], tau[i])
        scale = kappa_scale(case.oracle, q[i])
        for method in ("aba", "cholesky"):
            qdd = case.robot.forward_dynamics(q[i], qd[i], tau[i], method)
            assert_close(qdd, expected, f"{case.name} state {i} q̈ {method}", scale=scale)
        rhs = tau[i] - case.oracle.bias_forces(q[i], qd[i])
        M = case.oracle.mass_matrix(q[i])
        for method in ("cg", "pcg"):
            qdd, info = case.robot.forward_dynamics(q[i], qd[i], tau[i], method, tol=CG_TOL,
                                                    info=True)
            assert info.converged, f"{case.name} {method}: {info}"
            assert np.linalg.norm(rhs - M @ qdd) <= 10 * CG_TOL * np.linalg.norm(rhs), method


def test_operational_space_inertia_recursive_and_dense(case) -> None:
    """Λ⁻¹ of the tip and of a stacked task (the tip and a body halfway up), Λ where the tip
    has six joints above it, Λ⁻¹ F and operational_space's Λ⁻¹ and J̄, against J M⁻¹ Jᵀ from
    Pinocchio."""
    (q, qd, _) = case.states(STATES, seed=5)
    middle = case.robot.model.frame_names[
        list(case.robot.model.frame_body).index(case.robot.nv // 2)]
    for i in range(STATES):
        J = np.vstack([case.oracle.jacobian(q[i], frame) for frame in (case.tip, middle)])
        Minv = case.oracle.mass_matrix_inverse(q[i])
        expected = J @ Minv @ J.T
        scale = kappa_scale(case.oracle, q[i])
        for method in ("recursive", "dense"):
            what = f"{case.name} state {i} {method}"
            tip = case.robot.operational_space_inertia(q[i], case.tip, method, inverse=True)
            assert_close(tip, expected[:6, :6], what + " Λ⁻¹", scale=scale)
            stacked = case.robot.operational_space_inertia(q[i], [case.tip, middle], method,
                                                           inverse=True)
            assert_close(stacked, expected, what + " stacked Λ⁻¹", scale=scale)
            if case.tip_depth >= 6:
                kappa = max(scale, np.linalg.cond(expected[:6, :6]) / KAPPA_REF)
                assert_close(case.robot.operational_space_inertia(q[i], case.tip, method),
                             np.linalg.inv(expected[:6, :6]), what + " Λ", scale=kappa)
            task = case.robot.operational_space(q[i], qd[i], case.tip, method)
            assert_close(task.Lambda_inv, expected[:6, :6], what + " task Λ⁻¹", scale=scale)
            assert_close(task.Jbar, Minv @ J[:6].T @ task.Lambda, what + " J̄", scale=scale)
        force = np.linspace(-3.0, 3.0, 6)
        assert_close(case.robot.operational_space_inertia_inverse_times(q[i], case.tip, force),
                     expected[:6, :6] @ force, f"{case.name} Λ⁻¹ F", scale=scale)


def test_single_states_and_a_batch(case) -> None:
    """The single-state C entries (C-contiguous float64 rows) and one batch call, with two
    threads, against Pinocchio state by state."""
    q, qd, qdd = case.states(BATCH, seed=6)
    robot = case.robot.with_threads(2)
    batch = {
        "τ": robot.inverse_dynamics(q, qd, qdd), "M": robot.mass_matrix(q),
        "diag M": robot.mass_matrix_diagonal(q), "M⁻¹": robot.mass_matrix_inverse(q),
        "q̈": robot.forward_dynamics(q, qd, qdd), "T": robot.kinetic_energy(q, qd),
        "Λ⁻¹": robot.operational_space_inertia(q, case.tip, inverse=True),
    }
    for b in range(BATCH):
        oracle, scale = case.oracle, kappa_scale(case.oracle, q[b])
        M, Minv = oracle.mass_matrix(q[b]), oracle.mass_matrix_inverse(q[b])
        J = oracle.jacobian(q[b], case.tip)
        expected = {
            "τ": (oracle.rnea(q[b], qd[b], qdd[b]), 1.0), "M": (M, 1.0),
            "diag M": (np.diag(M), 1.0), "M⁻¹": (Minv, scale),
            "q̈": (oracle.aba(q[b], qd[b], qdd[b]), scale),
            "T": (kinetic_energy(oracle, q[b], qd[b]), 1.0), "Λ⁻¹": (J @ Minv @ J.T, scale),
        }
        single = {
            "τ": case.robot.inverse_dynamics(q[b], qd[b], qdd[b]),
            "M": case.robot.mass_matrix(q[b]), "diag M": case.robot.mass_matrix_diagonal(q[b]),
            "M⁻¹": case.robot.mass_matrix_inverse(q[b]),
            "q̈": case.robot.forward_dynamics(q[b], qd[b], qdd[b]),
            "T": case.robot.kinetic_energy(q[b], qd[b]),
            "Λ⁻¹": case.robot.operational_space_inertia(q[b], case.tip, inverse=True),
        }
        for what, (reference, tolerance_scale) in expected.items():
            assert_close(single[what], reference, f"{case.name} {what} single state {b}",
                         scale=tolerance_scale)
            assert_close(batch[what][b], reference, f"{case.name} {what} batch state {b}",
                         scale=tolerance_scale)


def test_constraint_force_methods_refuse_armature(case) -> None:
    (q, qd, tau) = case.states(1, seed=7)
    armed = re.escape(next(iter(case.armature)))
    for method in CONSTRAINT_FORCE_METHODS:
        with pytest.raises(ValueError, match=rf"forward_dynamics: method '{method}' does not "
                                             rf"model armature.*{armed}.*use 'aba'"):
            case.robot.forward_dynamics(q[0], qd[0], tau[0], method)
    for method in ("schur", "schur_bcr"):
        with pytest.raises(ValueError, match=rf"'{method}' does not model armature.*'ltdl'"):
            case.robot.mass_matrix_inverse(q, method)
        with pytest.raises(ValueError, match=rf"'{method}' does not model armature.*'dense'"):
            case.robot.operational_space_inertia(q[0], case.tip, method)
        with pytest.raises(ValueError, match=rf"'{method}' does not model armature"):
            case.robot.operational_space(q[0], qd[0], case.tip, method)


# -- a hand without mass ----------------------------------------------------------------------


def massless_hand_panda() -> str:
    """The bundled Panda without the <inertial> of the links joint 7 moves (panda_link7 and the
    panda_hand fixed to it): joint 7 moves no mass."""
    text = bundled_urdf("panda").read_text()
    for link in ("panda_link7", "panda_hand"):
        text, count = re.subn(rf'(<link name="{link}">)\s*<inertial>.*?</inertial>', r"\1", text,
                              flags=re.S)
        assert count == 1, link
    return text


def test_a_joint_that_moves_no_mass_works_with_armature() -> None:
    text = massless_hand_panda()
    armature = {"panda_joint7": 0.05}
    robot = Robot.from_urdf_string(text, armature=armature)
    assert robot.model.spatial_inertia[6].max() == 0.0
    oracle = PinocchioOracle(text, robot.joint_names, armature=armature, is_string=True)
    rng = np.random.default_rng(8)
    for _ in range(STATES):
        q, qd, tau = rng.uniform(-1.0, 1.0, (3, 7))
        for method in ("aba", "cholesky"):
            qdd = robot.forward_dynamics(q, qd, tau, method)
            assert np.isfinite(qdd).all()
            assert_close(qdd, oracle.aba(q, qd, tau), f"massless hand q̈ {method}",
                         scale=kappa_scale(oracle, q))
        assert_close(robot.mass_matrix_inverse(q), oracle.mass_matrix_inverse(q),
                     "massless hand M⁻¹", scale=kappa_scale(oracle, q))


# -- simulation and the preview's rollout -----------------------------------------------------


@pytest.fixture(scope="module")
def armed_panda() -> Robot:
    return Robot.from_urdf(bundled_urdf("panda"), armature=dict.fromkeys(PANDA_JOINTS, 0.2))


def test_simulated_robot_and_the_compiled_rollout_follow_pinocchio(armed_panda) -> None:
    """An open-loop torque profile stepped by SimulatedRobot and rolled out by the preview's
    kernel (semi-implicit Euler), against the same steps over Pinocchio's ABA with the
    armature, the URDF's damping and smoothed friction, to 1e-9 rad."""
    robot, model = armed_panda, armed_panda.model
    oracle = PinocchioOracle(bundled_urdf("panda"), robot.joint_names,
                             armature=dict.fromkeys(PANDA_JOINTS, 0.2))
    q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
    settings = PreviewSettings(horizon=0.05, integrator="semi_implicit_euler")
    effort = [[0.0] * 7, [5.0, 5, 5, 5, 1, 1, 1]]
    scenario = scenario_from_mapping(robot, {"name": "push", "torque_profile": {
        "frame": "panda_hand_tcp", "times": [0.0, 0.05], "efforts": effort}}, 0)
    (result,) = preview(robot, [scenario], settings, q0)
    simulated = SimulatedRobot(robot, "semi_implicit_euler", settings.dt, q=q0)
    torques = scenario.reference(result.times[:-1], q0)[:, 0]
    q, qd = q0.copy(), np.zeros(7)
    for k in range(settings.steps):
        simulated.step(torques[k])
        friction = model.friction * np.tanh(qd / settings.friction_velocity)
        qd = qd + settings.dt * oracle.aba(q, qd, torques[k] - model.damping * qd - friction)
        q = q + settings.dt * qd
        qd = np.clip(qd, -model.velocity_limit, model.velocity_limit)
        np.testing.assert_allclose(simulated.q, q, rtol=0, atol=1e-9)
        np.testing.assert_allclose(result.q[k + 1], q, rtol=0, atol=1e-9)


def test_compiled_operational_space_rollout_is_the_robots(armed_panda) -> None:
    """The preview's operational-space law (its own CRBA and Cholesky of M) under armature:
    its energy at the samples is the Robot's ½ q̇ᵀ M q̇ + V, and the trajectory is the one
    stepped with the "cholesky" forward dynamics, to 1e-9 rad."""
    robot = armed_panda
    q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
    start = robot.frame_pose(q0, "panda_hand_tcp")[:3, 3]
    scenario = scenario_from_mapping(robot, {"name": "reach", "pose_target": {
        "frame": "panda_hand_tcp", "position": (start + np.array([0.1, 0.05, -0.1])).tolist(),
        "orientation": [1.0, 0.0, 0.0, 0.0], "kp": 100.0, "kd": 20.0}}, 0)
    settings = PreviewSettings(horizon=0.05)
    (compiled,) = preview(robot, [scenario], settings, q0)
    (stepped,) = preview(robot, [scenario], PreviewSettings(
        horizon=0.05, forward_dynamics_method="cholesky"), q0)
    np.testing.assert_allclose(compiled.q, stepped.q, rtol=0, atol=1e-9)
    q, qd = compiled.q[compiled.samples], compiled.qd[compiled.samples]
    np.testing.assert_allclose(compiled.energy,
                               robot.kinetic_energy(q, qd) + robot.potential_energy(q),
                               rtol=1e-12, atol=1e-12)


# -- loading ----------------------------------------------------------------------------------


@pytest.mark.parametrize("nested", [False, True], ids=["top_level", "under_armature_key"])
def test_armature_from_a_yaml_file(tmp_path: Path, nested: bool) -> None:
    lines = [f"{'  ' if nested else ''}panda_joint{k}: {0.1 * k}" for k in (1, 4)]
    header = ["controller: {kp: 100}", "armature:"] if nested else []
    path = tmp_path / "armature.yaml"
    path.write_text("\n".join(header + lines) + "\n")
    robot = Robot.from_urdf(bundled_urdf("panda"), armature=path)
    np.testing.assert_array_equal(robot.model.armature, [0.1, 0, 0, 0.4, 0, 0, 0])
    same = Robot.from_urdf_string(bundled_urdf("panda").read_text(), armature=str(path))
    np.testing.assert_array_equal(same.model.armature, robot.model.armature)


def test_armature_from_a_mapping_and_with_armature() -> None:
    plain = Robot.from_urdf(bundled_urdf("panda"))
    np.testing.assert_array_equal(plain.model.armature, np.zeros(7))
    assert not plain.model.armature.flags.writeable
    armed = plain.with_armature({"panda_joint2": 0.3})
    np.testing.assert_array_equal(armed.model.armature, [0, 0.3, 0, 0, 0, 0, 0])
    loaded = load_urdf(bundled_urdf("panda"), armature={"panda_joint2": 0.3})
    np.testing.assert_array_equal(loaded.armature, armed.model.armature)
    q = np.full(7, 0.2)
    assert armed.mass_matrix(q)[1, 1] == pytest.approx(plain.mass_matrix(q)[1, 1] + 0.3)
    again = armed.with_armature({})
    np.testing.assert_array_equal(again.mass_matrix(q), plain.mass_matrix(q))
    shipped = pickle.loads(pickle.dumps(armed))  # as the process and Dask backends send it
    np.testing.assert_array_equal(shipped.mass_matrix(q), armed.mass_matrix(q))
    locked = Robot.from_urdf_string(random_chain_urdf(4, seed=1), armature={"joint_3": 1.0},
                                    locked_joints={"joint_1": 0.2})
    np.testing.assert_array_equal(locked.model.armature, [0.0, 0.0, 1.0])


@pytest.mark.parametrize(("armature", "message"), [
    ({"panda_joint9": 0.1}, r"joint 'panda_joint9': not a moving joint .* panda_joint1, "),
    ({"panda_joint8": 0.1}, r"joint 'panda_joint8': not a moving joint"),  # fixed
    ({"panda_joint3": -0.1}, r"joint 'panda_joint3' must be a finite number ≥ 0 .*-0.1"),
    ({"panda_joint3": float("nan")}, r"joint 'panda_joint3' must be a finite number ≥ 0"),
    ({"panda_joint3": float("inf")}, r"joint 'panda_joint3' must be a finite number ≥ 0"),
    ({"panda_joint3": "heavy"}, r"joint 'panda_joint3' must be a number .*'heavy'"),
    ({"panda_joint3": True}, r"joint 'panda_joint3' must be a number"),
    ([0.1, 0.2], r"armature must map joint names to values; got list"),
])
def test_bad_armature_is_a_model_error_naming_the_joint(armature, message) -> None:
    with pytest.raises(ModelError, match=r"panda\.urdf: .*" + message):
        Robot.from_urdf(bundled_urdf("panda"), armature=armature)
    with pytest.raises(ModelError, match=r"robot 'panda': .*" + message):
        Robot.from_urdf(bundled_urdf("panda")).with_armature(armature)


def test_a_locked_joint_takes_no_armature() -> None:
    with pytest.raises(ModelError, match=r"<string>: armature of joint 'joint_1': not a moving"):
        load_urdf_string(random_chain_urdf(3, seed=1), locked_joints={"joint_1": 0.0},
                         armature={"joint_1": 0.1})


@pytest.mark.parametrize(("text", "message"), [
    ("panda_joint1: -1\n", r"armature of joint 'panda_joint1' must be a finite number ≥ 0"),
    ("armature:\n  nope: 1\n", r"armature of joint 'nope': not a moving joint"),
    ("- 0.1\n- 0.2\n", r"needs a mapping joint name → armature, at the top level or under "
                       r"the key 'armature'"),
    ("armature: 0.1\n", r"needs a mapping"),
    ("panda_joint1: [1\n", r"not valid YAML"),
])
def test_a_bad_armature_file_is_a_model_error_naming_the_file(tmp_path, text, message) -> None:
    path = tmp_path / "rotors.yaml"
    path.write_text(text)
    where = r"panda\.urdf: armature file .*rotors\.yaml: .*"
    with pytest.raises(ModelError, match=where + message):
        Robot.from_urdf(bundled_urdf("panda"), armature=path)


def test_a_missing_armature_file_is_an_os_error(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        Robot.from_urdf(bundled_urdf("panda"), armature=tmp_path / "missing.yaml")
