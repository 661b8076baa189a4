"""Free-flyer and planar joints in the packed tree (dynamics.tree), against Pinocchio's
JointModelFreeFlyer and JointModelPlanar parsed from the same URDF text.

The robots: example-robot-data's legged robots and a humanoid, their root link on a floating or
planar joint from a `world` link (placed off the origin, so that the joint's placement is not
the identity), and generated trees with a free flyer or a planar joint at the root and deeper
in the tree. Pinocchio reads the URDF's floating and planar joints itself, so the oracle shares
no code with the loader: its joints are matched to ours by name, a continuous joint's
(cos θ, sin θ) to our angle. Tolerance: helpers.tolerances.assert_close (1e-9 relative to the
answer's scale).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import cache

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros.model import ModelError
from robodyn_ros.model.generate import random_tree_urdf, with_joint_kinds, with_root_joint
from robodyn_ros.robot import Robot
from robodyn_ros.testing.example_robots import example_robot_urdf
from robodyn_ros.testing.pinocchio_twin import Twin, twin_of

from helpers.tolerances import assert_close

ROOT_PLACEMENT = {"xyz": "0.1 -0.2 0.3", "rpy": "0.3 -0.2 0.1"}


def _example(name: str, kind: str) -> str:
    return with_root_joint(example_robot_urdf(name).read_text(), kind, **ROOT_PLACEMENT)


def _generated(seed: int, kinds: dict[str, str]) -> str:
    return with_joint_kinds(random_tree_urdf(9, seed=seed), kinds)


CASES = {
    "solo12_floating": lambda: _example("solo12", "floating"),
    "solo12_planar": lambda: _example("solo12", "planar"),
    "anymal_floating": lambda: _example("anymal", "floating"),
    "talos_reduced_floating": lambda: _example("talos_reduced", "floating"),
    "tree_floating_root": lambda: _generated(1, {"joint_0": "floating"}),
    "tree_planar_root": lambda: _generated(2, {"joint_0": "planar"}),
    "tree_inner_joints": lambda: _generated(3, {"joint_0": "floating", "joint_4": "planar",
                                                 "joint_6": "floating"}),
}


@cache
def twin(name: str) -> Twin:
    return twin_of(CASES[name]())


def _symmetric(upper: np.ndarray) -> np.ndarray:
    return np.triu(upper) + np.triu(upper, 1).T


@pytest.fixture(params=list(CASES))
def case(request) -> Twin:
    return twin(request.param)


def test_layout_follows_pinocchio(case: Twin) -> None:
    """nv and each joint's velocity size are Pinocchio's; q differs only where Pinocchio keeps
    a continuous joint as (cos θ, sin θ). (The order of sibling subtrees may differ: the twin
    maps joints by name.)"""
    continuous = sum(1 for *_, is_continuous in case.q_rows if is_continuous)
    assert (case.robot.nq + continuous, case.robot.nv) == (case.model.nq, case.model.nv)
    kinds = {"JointModelFreeFlyer": "floating", "JointModelPlanar": "planar"}
    ours = {joint.name: joint for joint in case.robot.model.configuration_joints}
    for i in range(1, case.model.njoints):
        theirs = case.model.joints[i]
        joint = ours[case.model.names[i]]
        assert joint.v.stop - joint.v.start == theirs.nv
        if theirs.shortname() in kinds:
            assert joint.kind == kinds[theirs.shortname()]
            assert joint.q.stop - joint.q.start == theirs.nq


def test_dynamics(case: Twin) -> None:
    robot, data = case.robot, case.data()
    for seed in range(2):
        q_pin, v_pin, a_pin, tau_pin = case.state(seed)
        q, v, a, tau = (case.q_ours(q_pin), case.v_ours(v_pin), case.v_ours(a_pin),
                        case.v_ours(tau_pin))
        name = f"{seed}"
        assert_close(robot.inverse_dynamics(q, v, a),
                     case.v_ours(pin.rnea(case.model, data, q_pin, v_pin, a_pin)), f"{name} τ")
        assert_close(robot.bias_forces(q, v),
                     case.v_ours(pin.nonLinearEffects(case.model, data, q_pin, v_pin)), "b")
        assert_close(robot.gravity_torques(q),
                     case.v_ours(pin.computeGeneralizedGravity(case.model, data, q_pin)), "g")
        assert_close(robot.coriolis_matrix(q, v),
                     case.matrix_ours(pin.computeCoriolisMatrix(case.model, data, q_pin, v_pin)),
                     "C")
        M = case.matrix_ours(_symmetric(pin.crba(case.model, data, q_pin)))
        for method in ("crba", "gdahj", "rnea_columns"):
            assert_close(robot.mass_matrix(q, method=method), M, f"M ({method})")
        assert_close(robot.mass_matrix_diagonal(q), np.diag(M), "diag M")
        M_inv = case.matrix_ours(_symmetric(pin.computeMinverse(case.model, data, q_pin)))
        for method in ("aba", "ltdl"):
            assert_close(robot.mass_matrix_inverse(q, method=method), M_inv, f"M⁻¹ ({method})")
        expected = case.v_ours(pin.aba(case.model, data, q_pin, v_pin, tau_pin))
        for method in ("aba", "cholesky"):
            assert_close(robot.forward_dynamics(q, v, tau, method=method), expected,
                         f"q̈ ({method})")
        assert_close(robot.forward_dynamics(q, v, tau, method="pcg", tol=1e-13), expected,
                     "q̈ (pcg)", rtol=1e-7)
        assert robot.kinetic_energy(q, v) == pytest.approx(
            pin.computeKineticEnergy(case.model, data, q_pin, v_pin), rel=1e-9)
        assert robot.potential_energy(q) == pytest.approx(
            pin.computePotentialEnergy(case.model, data, q_pin), rel=1e-9, abs=1e-9)


def test_regressor_gives_inverse_dynamics(case: Twin) -> None:
    """Y(q, v, a) π = τ of Pinocchio, π the robot's parameters without joint friction."""
    robot, data = case.robot, case.data()
    q_pin, v_pin, a_pin, _ = case.state(3)
    q, v, a = case.q_ours(q_pin), case.v_ours(v_pin), case.v_ours(a_pin)
    parameters = robot.inertial_parameters().copy()
    friction = [k for k, name in enumerate(robot.parameter_names)
                if name.endswith((".viscous", ".coulomb", ".offset"))]
    parameters[friction] = 0.0
    assert_close(robot.inverse_dynamics_regressor(q, v, a) @ parameters,
                 case.v_ours(pin.rnea(case.model, data, q_pin, v_pin, a_pin)), "Y π")


def test_kinematics_and_task_space(case: Twin) -> None:
    robot, data = case.robot, case.data()
    q_pin, _, _, _ = case.state(4)
    q = case.q_ours(q_pin)
    pin.framesForwardKinematics(case.model, data, q_pin)
    M_inv = case.matrix_ours(_symmetric(pin.computeMinverse(case.model, data, q_pin)))
    links = [name for name in robot.frame_names
             if case.model.existFrame(name, pin.BODY) and name != "world"]
    for link in links[-3:]:
        frame = case.model.getFrameId(link, pin.BODY)
        assert_close(robot.frame_pose(q, link), data.oMf[frame].homogeneous, f"{link} pose")
        J_pin = pin.computeFrameJacobian(case.model, data, q_pin, frame, pin.LOCAL_WORLD_ALIGNED)
        J = J_pin[:, np.argsort(case.v_order)]
        assert_close(robot.jacobian(q, link), J, f"{link} J")
        Lambda_inv = J @ M_inv @ J.T
        for method in ("recursive", "dense"):
            assert_close(robot.operational_space_inertia(q, link, method=method, inverse=True),
                         Lambda_inv, f"{link} Λ⁻¹ ({method})")
        if np.linalg.cond(Lambda_inv) < 1e6:  # Λ exists: the frame's J has full row rank
            assert_close(robot.operational_space_inertia(q, link), np.linalg.inv(Lambda_inv),
                         f"{link} Λ", rtol=1e-7)


def test_batch_is_the_stack_of_states(case: Twin) -> None:
    robot = case.robot
    states = [case.state(seed) for seed in (5, 6, 7)]
    q = np.stack([case.q_ours(s[0]) for s in states])
    v = np.stack([case.v_ours(s[1]) for s in states])
    a = np.stack([case.v_ours(s[2]) for s in states])
    batch = robot.inverse_dynamics(q, v, a)
    for b in range(3):
        assert_close(batch[b], robot.inverse_dynamics(q[b], v[b], a[b]), f"τ of state {b}",
                     rtol=1e-14)
    assert robot.forward_dynamics(q, v, batch).shape == (3, robot.nv)
    assert robot.jacobian(q, robot.frame_names[-1]).shape == (3, 6, robot.nv)


def test_threads_answer_as_one_thread(case: Twin) -> None:
    """A batch on two threads (Robot.with_threads), each thread a part of the states."""
    robot = case.robot
    rng = np.random.default_rng(12)
    q = robot.integrate(robot.neutral(), rng.uniform(-1.0, 1.0, (16, robot.nv)))
    v, a = rng.uniform(-1.0, 1.0, (2, 16, robot.nv))
    threaded = robot.with_threads(2)
    tau = robot.inverse_dynamics(q, v, a)
    np.testing.assert_array_equal(threaded.inverse_dynamics(q, v, a), tau)
    assert_close(threaded.forward_dynamics(q, v, tau), a, "q̈ of τ(q̈)", rtol=1e-8)
    np.testing.assert_array_equal(threaded.mass_matrix(q), robot.mass_matrix(q))


def test_configuration_arithmetic(case: Twin) -> None:
    robot = case.robot
    q0_pin, v_pin, _, _ = case.state(8)
    q1_pin = case.state(9)[0]
    q0, q1, v = case.q_ours(q0_pin), case.q_ours(q1_pin), case.v_ours(v_pin)
    assert_close(case.q_pin(robot.neutral()), pin.neutral(case.model), "neutral")
    assert_close(case.q_pin(robot.integrate(q0, v)), pin.integrate(case.model, q0_pin, v_pin),
                 "integrate", rtol=1e-12)
    # a continuous joint is an angle here, and its difference the angles' (Pinocchio's the
    # shorter turn): the two differ by whole turns
    error = robot.difference(q0, q1) - case.v_ours(pin.difference(case.model, q0_pin, q1_pin))
    turns = np.round(error / (2.0 * np.pi))
    continuous = np.array([kind == "continuous" for kind in robot.model.joint_kinds])
    assert not turns[~continuous].any()
    np.testing.assert_allclose(error - 2.0 * np.pi * turns, 0.0, rtol=0, atol=1e-11)
    default = robot.default_positions()
    for joint in robot.model.configuration_joints:
        if joint.kind in ("floating", "planar"):
            assert_close(default[joint.q], robot.neutral()[joint.q], f"{joint.name} default")
        else:
            assert robot.model.lower[joint.v] <= default[joint.q] <= robot.model.upper[joint.v]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3),
       st.floats(-np.pi + 1e-6, np.pi - 1e-6), st.floats(-3.0, 3.0))
def test_planar_difference_inverts_integrate(linear: list[float], turn: float,
                                              start: float) -> None:
    """q ⊖ (q ⊕ v) = v for a planar joint whose turn is within (−π, π), tiny turns included."""
    case = twin("tree_planar_root")
    v = np.zeros(case.robot.nv)
    v[:3] = (linear[0], linear[1], turn)
    q = case.robot.neutral()
    q[:4] = (linear[2], -linear[2], np.cos(start), np.sin(start))
    back = case.robot.difference(q, case.robot.integrate(q, v))
    np.testing.assert_allclose(back, v, rtol=0, atol=1e-12 * (1.0 + np.abs(v).max()))


# -- what is refused ----------------------------------------------------------------------------


def test_rotation_off_unit_norm_is_refused_naming_the_joint() -> None:
    robot = twin("tree_inner_joints").robot
    q = robot.neutral()
    q[3:7] *= 1.01  # joint_0's quaternion
    with pytest.raises(ValueError, match=r"joint 'joint_0'.*quaternion.*norm 1\.01"):
        robot.inverse_dynamics(q, np.zeros(robot.nv), np.zeros(robot.nv))
    q = robot.neutral()
    planar = next(j for j in robot.model.configuration_joints if j.kind == "planar")
    q[planar.q.start + 2:planar.q.stop] = (0.0, 0.5)
    with pytest.raises(ValueError, match=r"joint 'joint_4'.*\[cos θ, sin θ\].*norm 0\.5"):
        robot.mass_matrix(np.stack([robot.neutral(), q]))


def test_wrong_configuration_size_names_the_layout() -> None:
    robot = twin("tree_inner_joints").robot
    with pytest.raises(ValueError, match=r"free flyer 'joint_0' \[x y z, qx qy qz qw\]"):
        robot.gravity_torques(np.zeros(robot.nv))
    with pytest.raises(ValueError, match=rf"qd must have shape \(2, {robot.nv}\)"):
        robot.bias_forces(np.stack([robot.neutral()] * 2), np.zeros((2, robot.nq)))


def test_constraint_force_methods_refuse_naming_the_joint() -> None:
    robot = twin("tree_floating_root").robot
    q = robot.neutral()
    with pytest.raises(ValueError, match=r"method 'schur'.*'joint_0'.*use 'aba'"):
        robot.forward_dynamics(q, np.zeros(robot.nv), np.zeros(robot.nv), method="schur")
    with pytest.raises(ValueError, match=r"method 'jacobi'.*'joint_0'"):
        robot.forward_dynamics(q, np.zeros(robot.nv), np.zeros(robot.nv), method="jacobi")


def test_massless_free_flyer_on_one_joint_is_singular() -> None:
    """A free flyer whose body is massless and carries one joint: the joint turns the same
    mass as the free flyer's rotation about its axis, so M is singular everywhere, and q̈ is
    refused rather than given (generated trees have a massless base_link)."""
    with pytest.warns(Warning, match=r"free-flyer or planar joint whose body"):
        robot = Robot.from_urdf_string(with_root_joint(random_tree_urdf(4, seed=0), "floating"))
    with pytest.raises(np.linalg.LinAlgError, match="root_joint"):
        robot.forward_dynamics(robot.neutral(), np.zeros(robot.nv), np.zeros(robot.nv))


def test_planar_joint_off_the_xy_plane_is_refused() -> None:
    text = _generated(4, {"joint_2": "planar"}).replace('<axis xyz="0 0 1" />',
                                                         '<axis xyz="1 0 0" />')
    with pytest.raises(ModelError,
                       match=r"joint 'joint_2' is planar with <axis xyz=\"1 0 0\">.*x-y plane"):
        Robot.from_urdf_string(text)


def test_a_free_joint_cannot_be_locked_or_mimicked() -> None:
    text = _generated(5, {"joint_3": "floating"})
    with pytest.raises(ModelError, match=r"locked joint 'joint_3' is floating"):
        Robot.from_urdf_string(text, locked_joints={"joint_3": 0.0})
    root = ET.fromstring(text)
    follower = next(j for j in root.iter("joint") if j.get("name") == "joint_5")
    ET.SubElement(follower, "mimic", joint="joint_3")
    with pytest.raises(ModelError, match=r"mimics joint 'joint_3', which is not a moving"):
        Robot.from_urdf_string(ET.tostring(root, encoding="unicode"), mimic=True)


def test_floating_base_is_a_free_flyer_at_the_root() -> None:
    """floating_base=True is the URDF with a floating joint from the world at the identity: the
    same dynamics, a planar joint inside the tree included."""
    text = _generated(6, {"joint_2": "planar"})
    floating = Robot.from_urdf_string(text, floating_base=True)
    rooted = Robot.from_urdf_string(with_root_joint(text, "floating"))
    assert floating.model.floating_base and rooted.model.floating_base
    assert (floating.nq, floating.nv) == (rooted.nq, rooted.nv)
    rng = np.random.default_rng(0)
    q = floating.integrate(floating.neutral(), rng.uniform(-1, 1, floating.nv))
    v, a = rng.uniform(-1, 1, (2, floating.nv))
    assert_close(floating.inverse_dynamics(q, v, a), rooted.inverse_dynamics(q, v, a), "τ")
    assert_close(floating.mass_matrix(q), rooted.mass_matrix(q), "M")


def test_mimic_joints_beside_a_planar_joint_follow_their_leader() -> None:
    """A planar joint passes through the coupling: the follower sits at its rule in the tree's
    q, q̇ follows through G, and the coupled dynamics invert (ID(FD(τ)) = τ)."""
    root = ET.fromstring(_generated(6, {"joint_2": "planar"}))
    follower = next(j for j in root.iter("joint") if j.get("name") == "joint_5")
    ET.SubElement(follower, "mimic", joint="joint_4", multiplier="-0.5", offset="0.1")
    robot = Robot.from_urdf_string(ET.tostring(root, encoding="unicode"))
    assert robot.mimic_joints == ("joint_5",)
    assert robot.coupling is not None
    assert (robot.nq, robot.nv) == (robot.model.nq - 1, robot.model.nv - 1)
    rng = np.random.default_rng(1)
    q = robot.integrate(robot.neutral(), rng.uniform(-1, 1, robot.nv))
    q_all = robot.coupling.positions(q)
    joints = {joint.name: joint for joint in robot.model.configuration_joints}
    leader, followed = q_all[joints["joint_4"].q.start], q_all[joints["joint_5"].q.start]
    assert followed == pytest.approx(-0.5 * leader + 0.1, abs=1e-15)
    assert np.array_equal(robot.coupling.coordinates(q_all), q)
    v, tau = rng.uniform(-1, 1, (2, robot.nv))
    qdd = robot.forward_dynamics(q, v, tau)
    assert_close(robot.inverse_dynamics(q, v, qdd), tau, "ID(FD(τ))")
    assert_close(robot.difference(q, robot.integrate(q, v, 0.1)), 0.1 * v, "q ⊖ (q ⊕ v dt)")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 12), data=st.data())
def test_generated_trees_with_free_joints_match_pinocchio(seed: int, n: int, data) -> None:
    """Any joints of a generated tree made free flyers or planar joints: τ, M, C, q̈ and a
    Jacobian as Pinocchio's (q̈ where M is invertible; else it is refused, naming joints)."""
    names = [f"joint_{i}" for i in range(n)]
    kinds = data.draw(st.dictionaries(st.sampled_from(names),
                                      st.sampled_from(["floating", "planar"]),
                                      min_size=1, max_size=3))
    case = twin_of(with_joint_kinds(random_tree_urdf(n, seed=seed), kinds))
    robot, model, pin_data = case.robot, case.model, case.model.createData()
    q_pin, v_pin, a_pin, tau_pin = case.state(seed)
    q, v, a, tau = (case.q_ours(q_pin), case.v_ours(v_pin), case.v_ours(a_pin),
                    case.v_ours(tau_pin))
    assert_close(robot.inverse_dynamics(q, v, a),
                 case.v_ours(pin.rnea(model, pin_data, q_pin, v_pin, a_pin)), "τ")
    M = case.matrix_ours(_symmetric(pin.crba(model, pin_data, q_pin)))
    assert_close(robot.mass_matrix(q), M, "M")
    assert_close(robot.coriolis_matrix(q, v),
                 case.matrix_ours(pin.computeCoriolisMatrix(model, pin_data, q_pin, v_pin)), "C")
    link = robot.frame_names[-1]
    pin.framesForwardKinematics(model, pin_data, q_pin)
    J = pin.computeFrameJacobian(model, pin_data, q_pin, model.getFrameId(link, pin.BODY),
                                 pin.LOCAL_WORLD_ALIGNED)
    assert_close(robot.jacobian(q, link), J[:, np.argsort(case.v_order)], "J")
    if robot.massless_joints:
        with pytest.raises(np.linalg.LinAlgError, match="move no mass"):
            robot.forward_dynamics(q, v, tau)
        return
    if np.linalg.cond(M) < 1e8:  # q̈ to 1e-9 needs M far from singular
        assert_close(robot.forward_dynamics(q, v, tau),
                     case.v_ours(pin.aba(model, pin_data, q_pin, v_pin, tau_pin)), "q̈")


@pytest.mark.parametrize("name", [*CASES, "ur5_fixed"])
def test_centroidal_momentum_matrix_and_centre_of_mass(name: str) -> None:
    """A_g and c against Pinocchio's computeCentroidalMap and data.com[0], on every root (a
    fixed arm too), one state and a batch."""
    if name == "ur5_fixed":
        case = twin_of(example_robot_urdf("ur5").read_text())
    else:
        case = twin(name)
    robot, data = case.robot, case.data()
    q_pin = case.state(10)[0]
    q = case.q_ours(q_pin)
    A = pin.computeCentroidalMap(case.model, data, q_pin)[:, np.argsort(case.v_order)]
    pin.centerOfMass(case.model, data, q_pin)
    assert_close(robot.centroidal_momentum_matrix(q), A, "A_g")
    assert_close(robot.centre_of_mass(q), data.com[0], "c")
    assert_close(robot.com_jacobian(q), A[:3] / robot.model.total_mass, "J_c")
    batch = np.stack([q, case.q_ours(case.state(11)[0])])
    assert_close(robot.centroidal_momentum_matrix(batch)[0], A, "A_g of a batch")
    assert_close(robot.centre_of_mass(batch)[0], data.com[0], "c of a batch")
