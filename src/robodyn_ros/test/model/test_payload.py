"""A payload on a frame (Robot.with_payload): every function, the simulated robot and the
preview carry it as Pinocchio does with the load added to the inertia of the joint the frame
moves with; a load is replaced, removed by mass 0, and refused where no rigid body could be
it. `robodyn bag analyze --payload` explains efforts recorded with the load on."""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.bag import JointStateSeries, write_joint_states
from robodyn_ros.cli import main
from robodyn_ros.model import ModelError
from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle
from robodyn_ros.testing.trajectories import sine_trajectory

from helpers.cases import BUNDLED_PANDA, case_named
from helpers.checks import expect_idle_fall, expect_joint_space
from helpers.robots import MASSLESS, TOOL
from helpers.tolerances import close

PANDA = BUNDLED_PANDA.read_text()
PART = (0.4, (0.05, 0.0, -0.03), np.diag([1e-3, 2e-3, 2.5e-3]))
ROBOTS = {
    # the hand is a fixed link on link 7, turned by -45° about z: a frame off its body's origin
    "panda": (PANDA, {"panda_hand": TOOL, "panda_link3": PART}),
    "chain6": (random_chain_urdf(6, seed=11), {"fixed_0": TOOL, "link_2": PART}),
    "tree12": (random_tree_urdf(12, seed=3), {"link_9": TOOL, "fixed_1": PART}),
}


def loaded(robot: Robot, payloads: dict) -> Robot:
    for frame, (mass, com, inertia) in payloads.items():
        robot = robot.with_payload(frame, mass, com, inertia)
    return robot


@pytest.mark.parametrize("name", ROBOTS)
def test_every_function_carries_the_payload_as_pinocchio_does(name) -> None:
    urdf, payloads = ROBOTS[name]
    robot = loaded(Robot.from_urdf_string(urdf), payloads)
    oracle = PinocchioOracle(urdf, robot.joint_names, payloads=payloads, is_string=True)
    assert [p.frame for p in robot.model.payloads] == list(payloads)
    frame = next(iter(payloads))
    rng = np.random.default_rng(5)
    Q, QD, X = rng.uniform(-1.0, 1.0, (3, 3, robot.nv))
    for q, qd, x in zip(Q, QD, X, strict=True):
        expect_joint_space(robot, oracle, q, qd, x, ("aba", "cholesky", "schur"))
        close(robot.kinetic_energy(q, qd), oracle.kinetic_energy(q, qd))
        close(robot.potential_energy(q), oracle.potential_energy(q))
        J = oracle.jacobian(q, frame)
        close(robot.operational_space_inertia(q, frame, inverse=True),
              J @ oracle.mass_matrix_inverse(q) @ J.T)
    close(robot.forward_dynamics(Q, QD, X),
          [oracle.aba(*state) for state in zip(Q, QD, X, strict=True)])


def test_a_payload_replaces_the_last_on_its_frame_and_mass_zero_removes_it() -> None:
    robot = Robot.from_urdf_string(PANDA)
    q = np.linspace(-1.0, 1.0, 7)
    twice = robot.with_payload("panda_hand", *PART).with_payload("panda_hand", *TOOL)
    once = robot.with_payload("panda_hand", *TOOL)
    assert len(twice.model.payloads) == 1 and twice.model.payloads[0].mass == TOOL[0]
    close(twice.mass_matrix(q), once.mass_matrix(q))
    assert twice.model.total_mass == pytest.approx(robot.model.total_mass + TOOL[0])
    removed = twice.with_payload("panda_hand", 0.0)
    assert removed.model.payloads == ()
    np.testing.assert_allclose(removed.model.spatial_inertia, robot.model.spatial_inertia,
                               rtol=0, atol=1e-15)
    point = robot.with_payload("panda_hand", 2.0, (0.0, 0.0, 0.1))  # no inertia: a point mass
    oracle = PinocchioOracle(PANDA, robot.joint_names, is_string=True,
                             payloads={"panda_hand": (2.0, (0.0, 0.0, 0.1), np.zeros((3, 3)))})
    close(point.gravity_torques(q), oracle.gravity_torques(q))


def test_a_payload_on_the_fixed_base_moves_with_no_joint() -> None:
    robot = Robot.from_urdf_string(PANDA)
    on_base = robot.with_payload("panda_link0", *TOOL)
    assert on_base.model.payloads[0].frame == "panda_link0"
    q = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_array_equal(on_base.mass_matrix(q), robot.mass_matrix(q))


def test_a_payload_lets_a_hand_that_moves_no_mass_be_served() -> None:
    """The panda with no inertial from link 7 on has no q̈; a tool in its hand gives one."""
    with pytest.warns(UserWarning, match="panda_joint7"):
        bare = Robot.from_urdf_string(MASSLESS)
    holding = bare.with_payload("panda_hand", *TOOL)
    assert bare.massless_joints == ("panda_joint7",) and holding.massless_joints == ()
    oracle = PinocchioOracle(MASSLESS, bare.joint_names, payloads={"panda_hand": TOOL},
                             is_string=True)
    q, qd, tau = np.full(7, 0.3), np.full(7, 0.1), np.linspace(-1.0, 1.0, 7)
    close(holding.forward_dynamics(q, qd, tau), oracle.aba(q, qd, tau))


@pytest.mark.parametrize(("frame", "mass", "com", "inertia", "reason"), [
    ("gripper", 1.0, (0, 0, 0), None, "unknown frame; frames are: panda_link0, panda_link1"),
    ("panda_hand", -1.0, (0, 0, 0), None, "mass must be a finite number ≥ 0; got -1.0"),
    ("panda_hand", float("nan"), (0, 0, 0), None, "mass must be a finite number ≥ 0"),
    ("panda_hand", 2e6, (0, 0, 0), None, "mass must be 0 (none) or in [1e-12, 1e+06] kg"),
    ("panda_hand", 1.0, (0, 0), None, "com must be 3 finite numbers"),
    ("panda_hand", 1.0, (0, 0, 2e4), None, "is outside any robot"),
    ("panda_hand", 1.0, (0, 0, 0), np.diag([1e-3, 1e-3, 5e-3]), "triangle inequality"),
    ("panda_hand", 1.0, (0, 0, 0), np.diag([1e-3, -1e-3, 1e-3]), "not positive semi-definite"),
    ("panda_hand", 1.0, (0, 0, 0), [[1e-3, 1e-4, 0], [0, 1e-3, 0], [0, 0, 1e-3]], "symmetric"),
    ("panda_hand", 1.0, (0, 0, 0), np.eye(2), "inertia must be 3 x 3 finite numbers"),
    ("panda_hand", 0.0, (0, 0, 0), np.eye(3), "mass 0 removes the payload"),
])
def test_a_load_no_rigid_body_can_be_is_refused_naming_the_frame(frame, mass, com, inertia,
                                                                  reason) -> None:
    robot = Robot.from_urdf_string(PANDA)
    with pytest.raises(ModelError, match=f"payload on frame '{frame}'") as error:
        robot.with_payload(frame, mass, com, inertia)
    assert reason in str(error.value)


def test_the_simulated_robot_and_the_rollout_carry_the_payload() -> None:
    robot = Robot.from_urdf_string(PANDA).with_payload("panda_hand", *TOOL)
    expect_idle_fall(robot, PinocchioOracle(PANDA, robot.joint_names,
                                            payloads={"panda_hand": TOOL}, is_string=True))


def test_bag_analyze_with_the_payload_explains_the_efforts(tmp_path, capsys) -> None:
    """Efforts recorded with 2 kg in the hand (Pinocchio's RNEA with that load): with
    --payload the residual is zero to rounding; without it, the missing load shows."""
    case = case_named("bundled_panda")
    load = (2.0, (0.0, 0.0, 0.1), np.zeros((3, 3)))
    oracle = PinocchioOracle(BUNDLED_PANDA, case.robot.joint_names,
                             payloads={"panda_hand": load})
    trajectory = sine_trajectory(case.robot, 500, 500.0, seed=2)
    effort = np.array([oracle.rnea(*state) for state in zip(trajectory.q, trajectory.qd,
                                                             trajectory.qdd, strict=True)])
    bag = tmp_path / "carrying"
    write_joint_states(bag, "mcap",
                       JointStateSeries(case.robot.joint_names, trajectory.stamps, trajectory.q,
                                        trajectory.qd, effort))

    def worst_residual(*options: str) -> float:
        out = tmp_path / f"out{len(options)}"
        assert main(["bag", "analyze", str(bag), "--urdf", str(BUNDLED_PANDA), "--output",
                     str(out), "--no-plots", "--no-bag", *options]) == 0, capsys.readouterr()
        table = np.genfromtxt(out / "samples.csv", delimiter=",", names=True)
        columns = [f"tau_{joint}" for joint in case.robot.joint_names]
        torque = np.column_stack([table[column] for column in columns])
        return np.abs(torque[10:-10] - effort[10:-10]).max()  # the ends: one-sided fits

    assert worst_residual("--payload", "panda_hand:2:0,0,0.1") < 0.05
    assert worst_residual() > 1.0
    assert main(["bag", "analyze", str(bag), "--urdf", str(BUNDLED_PANDA),
                 "--payload", "gripper:2"]) == 1
    assert "payload on frame 'gripper' of robot 'panda': unknown frame" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bag", "analyze", str(bag), "--urdf", str(BUNDLED_PANDA), "--payload", "hand"])
