"""SimulatedRobot (what sim_node steps) with a floating base: on the configuration's group by
the Lie integrators, held on contacts (the feet stay where they started, their forces
carry the weight), its joints' limits only, and the arguments it refuses."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.errors import NonFiniteResultError
from robodyn_ros.model import URDFWarning
from robodyn_ros.robot.contact_dynamics import Contact
from robodyn_ros.sim import SimulatedRobot
from robodyn_ros.sim.lie_integrators import LIE_INTEGRATORS
from robodyn_ros.testing import example_robot_urdf

from helpers.tolerances import assert_close

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
# Solo12's bent-knee standing posture (example-robot-data's solo.srdf "standing")
STANDING = {"HAA": (0.1, -0.1, 0.1, -0.1), "HFE": (0.8, 0.8, -0.8, -0.8),
            "KFE": (-1.6, -1.6, 1.6, 1.6)}


def solo() -> Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        return Robot.from_urdf(example_robot_urdf("solo12"), floating_base=True)


def standing(robot: Robot) -> np.ndarray:
    q = robot.neutral()
    where = {joint.name: joint.q.start for joint in robot.configuration_joints}
    for joint, angles in STANDING.items():
        for leg, angle in zip(("FL", "FR", "HL", "HR"), angles, strict=True):
            q[where[f"{leg}_{joint}"]] = angle
    return robot.standing(FEET, q)


@pytest.mark.parametrize("integrator", list(LIE_INTEGRATORS))
def test_a_free_floating_robot_steps_as_the_group_integrator(integrator: str) -> None:
    """No damping, friction or limit reached: the steps of the group integrator on the forward
    dynamics, composed here by hand."""
    loaded = solo()
    zeros = np.zeros(loaded.nv)
    robot = Robot(dataclasses.replace(loaded.model, damping=zeros, friction=zeros))
    q, v = standing(robot), np.random.default_rng(0).uniform(-0.5, 0.5, robot.nv)
    tau = np.random.default_rng(1).uniform(-0.1, 0.1, robot.nv)
    simulated = SimulatedRobot(robot, integrator, 1e-3, q=q, qd=v)
    reference = (q, v)
    for _ in range(50):
        simulated.step(tau)
        reference = LIE_INTEGRATORS[integrator](
            reference, 1e-3, lambda q, v: robot.forward_dynamics(q, v, tau), robot)
    assert_close(simulated.q, reference[0], "q")
    assert_close(simulated.qd, reference[1], "v")


def test_feet_held_where_they_start_carry_the_robot() -> None:
    """Solo12 on its four point feet, its joints held at the standing posture by a PD: over
    0.5 s the feet stay within 1e-6 m of where they started, and their vertical forces carry
    the weight to 2 % once it settles."""
    robot = solo()
    q0 = standing(robot)
    feet = tuple(Contact(foot, "3d") for foot in FEET)
    simulated = SimulatedRobot(robot, "rk4", 1e-3, q=q0, contacts=feet)
    start = {foot: robot.frame_pose(q0, foot)[:3, 3] for foot in FEET}
    joints = slice(7, robot.nq)
    for _ in range(500):
        tau = np.zeros(robot.nv)
        tau[6:] = 20.0 * (q0[joints] - simulated.q[joints]) - 0.5 * simulated.qd[6:]
        simulated.step(tau)
    for foot in FEET:
        assert np.abs(robot.frame_pose(simulated.q, foot)[:3, 3] - start[foot]).max() < 1e-6
    lift = sum(force[2] for force in simulated.contact_forces)
    weight = robot.mass * 9.81
    assert lift == pytest.approx(weight, rel=0.02)
    assert np.linalg.norm(simulated.q[3:7]) == pytest.approx(1.0, abs=1e-12)


def test_joint_limits_stop_the_joints_and_leave_the_base_free() -> None:
    robot = solo()
    simulated = SimulatedRobot(robot, "rk4", 1e-3, q=robot.neutral())
    push = np.zeros(robot.nv)
    push[6:] = 0.5  # N·m: every joint driven to its upper limit
    for _ in range(1000):
        simulated.step(push)
    upper = robot.model.upper[6:]
    assert (simulated.q[7:] <= upper).all() and (simulated.q[7:] == upper).any()
    assert np.isfinite(simulated.q).all()
    assert np.linalg.norm(simulated.q[3:7]) == pytest.approx(1.0, abs=1e-12)


def test_a_state_that_overflows_is_refused_and_kept() -> None:
    """1 kN·m on Solo12's light legs at a 10 ms step: the state overflows; the step says so
    and the simulation keeps its last finite state."""
    robot = solo()
    simulated = SimulatedRobot(robot, "semi_implicit_euler", 1e-2, q=robot.neutral())
    push = np.zeros(robot.nv)
    push[6:] = 1e3
    with pytest.raises(NonFiniteResultError, match=r"the state .* after step \d+"):
        for _ in range(300):
            simulated.step(push)
    assert np.isfinite(simulated.q).all() and np.isfinite(simulated.qd).all()


@pytest.mark.parametrize(("arguments", "message"), [
    ({"integrator": "rk45"}, "free flyer or planar joints, which the adaptive integrator"),
    ({"q": np.zeros(19)}, r"'free_flyer': its quaternion"),
    ({"q": np.zeros(18)}, r"q must have 19 values, a configuration: q\[0:7\] = free flyer"),
    ({"contacts": (Contact("FL_TOE", "3d"),)}, "unknown frame 'FL_TOE'"),
    ({"contact_gains": (-1.0, 0.0)}, "contact_gains must be two finite numbers"),
    ({"contact_gains": (100.0, 20.0, 1.0)}, "contact_gains must be two finite numbers"),
    ({"contact_gains": (100.0,)}, "contact_gains must be two finite numbers"),
])
def test_bad_arguments_are_named(arguments: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimulatedRobot(solo(), **arguments)


def test_a_push_gives_the_momentum_its_impulse() -> None:
    """Without gravity, a constant force on the base changes the robot's linear momentum by
    F·t whatever the joints do (their efforts, damping and friction are internal)."""
    loaded = solo()
    robot = Robot(dataclasses.replace(loaded.model, gravity=np.zeros(3)))
    force = np.array([2.0, -1.0, 3.0])
    sim = SimulatedRobot(robot, "rk4", 1e-3, q=standing(robot))
    sim.apply_wrench("base_link", np.concatenate([force, np.zeros(3)]))
    efforts = np.concatenate([np.zeros(6), np.full(robot.nv - 6, 0.05)])  # none on the base
    for _ in range(100):
        sim.step(efforts)
    momentum = robot.centroidal_momentum_matrix(sim.q) @ sim.qd
    np.testing.assert_allclose(momentum[:3], force * sim.time, rtol=1e-9)
