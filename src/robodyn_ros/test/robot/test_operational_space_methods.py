"""The routes to Λ⁻¹ and Λ (Robot.OPERATIONAL_SPACE_METHODS) against the dense route and
Pinocchio: J (computeFrameJacobian, LOCAL_WORLD_ALIGNED) and M⁻¹ (computeMinverse) give the
reference Λ⁻¹ = J M⁻¹ Jᵀ; stacked tasks, task axes, near-singular configurations, batches, the
controller plugin and the errors of bad input. (dynamics_node serving each method:
ros/test_dynamics_node.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.control.operational_space_controller import OperationalSpace
from robodyn_ros.control.plugin import ControllerState
from robodyn_ros.robot.operational_space import SCHUR_METHODS

from helpers.cases import case_named
from helpers.tolerances import KAPPA_REF, RTOL, assert_close

PANDA_TCP = "panda_hand_tcp"
STATES = 2
# The Schur route's Λ⁻¹ is exact to about this, relative (test_methods_equal_pinocchio_and_dense
# holds it to RTOL): 𝒜 carries the inverse inertias of light links. What is computed from Λ⁻¹
# (Λ, J̄, μ, p) then carries up to κ(Λ⁻¹) times it.
SCHUR_RTOL = 1e-12


def pinocchio_task_inverse(case, q: np.ndarray, frames) -> np.ndarray:
    """J M⁻¹ Jᵀ of the stacked task, all from Pinocchio."""
    J = np.vstack([case.oracle.jacobian(q, frame) for frame in frames])
    return J @ case.oracle.mass_matrix_inverse(q) @ J.T


def test_methods_equal_pinocchio_and_dense(arm_case) -> None:
    """Λ⁻¹ and Λ of the tip by every method, at random states (tips away from singularities,
    see test_robot_against_pinocchio). The tolerance grows with κ(M) beyond KAPPA_REF as for
    M⁻¹, and for Λ, an inverse, also with κ(Λ⁻¹) (up to 7e7 for the UR5's tool0)."""
    case = arm_case
    methods = ("recursive", *SCHUR_METHODS)
    q, _, _, _ = case.states(STATES, seed=31)
    for i in range(STATES):
        expected_inverse = pinocchio_task_inverse(case, q[i], [case.tip])
        expected = case.oracle.operational_space_inertia(q[i], case.tip)
        dense = case.robot.operational_space_inertia(q[i], case.tip, "dense", inverse=True)
        scale = max(1.0, np.linalg.cond(case.oracle.mass_matrix(q[i])) / KAPPA_REF)
        for method in methods:
            what = f"{case.name} state {i} {method}"
            inverse = case.robot.operational_space_inertia(q[i], case.tip, method, inverse=True)
            assert_close(inverse, expected_inverse, what + " Λ⁻¹ vs Pinocchio", scale=scale)
            assert_close(inverse, dense, what + " Λ⁻¹ vs dense", scale=scale)
            Lambda = case.robot.operational_space_inertia(q[i], case.tip, method)
            kappa = np.linalg.cond(expected_inverse) / KAPPA_REF
            assert_close(Lambda, expected, what + " Λ vs Pinocchio", scale=max(scale, kappa))


@pytest.mark.parametrize(
    ("name", "frames"),
    [
        ("talos", ["arm_left_7_link", "arm_right_7_link", "torso_2_link", "leg_left_6_link"]),
        ("tree40_seed1", ["link_39", "link_3", "link_20", "link_12"]),
    ],
)
def test_stacked_task_on_a_tree(name: str, frames: list[str]) -> None:
    """Both hands of a humanoid (coupled through the torso), a torso frame and a foot (coupled
    only through the fixed base: zero cross terms), and frames on a random tree: the whole
    stacked Λ⁻¹ by the recursion, cross terms included; then a selection of axes."""
    case = case_named(name)
    q, _, _, _ = case.states(1, seed=32)
    expected = pinocchio_task_inverse(case, q[0], frames)
    inverse = case.robot.operational_space_inertia(q[0], frames, "recursive", inverse=True)
    assert_close(inverse, expected, f"{name} stacked Λ⁻¹")
    rows = [6 * k + axis for k in range(len(frames)) for axis in (5, 0, 1)]
    chosen = case.robot.operational_space_inertia(
        q[0], frames, "recursive", inverse=True, axes="rz x y"
    )
    assert_close(chosen, expected[np.ix_(rows, rows)], f"{name} C Λ⁻¹ Cᵀ")


def test_position_task_of_a_redundant_arm(load_robot) -> None:
    """A position-only task (m = 3) on a 7-joint arm: Λ = (C J M⁻¹ Jᵀ Cᵀ)⁻¹ by every method;
    stacked with the wrist centre's position, C Λ⁻¹ Cᵀ by the recursion (rank 5: the
    spherical wrist keeps the tcp on a sphere about the wrist centre)."""
    robot: Robot = load_robot("bundled_panda")
    q = np.array([0.3, -0.5, 0.2, -2.0, 0.4, 1.7, 0.6])
    J = robot.jacobian(q, PANDA_TCP)[:3]
    expected = np.linalg.inv(J @ robot.mass_matrix_inverse(q) @ J.T)
    for method in robot.OPERATIONAL_SPACE_METHODS:
        Lambda = robot.operational_space_inertia(q, PANDA_TCP, method, axes="xyz")
        assert_close(Lambda, expected, f"{method} position Λ")
    frames = [PANDA_TCP, "panda_link5"]
    J = np.vstack([robot.jacobian(q, frame)[:3] for frame in frames])
    stacked = robot.operational_space_inertia(q, frames, "recursive", inverse=True, axes="xyz")
    assert_close(stacked, J @ robot.mass_matrix_inverse(q) @ J.T, "stacked position Λ⁻¹")


def test_near_singular_configurations(load_robot) -> None:
    """The Panda stretched out: Λ⁻¹ by every method equals J M⁻¹ Jᵀ as it loses rank; the
    operational-space dynamics by every method damp Λ alike, finite, with the same rank."""
    robot: Robot = load_robot("bundled_panda")
    zero = np.zeros(7)
    for offset in (1e-3, 1e-7, 0.0):
        q = np.array([0.0, offset, 0.0, -offset, 0.0, offset, 0.0])
        J = robot.jacobian(q, PANDA_TCP)
        expected = J @ robot.mass_matrix_inverse(q) @ J.T
        dense = robot.operational_space(q, zero, PANDA_TCP, singular_threshold=1e-4)
        for method in ("recursive", *SCHUR_METHODS):
            inverse = robot.operational_space_inertia(q, PANDA_TCP, method, inverse=True)
            assert_close(inverse, expected, f"offset {offset} {method} Λ⁻¹")
            task = robot.operational_space(q, zero, PANDA_TCP, method, singular_threshold=1e-4)
            assert task.rank == dense.rank and np.all(np.isfinite(task.Lambda))
            assert_close(task.Lambda, dense.Lambda, f"offset {offset} {method} damped Λ",
                         rtol=1e-6)
    assert dense.singular and dense.rank == 5


def test_operational_space_by_each_method(load_robot) -> None:
    """Robot.operational_space with Λ⁻¹ from each method: every quantity as by the dense
    route (for SCHUR_METHODS to κ(Λ⁻¹) · SCHUR_RTOL when that is larger than RTOL), also for a
    stacked task with a selection of axes; a batch equals its states one by one."""
    robot: Robot = load_robot("bundled_panda")
    rng = np.random.default_rng(33)
    q, qd = rng.uniform(-1.0, 1.0, (3, 7)), rng.uniform(-1.0, 1.0, (3, 7))
    names = ("J", "Lambda_inv", "Lambda", "Jbar", "mu", "p", "Jdot_qd")
    for method, frames, axes in (
        ("schur", PANDA_TCP, None),
        ("schur_bcr", PANDA_TCP, "xyz"),
        ("recursive", [PANDA_TCP, "panda_link4"], [2]),  # two heights, rank 2
    ):
        dense = robot.operational_space(q[0], qd[0], frames, axes=axes)
        task = robot.operational_space(q[0], qd[0], frames, method, axes=axes)
        scale = max(1.0, dense.condition * SCHUR_RTOL / RTOL) if method in SCHUR_METHODS else 1.0
        for name in names:
            assert_close(getattr(task, name), getattr(dense, name), f"{method} {name}",
                         scale=scale)
        assert task.rank == dense.rank and task.J.shape == dense.J.shape
    batch = robot.operational_space(q, qd, [PANDA_TCP, "panda_link4"], "recursive", axes="xyz")
    for b in range(3):
        single = robot.operational_space(q[b], qd[b], [PANDA_TCP, "panda_link4"], "recursive",
                                         axes="xyz")
        for name in names:
            assert np.array_equal(getattr(batch, name)[b], getattr(single, name)), name


def test_batch_equals_one_by_one(load_robot) -> None:
    robot: Robot = load_robot("bundled_panda")
    q = np.random.default_rng(34).uniform(-1.0, 1.0, (3, 7))
    batch = robot.operational_space_inertia(q, PANDA_TCP, "recursive", inverse=True)
    assert batch.shape == (3, 6, 6)
    for b in range(3):
        single = robot.operational_space_inertia(q[b], PANDA_TCP, "recursive", inverse=True)
        assert np.array_equal(batch[b], single)


def test_inverse_inertia_times_a_force(load_robot) -> None:
    """Λ⁻¹ F for one right-hand side equals Λ⁻¹ (dense) times F: one frame, and a stacked task
    of two frames with a selection of axes; a wrong F is refused."""
    robot: Robot = load_robot("bundled_panda")
    rng = np.random.default_rng(35)
    q = rng.uniform(-1.0, 1.0, 7)
    for frames, axes in ((PANDA_TCP, None), ([PANDA_TCP, "panda_link4"], "xy rz")):
        inverse = robot.operational_space_inertia(q, frames, inverse=True, axes=axes)
        force = rng.uniform(-10.0, 10.0, inverse.shape[0])
        applied = robot.operational_space_inertia_inverse_times(q, frames, force, axes=axes)
        assert_close(applied, inverse @ force, f"{frames} Λ⁻¹ F")
    with pytest.raises(ValueError, match="force must have shape"):
        robot.operational_space_inertia_inverse_times(q, PANDA_TCP, np.ones(3))


def test_controller_with_each_method(load_robot) -> None:
    """The operational-space controller gives the same torques whatever route Λ⁻¹ takes."""
    robot: Robot = load_robot("bundled_panda")
    state = ControllerState(0.0, np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7]), np.full(7, 0.2))
    torques = {}
    for method in robot.OPERATIONAL_SPACE_METHODS:
        controller = OperationalSpace()
        controller.configure(robot, {"frame": PANDA_TCP, "operational_space_method": method})
        controller.set_target(position=[0.4, 0.1, 0.5], orientation=[1.0, 0.0, 0.0, 0.0])
        torques[method] = controller.update(state)
    for method, tau in torques.items():
        assert_close(tau, torques["dense"], f"controller torques, {method}")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda r, q: r.operational_space_inertia(q, PANDA_TCP, "sparse"), ValueError,
         "unknown method 'sparse'; choose one of dense, recursive, schur, schur_bcr"),
        (lambda r, q: r.operational_space_inertia(q, PANDA_TCP, axes="xq"), ValueError,
         "axes: 'q' is not a task axis"),
        (lambda r, q: r.operational_space_inertia(q, PANDA_TCP, axes=[6]), ValueError,
         "axes: 6 is not a task axis"),
        (lambda r, q: r.operational_space_inertia(q, PANDA_TCP, axes="xx"), ValueError,
         "each once"),
        (lambda r, q: r.operational_space(q, q, PANDA_TCP, axes=[]), ValueError,
         "at least one task axis"),
        (lambda r, q: r.operational_space_inertia(q, [PANDA_TCP, "panda_link4"], "schur"),
         ValueError, "frame 'panda_link4' is on the body of joint 'panda_joint4'"),
        (lambda r, q: r.operational_space(q, q, [PANDA_TCP, "panda_link3"], "schur_bcr"),
         ValueError, "method 'schur_bcr'.*one moving body"),
        (lambda r, q: r.operational_space_inertia(q, "panda_link0", "schur"), ValueError,
         "frame 'panda_link0' is on the fixed base"),
        (lambda r, q: r.operational_space_inertia(q, "panda_link3", "recursive"),
         np.linalg.LinAlgError, "inverse=True"),
        (lambda r, q: OperationalSpace().configure(
            r, {"frame": PANDA_TCP, "operational_space_method": "fast"}), ValueError,
         "operational_space_method"),
    ],
    ids=["method", "axis-name", "axis-index", "axis-twice", "no-axes", "schur-frame",
         "schur-dynamics", "schur-base", "rank", "controller"],
)
def test_bad_arguments_name_what_is_wrong(load_robot, call, error, message: str) -> None:
    robot: Robot = load_robot("bundled_panda")
    with pytest.raises(error, match=message):
        call(robot, np.full(7, 0.3))


@pytest.mark.parametrize(
    ("name", "frame"),
    [
        ("talos", "arm_left_7_link"),  # the torso carries the other arm, the head, the legs
        ("talos", "torso_2_link"),  # both arms and the head hang from it
        ("tree40_seed1", "link_20"),
        ("panda", "panda_link4"),  # the rest of the arm hangs from it
    ],
)
def test_schur_on_trees_and_off_the_tip(name: str, frame: str) -> None:
    """The Schur routes on any body: the subtrees off the path from the base eliminated leaf
    first (into the articulated inertia of the body they hang from), then the path's chain;
    Λ⁻¹ as Pinocchio's J M⁻¹ Jᵀ, by elimination and by cyclic reduction."""
    case = case_named(name)
    q, _, _, _ = case.states(1, seed=34)
    expected = pinocchio_task_inverse(case, q[0], [frame])
    scale = max(1.0, np.linalg.cond(case.oracle.mass_matrix(q[0])) / KAPPA_REF)
    for method in SCHUR_METHODS:
        inverse = case.robot.operational_space_inertia(q[0], frame, method, inverse=True)
        assert_close(inverse, expected, f"{name} {frame} {method} Λ⁻¹", scale=scale)
