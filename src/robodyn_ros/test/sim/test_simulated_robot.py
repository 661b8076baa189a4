"""sim/: integrators and SimulatedRobot against closed forms and invariants: convergence
orders, energy conservation and dissipation, a pendulum's small-angle period, joint limits
and refused commands."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.model.generate import random_chain_urdf
from robodyn_ros.sim import INTEGRATORS, SimulatedRobot, rk4, semi_implicit_euler

PANDA = Path(__file__).resolve().parents[2] / "urdf" / "panda.urdf"
G = 9.81


def without(robot: Robot, *, dissipation=True, limits=True) -> Robot:
    """The robot with its damping and friction and/or its limits removed."""
    model, n, changes = robot.model, robot.nv, {}
    if dissipation:
        changes.update(damping=np.zeros(n), friction=np.zeros(n))
    if limits:
        inf = np.full(n, np.inf)
        changes.update(lower=-inf, upper=inf, velocity_limit=inf, effort_limit=inf)
    return Robot(dataclasses.replace(model, **changes))


def energy(robot: Robot, q, qd) -> float:
    return float(robot.kinetic_energy(q, qd) + robot.potential_energy(q))


@pytest.fixture(scope="module")
def panda() -> Robot:
    return Robot.from_urdf(PANDA)


@pytest.fixture(scope="module")
def chain() -> Robot:
    return Robot.from_urdf_string(random_chain_urdf(6, seed=3))


def final_state(robot: Robot, integrator, dt: float, T: float, q0, qd0):
    """Torque-free motion of `robot` from (q0, qd0) over T seconds."""
    tau = np.zeros(robot.nv)

    def acceleration(q, qd):
        return robot.forward_dynamics(q, qd, tau)

    state = (q0, qd0)
    for _ in range(round(T / dt)):
        state = integrator(state, dt, acceleration)
    return np.concatenate(state)


@pytest.mark.parametrize(
    ("integrator", "ratio", "band"),
    [(rk4, 16.0, (13.0, 19.0)), (semi_implicit_euler, 2.0, (1.8, 2.2))],
)
def test_convergence_order(chain, integrator, ratio, band) -> None:
    """Halving dt divides the error at T by 2^order (vs an RK4 run at a far smaller dt)."""
    rng = np.random.default_rng(0)
    q0, qd0 = rng.uniform(-0.5, 0.5, chain.nv), rng.uniform(-0.5, 0.5, chain.nv)
    T = 0.4
    reference = final_state(chain, rk4, 2.5e-4, T, q0, qd0)
    big = 0.02 if integrator is rk4 else 0.005
    errors = [
        np.linalg.norm(final_state(chain, integrator, dt, T, q0, qd0) - reference)
        for dt in (big, big / 2)
    ]
    assert band[0] < errors[0] / errors[1] < band[1], (errors, errors[0] / errors[1], ratio)


def test_integrators_registry() -> None:
    assert INTEGRATORS == {"semi_implicit_euler": semi_implicit_euler, "rk4": rk4}


# J over 1 s, RK4 at 1 ms: measured 6.7e-5 J of E ≈ 87.6 J (the arm reaches 12 rad/s without
# limits), 4.1e-6 J at 0.5 ms (the ≈16× of a 4th-order method)
ENERGY_DRIFT = 2e-4


def test_panda_conserves_energy_without_damping_and_friction(panda) -> None:
    robot = without(panda)
    q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.5, 0.8])
    sim = SimulatedRobot(robot, "rk4", 1e-3, q=q0, qd=np.full(7, 0.5))
    E0, energies = energy(robot, sim.q, sim.qd), []
    for _ in range(1000):
        sim.step(np.zeros(7))
        energies.append(energy(robot, sim.q, sim.qd))
    assert np.max(np.abs(np.array(energies) - E0)) < ENERGY_DRIFT
    assert np.linalg.norm(sim.q - q0) > 0.5  # it did swing


def test_damping_and_friction_dissipate_energy_monotonically(panda) -> None:
    robot = without(panda, dissipation=False)  # the URDF's damping and friction, no limits
    sim = SimulatedRobot(robot, q=np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.5, 0.8]))
    energies = [energy(robot, sim.q, sim.qd)]
    for _ in range(1000):
        sim.step(np.zeros(7))
        energies.append(energy(robot, sim.q, sim.qd))
    steps = np.diff(energies)
    assert np.all(steps <= 1e-9), steps.max()
    assert energies[-1] < energies[0] - 0.1


def pendulum_urdf(m: float, length: float, i_com: float) -> str:
    return f"""<robot name="pendulum">
  <link name="base"/>
  <link name="bob">
    <inertial><origin xyz="0 0 {-length}"/><mass value="{m}"/>
      <inertia ixx="{i_com}" iyy="{i_com}" izz="{i_com}" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="bob"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="100" effort="100"/></joint>
</robot>"""


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
def test_pendulum_small_angle_period(integrator) -> None:
    m, length, i_com = 2.0, 0.5, 0.01  # I about the hinge: i_com + m·length²
    robot = Robot.from_urdf_string(pendulum_urdf(m, length, i_com))
    expected = 2 * np.pi * np.sqrt((i_com + m * length**2) / (m * G * length))
    sim = SimulatedRobot(robot, integrator, 1e-3, q=[0.01])
    times, qs = [0.0], [0.01]
    while sim.time < 3 * expected:
        sim.step([0.0])
        times.append(sim.time)
        qs.append(sim.q[0])
    qs, times = np.array(qs), np.array(times)
    k = np.flatnonzero((qs[:-1] > 0) & (qs[1:] <= 0))  # downward zero crossings
    crossings = times[k] + qs[k] / (qs[k] - qs[k + 1]) * (times[k + 1] - times[k])
    period = np.mean(np.diff(crossings))
    assert abs(period / expected - 1) < 0.005, (period, expected)


def test_position_limits_hold(panda) -> None:
    sim = SimulatedRobot(panda)  # the URDF's limits: the arm falls onto them
    lower, upper = panda.model.lower, panda.model.upper
    at_limit = 0
    for _ in range(1500):
        sim.step(np.zeros(7))
        q, qd = sim.q, sim.qd
        assert np.all(q >= lower) and np.all(q <= upper)
        assert np.all(qd[q == upper] <= 0.0) and np.all(qd[q == lower] >= 0.0)
        assert np.all(np.abs(qd) <= panda.model.velocity_limit)
        at_limit += np.count_nonzero((q == upper) | (q == lower))
    assert at_limit > 0  # a limit was reached


def test_velocity_into_a_limit_is_zeroed_and_away_kept(panda) -> None:
    upper, lower = panda.model.upper, panda.model.lower
    q = np.clip(np.zeros(7), lower, upper)
    q[0], q[6] = upper[0], lower[6]
    qd = np.zeros(7)
    qd[0], qd[6] = 1.0, -1.0  # into the limits
    sim = SimulatedRobot(without(panda, dissipation=True, limits=False), q=q, qd=qd)
    sim.step(np.zeros(7))
    assert sim.q[0] == upper[0] and sim.qd[0] == 0.0
    assert sim.q[6] == lower[6] and sim.qd[6] == 0.0
    qd[0], qd[6] = -1.0, 1.0  # away from them: kept
    sim.reset(q, qd)
    sim.step(np.zeros(7))
    assert sim.q[0] < upper[0] and sim.qd[0] < 0.0
    assert sim.q[6] > lower[6] and sim.qd[6] > 0.0


def test_effort_and_velocity_are_clipped(panda) -> None:
    sim = SimulatedRobot(panda, q=[0, 0, 0, -1, 0, 1, 0], qd=np.full(7, 10.0))
    sim.step(np.full(7, 1e4))
    assert np.array_equal(sim.effort, panda.model.effort_limit)
    assert np.all(np.abs(sim.qd) <= panda.model.velocity_limit)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (np.zeros(6), "tau must have 7 values"),
        ([0, 0, np.nan, 0, 0, 0, 0], "non-finite values (NaN or inf) for panda_joint3"),
        ([0, 0, 0, 0, 0, 0, np.inf], "for panda_joint7"),
        (["a"] * 7, "tau must be 7 numbers"),
    ],
)
def test_bad_commands_raise_and_leave_the_state(panda, command, message) -> None:
    sim = SimulatedRobot(panda)
    sim.step(np.zeros(7))
    before = (sim.q, sim.qd, sim.time, sim.effort)
    with pytest.raises(ValueError) as error:
        sim.step(command)
    assert message in str(error.value)
    after = (sim.q, sim.qd, sim.time, sim.effort)
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


@pytest.mark.parametrize("method", ["cholesky", "schur", "cg", "pcg"])
def test_forward_dynamics_methods_follow_the_aba_trajectory(panda, method: str) -> None:
    """0.2 s under a constant effort: the trajectory of a direct method (rounding) or of
    CG/PCG (default tolerance 1e-10) stays within 1e-8 rad of ABA's. The constraint-force
    iterations, converging more slowly, have their own simulation test with a tolerance."""
    sims = [SimulatedRobot(panda, forward_dynamics_method=m) for m in ("aba", method)]
    tau = np.linspace(-2.0, 2.0, panda.nv)
    for _ in range(200):
        for sim in sims:
            sim.step(tau)
    assert sims[1].forward_dynamics_method == method
    assert np.abs(sims[0].q - sims[1].q).max() < 1e-8
    assert np.abs(sims[0].q - sims[0].default_positions()).max() > 1e-3  # it moved


def test_bad_construction_and_reset(panda) -> None:
    with pytest.raises(ValueError, match="unknown integrator 'euler'"):
        SimulatedRobot(panda, "euler")
    with pytest.raises(ValueError, match="unknown forward_dynamics_method 'magic'"):
        SimulatedRobot(panda, forward_dynamics_method="magic")
    with pytest.raises(ValueError, match="dt must be"):
        SimulatedRobot(panda, dt=0.0)
    sim = SimulatedRobot(panda)
    with pytest.raises(ValueError, match=r"panda_joint4=0 not in \[-3.0718, -0.0698\]"):
        sim.reset(np.zeros(7))
    with pytest.raises(ValueError, match="qd must have 7 values"):
        sim.reset(None, np.zeros(3))


def test_a_push_is_the_wrench_through_the_jacobian(panda) -> None:
    """A wrench on the hand acts as J(q)ᵀ w at each stage (Robot.forward_dynamics'
    external_wrenches, held to Pinocchio elsewhere), from the next step until released."""
    q0, qd0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.5, 0.8]), np.full(7, 0.2)
    tau, push = np.linspace(-1.0, 1.0, 7), {"panda_hand_tcp": np.array([5.0, -3.0, 2.0,
                                                                        0.3, 0.1, -0.2])}
    sim = SimulatedRobot(panda, "rk4", 1e-3, q=q0, qd=qd0)
    sim.apply_wrench("panda_hand_tcp", push["panda_hand_tcp"])
    sim.step(tau)

    def pushed(q, qd):
        return panda.forward_dynamics(q, qd, sim.joint_torques(qd, tau), external_wrenches=push)

    np.testing.assert_allclose(np.concatenate([sim.q, sim.qd]),
                               np.concatenate(rk4((q0, qd0), 1e-3, pushed)), rtol=0, atol=1e-13)
    sim.apply_wrench("panda_hand_tcp", np.zeros(6))
    assert sim.external_wrenches == {}
    with pytest.raises(ValueError, match="has no frame 'nowhere'"):
        sim.apply_wrench("nowhere", np.zeros(6))
    with pytest.raises(ValueError, match="must be 6 finite numbers"):
        sim.apply_wrench("panda_hand_tcp", [1.0, np.nan, 0, 0, 0, 0])
