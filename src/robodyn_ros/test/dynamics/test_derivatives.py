"""Robot.inverse_dynamics_derivatives and Robot.forward_dynamics_derivatives against Pinocchio's
computeRNEADerivatives and computeABADerivatives, parsed from the same URDF text
(testing.pinocchio_twin): example-robot-data's arms (the kinova's with its fingers), legged
robots and humanoids on a floating or planar root, and generated trees with free flyers and
planar joints inside. Pinocchio's tangent space is its velocity's, so its matrices compare with
ours row and column in the twin's velocity order.

Tolerance: 1e-8 relative to the matrix's largest entry (the issue's bound); the forward
derivatives, solves with M, scaled by κ(M) / KAPPA_REF as every forward-dynamics check is.
Besides Pinocchio: central differences of the Robot's own inverse and forward dynamics along
the tangent space (robot.integrate), which also check the mimic robots Pinocchio is not given.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.errors import NonFiniteResultError, SingularMassMatrixError
from robodyn_ros.model import URDFWarning
from robodyn_ros.model.generate import (
    random_chain_urdf,
    random_tree_urdf,
    with_joint_kinds,
    with_root_joint,
)
from robodyn_ros.parallel import backend
from robodyn_ros.robot.derivatives import ForwardDynamicsDerivatives, InverseDynamicsDerivatives
from robodyn_ros.testing.example_robots import example_robot_urdf
from robodyn_ros.testing.pinocchio_twin import Twin, twin_of

from helpers.robots import MASSLESS, PANDA, axis_point_mass_xml, with_mimic
from helpers.tolerances import BATCH_RTOL, KAPPA_REF, assert_close

RTOL = 1e-8
PLACED = {"xyz": "0.1 -0.2 0.3", "rpy": "0.3 -0.2 0.1"}  # a root joint off the origin


def _example(name: str, root: str | None = None) -> str:
    text = example_robot_urdf(name).read_text()
    return text if root is None else with_root_joint(text, root, **PLACED)


CASES = {
    "panda": lambda: PANDA,
    "ur5": lambda: _example("ur5"),
    "kinova": lambda: _example("kinova"),
    "solo12_floating": lambda: _example("solo12", "floating"),
    "solo12_planar": lambda: _example("solo12", "planar"),
    "anymal_floating": lambda: _example("anymal", "floating"),
    "talos_reduced_floating": lambda: _example("talos_reduced", "floating"),
    "icub_floating": lambda: _example("icub", "floating"),
    "tree_fixed": lambda: random_tree_urdf(14, seed=4),
    "chain_fixed": lambda: random_chain_urdf(26, seed=2),  # deep: M⁻¹ by minv_aba
    "tree_inner_joints": lambda: with_joint_kinds(
        random_tree_urdf(9, seed=3), {"joint_0": "floating", "joint_4": "planar",
                                      "joint_6": "floating"}),
}


@cache
def twin(name: str) -> Twin:
    return twin_of(CASES[name]())


def _symmetric(upper: np.ndarray) -> np.ndarray:
    return np.triu(upper) + np.triu(upper, 1).T


def _conditioning(case: Twin, q_pin: np.ndarray) -> float:
    """The forward derivatives' tolerance scale: κ(M) / KAPPA_REF, at least 1."""
    M = pin.crba(case.model, case.data(), q_pin)
    return max(1.0, float(np.linalg.cond(_symmetric(M))) / KAPPA_REF)


def assert_matches_pinocchio(case: Twin, seed: int,
                             f_ext: dict[int, np.ndarray] | None = None) -> None:
    """Both derivatives at the twin's random state `seed`, with Pinocchio's joints' wrenches
    f_ext (joint id → [force; torque] in its frame) on our bodies, against Pinocchio."""
    robot, data = case.robot, case.data()
    q_pin, v, a, tau = case.state(seed)
    q = case.q_ours(q_pin)
    ours_v, ours_a, ours_tau = case.v_ours(v), case.v_ours(a), case.v_ours(tau)
    forces, wrenches = (), None
    if f_ext is not None:
        forces = (pin.StdVec_Force(),)
        forces[0].extend(pin.Force(*np.split(f_ext.get(j, np.zeros(6)), 2))
                         for j in range(case.model.njoints))
        wrenches = np.zeros((robot.nv, 6))
        for j, wrench in f_ext.items():
            joint = case.model.joints[j]  # its body is the joint's last velocity row's
            wrenches[case.v_order[joint.idx_v + joint.nv - 1]] = wrench
    inverse = robot.inverse_dynamics_derivatives(q, ours_v, ours_a, wrenches)
    pin.computeRNEADerivatives(case.model, data, q_pin, v, a, *forces)
    assert_close(inverse.dtau_dq, case.matrix_ours(data.dtau_dq), "∂τ/∂q", RTOL)
    assert_close(inverse.dtau_dv, case.matrix_ours(data.dtau_dv), "∂τ/∂q̇", RTOL)
    assert_close(inverse.dtau_da, case.matrix_ours(_symmetric(data.M)), "∂τ/∂q̈", RTOL)
    forward = robot.forward_dynamics_derivatives(q, ours_v, ours_tau, wrenches)
    pin.computeABADerivatives(case.model, data, q_pin, v, tau, *forces)
    scale = _conditioning(case, q_pin)
    assert_close(forward.dvdot_dq, case.matrix_ours(data.ddq_dq), "∂q̈/∂q", RTOL, scale)
    assert_close(forward.dvdot_dv, case.matrix_ours(data.ddq_dv), "∂q̈/∂q̇", RTOL, scale)
    assert_close(forward.dvdot_dtau, case.matrix_ours(_symmetric(data.Minv)), "∂q̈/∂τ", RTOL,
                 scale)


@pytest.mark.parametrize("name", list(CASES))
def test_the_derivatives_match_pinocchio(name: str) -> None:
    for seed in range(2):
        assert_matches_pinocchio(twin(name), seed)


@pytest.mark.parametrize("name", ["tree_inner_joints", "talos_reduced_floating"])
def test_wrenches_on_the_bodies_turn_with_them_as_pinocchios_fext(name: str) -> None:
    case = twin(name)
    rng = np.random.default_rng(5)
    wrenches = {j: rng.normal(size=6) for j in range(1, case.model.njoints)}
    assert_matches_pinocchio(case, 3, wrenches)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(2, 16), seed=st.integers(0, 10_000),
       kinds=st.lists(st.sampled_from(["as generated", "floating", "planar"]), min_size=16,
                      max_size=16))
def test_generated_trees_of_any_joints_match_pinocchio(size: int, seed: int,
                                                       kinds: list[str]) -> None:
    """Property: any generated tree (its joints revolute or prismatic as generated), any of
    them made a free flyer or planar, matches Pinocchio."""
    urdf = with_joint_kinds(random_tree_urdf(size, seed=seed),
                            {f"joint_{k}": kinds[k] for k in range(size)
                             if kinds[k] != "as generated"})
    assert_matches_pinocchio(twin_of(urdf), seed)


def _central_differences(robot: Robot, function, q: np.ndarray, x: tuple, step: float):
    """∂f/∂q (tangent space) and ∂f/∂x_k of f(q, *x) by central differences."""
    def along_q(direction: np.ndarray) -> np.ndarray:
        return (function(robot.integrate(q, step * direction), *x)
                - function(robot.integrate(q, -step * direction), *x)) / (2 * step)

    def along_x(k: int, direction: np.ndarray) -> np.ndarray:
        ahead = [*x]
        behind = [*x]
        ahead[k], behind[k] = x[k] + step * direction, x[k] - step * direction
        return (function(q, *ahead) - function(q, *behind)) / (2 * step)

    unit = np.eye(robot.nv)
    return (np.stack([along_q(e) for e in unit], axis=-1),
            *(np.stack([along_x(k, e) for e in unit], axis=-1) for k in range(len(x))))


@pytest.mark.parametrize("urdf", [
    pytest.param(with_mimic(PANDA, "panda_joint6", "panda_joint4", -0.7, 0.2), id="mimic"),
    pytest.param(_example("solo12", "floating"), id="solo12_floating"),
])
def test_the_derivatives_are_the_rates_of_the_dynamics(urdf: str) -> None:
    """Central differences of inverse_dynamics and forward_dynamics (step 1e-6, error ~1e-9
    of the scale), on a mimic robot (Pinocchio is not given one) and a free flyer."""
    robot = Robot.from_urdf_string(urdf)
    rng = np.random.default_rng(2)
    q = robot.integrate(robot.neutral(), rng.uniform(-0.5, 0.5, robot.nv))
    v, a, tau = rng.uniform(-1.0, 1.0, (3, robot.nv))
    expected = _central_differences(robot, robot.inverse_dynamics, q, (v, a), 1e-6)
    for ours, theirs, what in zip(robot.inverse_dynamics_derivatives(q, v, a), expected,
                                  ("∂τ/∂q", "∂τ/∂q̇", "∂τ/∂q̈"), strict=True):
        assert_close(ours, theirs, what, rtol=1e-6)
    expected = _central_differences(robot, robot.forward_dynamics, q, (v, tau), 1e-6)
    for ours, theirs, what in zip(robot.forward_dynamics_derivatives(q, v, tau), expected,
                                  ("∂q̈/∂q", "∂q̈/∂q̇", "∂q̈/∂τ"), strict=True):
        assert_close(ours, theirs, what, rtol=1e-6)


def test_gravity_as_set() -> None:
    case = twin("solo12_floating")
    gravity = np.array([1.0, -2.0, -3.0])
    robot = case.robot.with_gravity(gravity)
    model = case.model.copy()
    model.gravity.linear = gravity
    q_pin, v, a, _ = case.state(7)
    data = model.createData()
    pin.computeRNEADerivatives(model, data, q_pin, v, a)
    ours = robot.inverse_dynamics_derivatives(case.q_ours(q_pin), case.v_ours(v), case.v_ours(a))
    assert_close(ours.dtau_dq, case.matrix_ours(data.dtau_dq), "∂τ/∂q", RTOL)


def _states(robot: Robot, count: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    q = np.stack([robot.integrate(robot.neutral(), rng.uniform(-1, 1, robot.nv))
                  for _ in range(count)])
    return (q, *rng.uniform(-1.0, 1.0, (2, count, robot.nv)))


@pytest.mark.parametrize("function", ["inverse_dynamics_derivatives",
                                      "forward_dynamics_derivatives"])
def test_batches_on_threads_and_every_backend_are_the_single_states(function: str) -> None:
    """A batch (B, n) answers (B, n, n) per matrix, state by state as the single-state C
    entry does (to BATCH_RTOL, κ-scaled for the solves), on the robot's threads and on the
    serial, thread and process backends."""
    robot = twin("talos_reduced_floating").robot
    states = _states(robot, 6, 0)
    singles = [getattr(robot, function)(*(s[b] for s in states)) for b in range(6)]
    scale = max(float(np.linalg.cond(robot.mass_matrix(q))) for q in states[0])
    answers = [getattr(robot, function)(*states), getattr(robot.with_threads(2), function)(*states)]
    for name in ("serial", "threads", "processes"):
        with backend(name, workers=2) as pool:
            answers.append(getattr(pool.bind(robot), function)(*states))
    for answer in answers:
        assert type(answer) is type(singles[0])
        for field in range(3):
            assert answer[field].shape == (6, robot.nv, robot.nv)
            for b in range(6):
                assert_close(answer[field][b], singles[b][field], function, 1e-12 * scale)


def test_the_records_name_their_matrices() -> None:
    robot = twin("panda").robot
    q, v, a = np.zeros(7), np.ones(7), np.ones(7)
    inverse = robot.inverse_dynamics_derivatives(q, v, a)
    assert isinstance(inverse, InverseDynamicsDerivatives)
    *_, dtau_da = inverse  # unpacks as the tuple (dtau_dq, dtau_dv, dtau_da)
    assert dtau_da is inverse.dtau_da and np.array_equal(dtau_da, robot.mass_matrix(q))
    forward = robot.forward_dynamics_derivatives(q, v, a)
    assert isinstance(forward, ForwardDynamicsDerivatives)
    assert_close(forward.dvdot_dtau, robot.mass_matrix_inverse(q), "M⁻¹", BATCH_RTOL * 1e3)


def test_bad_input_is_refused_naming_it() -> None:
    robot = twin("panda").robot
    with pytest.raises(ValueError, match="qd"):
        robot.inverse_dynamics_derivatives(np.zeros(7), np.zeros(6), np.zeros(7))
    with pytest.raises(ValueError, match="tau"):
        robot.forward_dynamics_derivatives(np.zeros(7), np.zeros(7), np.zeros((2, 7)))
    with pytest.warns(URDFWarning, match="panda_joint7"):
        massless = Robot.from_urdf_string(MASSLESS)
    with pytest.raises(SingularMassMatrixError, match="panda_joint7"):
        massless.forward_dynamics_derivatives(np.zeros(7), np.zeros(7), np.zeros(7))


def test_a_branched_robot_with_massless_joints_is_refused_naming_them() -> None:
    """Romeo's fingers move no mass: its M, factored as LᵀDL on a branched tree of more than
    BLAS_SIZE rows, is not positive definite, and the forward derivatives say so."""
    with pytest.warns(URDFWarning, match="move no mass"):
        romeo = Robot.from_urdf(example_robot_urdf("romeo"), mimic=False)
    zero = np.zeros(romeo.nv)
    with pytest.raises(SingularMassMatrixError, match="LFinger21"):
        romeo.forward_dynamics_derivatives(zero, zero, zero)


def test_a_state_without_an_answer_raises_and_nan_stays_nan() -> None:
    """M singular at one configuration (not at every one): the single-state entry and a batch
    raise naming the joint; NaN in gives NaN out; an overflow raises naming the quantity."""
    with pytest.warns(URDFWarning):  # the point mass's singular <inertia>
        robot = Robot.from_urdf_string(axis_point_mass_xml())
    singular, tau = np.zeros(2), np.array([1.0, 0.5])
    with pytest.raises(SingularMassMatrixError, match="'spin'") as error:
        robot.forward_dynamics_derivatives(singular, singular, tau)
    assert "at this state" in str(error.value)
    with pytest.raises(SingularMassMatrixError, match="at state 1 of the batch"):
        robot.forward_dynamics_derivatives(np.array([[0.0, 0.5], [0.0, 0.0]]), np.zeros((2, 2)),
                                           np.ones((2, 2)))
    assert np.isfinite(robot.inverse_dynamics_derivatives(singular, singular, tau).dtau_dq).all()
    panda = twin("panda").robot
    q, zero = np.zeros(7), np.zeros(7)
    q[2] = np.nan
    for answer in (panda.forward_dynamics_derivatives(q, zero, zero),
                   panda.inverse_dynamics_derivatives(q, zero, zero)):
        assert all(np.isnan(matrix).any() for matrix in answer)
    huge = np.full(7, 1e300)
    with pytest.raises(NonFiniteResultError, match="∂q̈"):
        panda.forward_dynamics_derivatives(zero, huge, zero)
    with pytest.raises(NonFiniteResultError, match="∂τ"):
        panda.inverse_dynamics_derivatives(zero, huge, zero)
