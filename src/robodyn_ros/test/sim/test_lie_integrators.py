"""sim/lie_integrators, as SimulatedRobot steps a floating base with them, against invariants:
a free-floating robot's centroidal momentum and kinetic energy, the integrators' orders of
accuracy, and a quadruped standing on its four held feet."""

from __future__ import annotations

import functools
import warnings
from typing import NamedTuple

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.model import URDFWarning
from robodyn_ros.robot.contact_dynamics import Contact
from robodyn_ros.sim import SimulatedRobot
from robodyn_ros.testing import example_robot_urdf

from helpers.simulation import lossless, run

G = 9.81
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
# Solo12's bent-knee standing posture (example-robot-data's solo.srdf "standing")
STANDING = {"FL": (0.1, 0.8, -1.6), "FR": (-0.1, 0.8, -1.6), "HL": (0.1, -0.8, 1.6),
            "HR": (-0.1, -0.8, 1.6)}


@functools.cache
def load(name: str, gravity: bool = True) -> Robot:
    """An example robot with its base floating, under gravity or in free fall, lossless (its
    joints free of damping, friction and limits)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)  # singular inertias of sensor links
        robot = lossless(Robot.from_urdf(example_robot_urdf(name), floating_base=True))
    return robot if gravity else robot.with_gravity((0.0, 0.0, 0.0))


def standing(robot: Robot) -> np.ndarray:
    """Solo12 with its knees bent, the base at the world origin."""
    q = robot.neutral()
    where = {joint.name: joint.q.start for joint in robot.configuration_joints}
    for leg, angles in STANDING.items():
        for joint, angle in zip(("HAA", "HFE", "KFE"), angles, strict=True):
            q[where[f"{leg}_{joint}"]] = angle
    return q


def free_start(name: str) -> tuple[Robot, np.ndarray, np.ndarray]:
    """The robot without gravity and a tumbling start, from Solo12's bent-knee posture or
    TALOS' neutral one: the base drifting and turning at 1 rad/s about an axis off the
    robot's principal ones, every joint moving at 1 rad/s (alternating signs)."""
    robot = load(name, gravity=False)
    q = standing(robot) if name == "solo12" else robot.neutral()
    v = np.zeros(robot.nv)
    v[:3] = (0.3, -0.2, 0.1)
    v[3:6] = np.array((0.6, -0.5, 0.62)) / np.linalg.norm((0.6, -0.5, 0.62))
    v[6:] = np.where(np.arange(robot.nv - 6) % 2, 1.0, -1.0)
    return robot, q, v


def zero_torque(simulation: SimulatedRobot) -> np.ndarray:
    return np.zeros(simulation.robot.nv)


# -- a. conservation ------------------------------------------------------------------------


class Drift(NamedTuple):
    momentum: float  # max |h − h0|, h = A_g v [linear, N·s; angular about the CoM, N·m·s]
    energy: float  # max |T − T0| / T0
    com_line: float  # max distance of the CoM from c0 + t·h_linear/m, m


def drift(name: str, integrator: str, horizon: float) -> Drift:
    """The drift of a torque-free tumble over `horizon` seconds at dt = 1 ms."""
    robot, q, v = free_start(name)
    simulation = SimulatedRobot(robot, integrator, 1e-3, q=q, qd=v)
    states = run(simulation, round(horizon / 1e-3), zero_torque)
    h = (robot.centroidal_momentum_matrix(states.q) @ states.v[..., None])[..., 0]
    T = robot.kinetic_energy(states.q, states.v)
    com = robot.centre_of_mass(states.q)
    line = com[0] + states.times[:, None] * h[0, :3] / robot.mass
    return Drift(float(np.abs(h - h[0]).max()), float(np.abs(T / T[0] - 1.0).max()),
                 float(np.abs(com - line).max()))


# robot → (horizon s, the bounds on RK4's Drift): ten times the drift measured, which was
# Solo12 over 2 s: |h − h0| 5.6e-13, |T − T0|/T0 9.9e-13, CoM off its line 5.7e-14 m;
# TALOS over 2 s: 2.8e-10, 8.2e-12, 2.0e-12 (|h0| ≈ 1 for Solo12, 48 for TALOS).
# Semi-implicit Euler drifts by 7e-4, 2e-3, 3e-4 (Solo12) and 7e-2, 4e-3, 4e-4 (TALOS).
# The preview's test holds Solo12 over 10 s (test_floating_preview.py).
CONSERVATION = {
    "solo12": (2.0, Drift(momentum=1e-11, energy=1e-11, com_line=1e-12)),
    "talos_reduced": (2.0, Drift(momentum=3e-9, energy=1e-10, com_line=3e-11)),
}


@pytest.mark.parametrize("name", list(CONSERVATION))
def test_a_free_floating_robot_conserves_momentum_and_energy(name: str) -> None:
    """With no gravity and τ = 0 the centroidal momentum (so the CoM's straight line) and the
    kinetic energy are constants of the motion: RK4 keeps them to round-off, semi-implicit
    Euler, first order, visibly does not (so the measure sees a drift)."""
    horizon, bound = CONSERVATION[name]
    rk4 = drift(name, "rk4", horizon)
    euler = drift(name, "semi_implicit_euler", horizon)
    for field, measured, allowed, loose in zip(Drift._fields, rk4, bound, euler, strict=True):
        assert measured < allowed, f"{name}, RK4: {field} drifts by {measured:.3g} > {allowed:g}"
        assert loose > 1e4 * allowed, (
            f"{name}, semi-implicit Euler: {field} drifts by only {loose:.3g}, where RK4's "
            f"bound is {allowed:g}: the measure does not tell the integrators apart")


# -- b. orders of accuracy ------------------------------------------------------------------


@functools.cache
def final_state(integrator: str, dt: float, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    """Solo12's state after a torque-free tumble of `horizon` seconds."""
    robot, q, v = free_start("solo12")
    simulation = SimulatedRobot(robot, integrator, dt, q=q, qd=v)
    run(simulation, round(horizon / dt), zero_torque)
    return simulation.q, simulation.qd


def error(state: tuple[np.ndarray, np.ndarray], reference: tuple[np.ndarray, np.ndarray]) -> float:
    """|(q ⊖ q_ref, v − v_ref)|: the distance on the group, not in the quaternion's R⁴."""
    step = load("solo12", gravity=False).difference(reference[0], state[0])
    return float(np.linalg.norm(np.concatenate([step, state[1] - reference[1]])))


@pytest.mark.parametrize(("integrator", "dt", "low", "high"),
                         [("rk4", 0.02, 3.5, 4.5), ("semi_implicit_euler", 0.005, 0.8, 1.2)])
def test_halving_the_step_shows_the_order(integrator: str, dt: float, low: float,
                                          high: float) -> None:
    """The error after 1 s, against RK4 at 2.5 ms (RK4 at dt/8 for RK4's dt), falls by 2^p
    when dt halves: p ≈ 4 for Runge–Kutta–Munthe-Kaas (measured 3.98; with the bracket's
    sign flipped it is 2.07), p ≈ 1 for semi-implicit Euler (measured 0.99)."""
    reference = final_state("rk4", 0.0025, 1.0)
    coarse = error(final_state(integrator, dt, 1.0), reference)
    fine = error(final_state(integrator, dt / 2, 1.0), reference)
    order = np.log2(coarse / fine)
    assert low < order < high, (f"{integrator}: error {coarse:.3g} at dt = {dt:g}, {fine:.3g} "
                                f"at dt/2: observed order {order:.2f}, not in ({low}, {high})")


# -- c. a quadruped standing on its feet --------------------------------------------------------


def test_a_quadruped_stands_on_its_four_feet() -> None:
    """Solo12 under gravity, its feet held where they start ("3d", kp = 100, kd = 20), its
    joints on a soft PD (3 N·m/rad, 0.1 N·m·s/rad) around a bent-knee posture, for 2 s: the
    feet stay put (measured 7e-13 m; semi-implicit Euler's would be 8e-6 m), the base sinks
    3 cm as the knees give and stops, and the feet carry the robot's weight."""
    robot = load("solo12")
    q0 = standing(robot)
    simulation = SimulatedRobot(robot, "rk4", 1e-3, q=q0,
                                contacts=[Contact(foot, "3d") for foot in FEET],
                                contact_gains=(100.0, 20.0))
    feet0 = np.array([contact.placement[:3, 3] for contact in simulation.held_contacts])
    np.testing.assert_allclose(feet0, [robot.frame_pose(q0, foot)[:3, 3] for foot in FEET])
    lift: list[float] = []  # Σ f_z the contacts exerted at the start of each step

    def pd(s: SimulatedRobot) -> np.ndarray:
        if s.contact_forces:
            lift.append(sum(float(force[2]) for force in s.contact_forces))
        tau = np.zeros(robot.nv)
        tau[6:] = -3.0 * (s.q[7:] - q0[7:]) - 0.1 * s.qd[6:]
        return tau

    states = run(simulation, 2000, pd)
    assert len(lift) == 1999  # contact_forces from the second step on
    feet = np.stack([robot.frame_pose(states.q, foot)[:, :3, 3] for foot in FEET], axis=1)
    assert np.abs(feet - feet0).max() < 1e-6, f"the feet slip by {np.abs(feet - feet0).max():.3g} m"
    sinking = np.abs(states.q[:, 2] - q0[2]).max()
    assert 0.01 < sinking < 0.05, f"the base's height changes by {sinking:.3g} m"  # 0.031
    weight = robot.mass * G
    settled = np.array(lift[-500:])  # the last 0.5 s; within 3e-5 of the weight, measured
    assert np.abs(settled / weight - 1.0).max() < 1e-3, (
        f"the feet carry {settled.min():.6g}..{settled.max():.6g} N of a {weight:.6g} N robot")
