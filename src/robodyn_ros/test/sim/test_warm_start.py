"""sim/warm_start.py: the extrapolated warm start of the iterative forward-dynamics methods in
a simulation loop (Sharf & D'Eleuterio §5), with the real kernels on the bundled Panda."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.robot.iteration import ConvergenceError
from robodyn_ros.sim import SimulatedRobot
from robodyn_ros.sim.warm_start import WarmStartedForwardDynamics, extrapolate

PANDA = Path(__file__).resolve().parents[2] / "urdf" / "panda.urdf"
TOL = 1e-6  # the trajectory's tolerance; the iterations stop at ε = TOL / 10
EPSILON = TOL / 10
STEPS = 100
DT = 2e-3


@pytest.fixture(scope="module")
def panda() -> Robot:
    return Robot.from_urdf(PANDA)


def maneuver(sim: SimulatedRobot) -> np.ndarray:
    """STEPS RK4 steps under gravity compensation plus a swinging torque 2 sin(3t + j) N·m on
    joint j (no velocity feedback, which would make the sampled loop stiff at this dt);
    returns the positions after each step."""
    robot, phases = sim.robot, np.arange(sim.robot.nv)
    positions = []
    for _ in range(STEPS):
        sim.step(robot.gravity_torques(sim.q) + 2.0 * np.sin(3.0 * sim.time + phases))
        positions.append(sim.q)
    return np.array(positions)


def simulation(robot: Robot, method: str = "aba", **options) -> SimulatedRobot:
    return SimulatedRobot(robot, "rk4", DT, forward_dynamics_method=method,
                          forward_dynamics_options=options or None)


@pytest.mark.parametrize("points", [1, 2, 3, 4])
def test_extrapolation_is_exact_for_polynomials_one_degree_below_the_history(points) -> None:
    rng = np.random.default_rng(points)
    coefficients = rng.normal(size=points)  # degree points − 1
    values = [np.polyval(coefficients, t) for t in range(points + 1)]
    history = deque(np.array([v]) for v in reversed(values[:-1]))  # newest first
    assert extrapolate(history) == pytest.approx(values[-1], rel=1e-12)


@pytest.mark.parametrize("method", ["pcg", "jacobi_cg", "sor"])
def test_a_warm_started_simulation_stays_within_tol_of_aba(panda, method: str) -> None:
    reference = maneuver(simulation(panda))
    sim = simulation(panda, method, tol=EPSILON)
    trajectory = maneuver(sim)
    assert np.abs(reference[-1] - reference[0]).max() > 1e-2  # it moved
    assert np.abs(trajectory - reference).max() <= TOL
    assert sim.solver.calls == 4 * STEPS


def test_the_cubic_warm_start_needs_fewer_iterations_than_cold_or_the_previous_step(panda) -> None:
    """SOR over the maneuver: cold 632 iterations a call, from the previous step's q̈ 397,
    from the cubic extrapolation 241 (one run)."""
    iterations = {}
    for history in (0, 1, 4):
        sim = simulation(panda, "sor", tol=EPSILON, history=history)
        maneuver(sim)
        iterations[history] = sim.solver.iterations
    assert iterations[4] < iterations[1] < iterations[0], iterations


def test_reset_forgets_the_history_and_the_counts(panda) -> None:
    sim = simulation(panda, "jacobi_cg", tol=EPSILON)
    maneuver(sim)
    solver = sim.solver
    q, qd, tau = sim.q, sim.qd, panda.gravity_torques(sim.q)
    solver.reset()
    assert (solver.calls, solver.iterations, solver.last) == (0, 0, None)
    fresh = WarmStartedForwardDynamics(panda, "jacobi_cg", tol=EPSILON)
    np.testing.assert_array_equal(solver(q, qd, tau), fresh(q, qd, tau))
    assert solver.last == fresh.last
    sim.reset()
    assert solver.calls == 0


def test_a_step_that_does_not_converge_changes_nothing_and_restarts_cold(panda) -> None:
    sim = simulation(panda, "sor", tol=EPSILON, max_iterations=10_000)
    maneuver(sim)
    before = (sim.q, sim.qd, sim.time)
    sim.solver.options["max_iterations"] = 1
    with pytest.raises(ConvergenceError, match="sor did not converge"):
        sim.step(np.zeros(panda.nv))
    assert all(np.array_equal(a, b) for a, b in zip(before, (sim.q, sim.qd, sim.time),
                                                    strict=True))
    sim.solver.options["max_iterations"] = 10_000
    q, qd = sim.q, sim.qd
    fresh = WarmStartedForwardDynamics(panda, "sor", tol=EPSILON, max_iterations=10_000)
    np.testing.assert_array_equal(sim.solver(q, qd, np.zeros(panda.nv)),
                                  fresh(q, qd, np.zeros(panda.nv)))


def test_an_adaptive_step_that_does_not_converge_raises_convergence_error(
    panda, monkeypatch
) -> None:
    sim = SimulatedRobot(panda, "rk45", forward_dynamics_method="sor")
    assert sim.solver is None  # the adaptive integrator calls forward_dynamics itself

    def not_converging(*_args, **_options):
        raise ConvergenceError("sor did not converge")

    monkeypatch.setattr(panda, "forward_dynamics", not_converging)
    with pytest.raises(ConvergenceError, match="sor did not converge"):
        sim.step(np.zeros(panda.nv))


def test_bad_construction(panda) -> None:
    with pytest.raises(ValueError, match="'aba' is not an iterative"):
        WarmStartedForwardDynamics(panda, "aba")
    with pytest.raises(ValueError, match="history must be 0 to 4"):
        WarmStartedForwardDynamics(panda, "cg", history=5)
    with pytest.raises(ValueError, match="sets initial_guess itself"):
        WarmStartedForwardDynamics(panda, "cg", initial_guess=np.zeros(panda.nv))
    with pytest.raises(ValueError, match="under a fixed-step integrator only; got 'aba'"):
        SimulatedRobot(panda, forward_dynamics_options={"tol": 1e-6})
    with pytest.raises(ValueError, match="under a fixed-step integrator only; got 'cg' under"):
        SimulatedRobot(panda, "rk45", forward_dynamics_method="cg",
                       forward_dynamics_options={"tol": 1e-6})
