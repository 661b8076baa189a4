"""The whole-body controller on a standing humanoid, simulated on its rigid contacts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.control.whole_body import WholeBodyController, WholeBodyTargets
from robodyn_ros.model import URDFWarning
from robodyn_ros.robot.contact_dynamics import Contact
from robodyn_ros.sim import SimulatedRobot
from robodyn_ros.testing import example_robot_urdf

from helpers.simulation import lossless, run
from helpers.tolerances import assert_close

SOLES = (Contact("left_sole_link", "6d"), Contact("right_sole_link", "6d"))
# TALOS with bent knees (hips, knees and ankles of both legs), arms a little out
LEG = (0.0, 0.0, -0.4, 0.8, -0.4, 0.0)


@pytest.fixture(scope="module")
def talos():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        robot = Robot.from_urdf(example_robot_urdf("talos_reduced"), floating_base=True)
    q = robot.neutral()
    joints = {joint.name: joint.q.start for joint in robot.configuration_joints}
    for side in ("left", "right"):
        for k, angle in enumerate(LEG, start=1):
            q[joints[f"leg_{side}_{k}_joint"]] = angle
    # the base at the height where the soles touch z = 0
    q[2] -= robot.frame_pose(q, "left_sole_link")[2, 3]
    return robot, q


def targets(robot, q, com_shift, hand_shift) -> WholeBodyTargets:
    hand = robot.frame_pose(q, "arm_left_7_link")
    return WholeBodyTargets(com=robot.centre_of_mass(q) + com_shift, frame="arm_left_7_link",
                            position=hand[:3, 3] + hand_shift, orientation=hand[:3, :3],
                            posture=q[7:].copy())


def test_the_commanded_acceleration_is_what_the_contacts_give(talos) -> None:
    """The rigid-contact dynamics under the controller's τ has the controller's v̇: one KKT
    solution (with the controller's damping of the contacts' velocity as Baumgarte's kd)."""
    robot, q = talos
    v = np.random.default_rng(0).uniform(-0.2, 0.2, robot.nv)
    controller = WholeBodyController(robot, SOLES,
                                     targets(robot, q, np.array([0.0, 0.03, -0.02]),
                                             np.array([0.1, 0.0, 0.05])))
    answer = controller.solve(q, v)
    assert np.all(answer.tau[:6] == 0.0)
    held = robot.constrained_forward_dynamics(q, v, answer.tau, SOLES,
                                              kd=controller.targets.contact_damping)
    assert_close(held.vdot, answer.vdot, "v̇ under the controller's τ", rtol=1e-7)


def test_a_standing_humanoid_moves_its_centre_of_mass_and_hand(talos) -> None:
    """1.5 s: the CoM 3 cm sideways and 2 cm down, the left hand 10 cm forward and 5 cm up,
    both soles held, the simulation lossless (the controller does not compensate the joints'
    damping and friction); the errors settle, the soles stay put, the forces carry the
    weight."""
    robot, q = talos
    com_shift, hand_shift = np.array([0.0, 0.03, -0.02]), np.array([0.1, 0.0, 0.05])
    goal = targets(robot, q, com_shift, hand_shift)
    controller = WholeBodyController(robot, SOLES, goal)
    simulation = SimulatedRobot(lossless(robot), "rk4", 2e-3, q=q, contacts=SOLES,
                                contact_gains=(100.0, 20.0))
    soles = [robot.frame_pose(q, contact.frame) for contact in SOLES]
    end = run(simulation, 750, lambda s: controller.torque(s.q, s.qd)).q[-1]
    assert np.linalg.norm(robot.centre_of_mass(end) - goal.com) < 2e-3
    assert np.linalg.norm(robot.frame_pose(end, goal.frame)[:3, 3] - goal.position) < 5e-3
    for contact, start in zip(SOLES, soles, strict=True):
        assert np.abs(robot.frame_pose(end, contact.frame) - start).max() < 1e-6
    weight = robot.mass * 9.81
    vertical = sum(force[2] for force in simulation.contact_forces)
    assert vertical == pytest.approx(weight, rel=0.05)


def test_a_robot_without_a_floating_base_is_refused() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        fixed = Robot.from_urdf(example_robot_urdf("solo12"))
    q = fixed.neutral()
    goal = WholeBodyTargets(com=fixed.centre_of_mass(q), frame="FL_FOOT",
                            position=np.zeros(3), orientation=np.eye(3), posture=q.copy())
    with pytest.raises(ValueError, match="robot 'solo' has no floating base"):
        WholeBodyController(fixed, [Contact("HL_FOOT", "3d")], goal)


def test_the_plugin_holds_a_quadruped_where_it_stands_and_moves_its_base() -> None:
    """The whole_body plugin on Solo12 held on its four feet, in SimulatedRobot (sim_node's
    simulation, joint damping and friction included): it holds the first state's centre of
    mass and posture, so the base sags under 2 mm where zero effort drops it; then a target
    2 cm up for the base link, weighted above the centre of mass (which it lifts too), brings
    it within 3 mm of there in 1 s."""
    from robodyn_ros.control import load_controller
    from robodyn_ros.control.plugin import ControllerState

    robot = Robot.from_urdf(example_robot_urdf("solo12"), floating_base=True)
    feet = [f"{foot}_FOOT:3d" for foot in ("FL", "FR", "HL", "HR")]
    q = robot.neutral()
    joints = {joint.name: joint.q.start for joint in robot.configuration_joints}
    for leg, sign in (("FL", 1), ("FR", 1), ("HL", -1), ("HR", -1)):
        q[joints[f"{leg}_HFE"]], q[joints[f"{leg}_KFE"]] = 0.8 * sign, -1.6 * sign
    q = robot.standing([foot.partition(":")[0] for foot in feet], q)
    contacts = tuple(Contact(foot.partition(":")[0], "3d") for foot in feet)

    def run(controlled: bool, steps: int, lift: float = 0.0) -> np.ndarray:
        simulated = SimulatedRobot(robot, "rk4", 1e-3, q=q, contacts=contacts)
        controller = load_controller("whole_body")()
        weights = [1.0, 10.0, 1e-3] if lift else [10.0, 1.0, 1e-3]
        controller.configure(robot, {"contacts": feet, "frame": "base_link",
                                     "weights": weights})
        if lift:
            controller.set_target(q[:3] + np.array([0.0, 0.0, lift]), None)
        for k in range(steps):
            tau = controller.update(ControllerState(k * 1e-3, simulated.q, simulated.qd)) \
                if controlled else np.zeros(robot.nv)
            simulated.step(tau)
        return simulated.q

    assert q[2] - run(False, 300)[2] > 0.01  # zero effort: the knees give
    assert abs(q[2] - run(True, 300)[2]) < 2e-3
    assert run(True, 1000, lift=0.02)[2] - q[2] == pytest.approx(0.02, abs=3e-3)


def test_the_plugin_refuses_what_it_cannot_control() -> None:
    from robodyn_ros.control import load_controller

    fixed = Robot.from_urdf(example_robot_urdf("solo12"))
    with pytest.raises(ValueError, match="has no floating base"):
        load_controller("whole_body")().configure(fixed, {"contacts": ["FL_FOOT"]})
    floating = Robot.from_urdf(example_robot_urdf("solo12"), floating_base=True)
    for parameters, message in (({}, "name the frames the robot stands on"),
                                ({"contacts": ["FL_TOE"]}, "'FL_TOE' is not 'frame'"),
                                ({"contacts": ["FL_FOOT"], "kp": [1, 2]}, "'kp' must be 3"),
                                ({"contacts": ["FL_FOOT"], "frame": "hand"}, "no frame 'hand'")):
        with pytest.raises(ValueError, match=message):
            load_controller("whole_body")().configure(floating, parameters)
