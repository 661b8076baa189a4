"""One step's transition Jacobians A = ∂x⁺/∂x and B = ∂x⁺/∂u (sim.linearization) against
central differences of the step itself, x = (q, v) in the tangent space: the integrators of
sim.lie_integrators and an explicit Euler written here, on a fixed arm, a free flyer, a tree
with inner free flyers and a planar joint, and a mimic robot, with the joints' damping,
friction and effort limits; and SimulatedRobot.linearize against differences of
SimulatedRobot.step.

Central differences of step 1e-6 in each coordinate: their truncation error is ~1e-12 of the
step's third derivative, their rounding ~1e-16 / 1e-6 of the state; the step's own scale keeps
the difference to the analytical Jacobians near 1e-8 of the largest entry. Tolerance: 1e-6
relative to the largest entry.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robodyn_ros import Robot
from robodyn_ros.contact.world import world_of
from robodyn_ros.model.generate import random_tree_urdf, with_joint_kinds, with_root_joint
from robodyn_ros.sim.lie_integrators import LIE_INTEGRATORS
from robodyn_ros.sim.linearization import (
    LINEARIZED_INTEGRATORS,
    JointLosses,
    StepJacobians,
    step_jacobians,
)
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing.example_robots import example_robot_urdf

from helpers.robots import PANDA, with_mimic
from helpers.tolerances import assert_close

STEP = 1e-6
RTOL = 1e-6
DT = 0.01
ROBOTS = {
    "panda": lambda: PANDA,
    "solo12_floating": lambda: with_root_joint(example_robot_urdf("solo12").read_text(),
                                               "floating"),
    "tree_inner_joints": lambda: with_joint_kinds(
        random_tree_urdf(9, seed=3), {"joint_0": "floating", "joint_4": "planar",
                                      "joint_6": "floating"}),
    "mimic": lambda: with_mimic(PANDA, "panda_joint6", "panda_joint4", -0.7, 0.2),
}
_LOADED: dict[str, Robot] = {}


def robot_of(name: str) -> Robot:
    if name not in _LOADED:
        _LOADED[name] = Robot.from_urdf_string(ROBOTS[name]())
    return _LOADED[name]


def explicit_euler(state, dt, acceleration, robot):
    """q⁺ = q ⊕ dt v, v⁺ = v + dt a(q, v)."""
    q, v = state
    return robot.integrate(q, v, dt), v + dt * acceleration(q, v)


STEPPERS = {"explicit_euler": explicit_euler, **LIE_INTEGRATORS}


def differences(robot: Robot, step: Callable[[np.ndarray, np.ndarray, np.ndarray], tuple],
                q: np.ndarray, v: np.ndarray, u: np.ndarray) -> StepJacobians:
    """A and B of step(q, v, u) → (q⁺, v⁺) by central differences in the tangent space."""
    def delta(after: tuple, before: tuple) -> np.ndarray:
        return np.concatenate([robot.difference(before[0], after[0]), after[1] - before[1]]) \
            / (2 * STEP)

    A = np.stack([delta(step(robot.integrate(q, STEP * e[:robot.nv]), v + STEP * e[robot.nv:], u),
                        step(robot.integrate(q, -STEP * e[:robot.nv]), v - STEP * e[robot.nv:],
                             u))
                  for e in np.eye(2 * robot.nv)], axis=1)
    B = np.stack([delta(step(q, v, u + STEP * e), step(q, v, u - STEP * e))
                  for e in np.eye(robot.nv)], axis=1)
    return StepJacobians(A, B)


def losses_of(robot: Robot, rng: np.random.Generator) -> JointLosses:
    joints = len(robot.model.joint_names)
    return JointLosses(rng.uniform(0.0, 0.5, joints), rng.uniform(0.0, 0.5, joints), 0.1)


def the_step(robot: Robot, integrator: str, losses: JointLosses, limit: np.ndarray):
    """(q, v, u) → (q⁺, v⁺): the integrator on FD(q, v, clip(u) − Gᵀ(d G v + f tanh(G v/ε)))."""
    G = np.eye(robot.nv) if robot.coupling is None else robot.coupling.G

    def step(q: np.ndarray, v: np.ndarray, u: np.ndarray) -> tuple:
        applied = np.clip(u, -limit, limit)

        def acceleration(q_k: np.ndarray, v_k: np.ndarray) -> np.ndarray:
            rates = G @ v_k
            loss = losses.damping * rates + losses.friction * np.tanh(
                rates / losses.friction_velocity)
            return robot.forward_dynamics(q_k, v_k, applied - G.T @ loss)

        return STEPPERS[integrator]((q, v), DT, acceleration, robot)

    return step


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(list(ROBOTS)), integrator=st.sampled_from(LINEARIZED_INTEGRATORS),
       seed=st.integers(0, 10_000))
def test_a_and_b_are_the_steps_differences(name: str, integrator: str, seed: int) -> None:
    """Property: any of the robots, any integrator, any state and command, some of the
    command clipped at its limit."""
    robot = robot_of(name)
    rng = np.random.default_rng(seed)
    q = robot.integrate(robot.neutral(), rng.uniform(-1.0, 1.0, robot.nv))
    v, u = rng.uniform(-1.0, 1.0, (2, robot.nv))
    losses, limit = losses_of(robot, rng), np.full(robot.nv, 0.8)
    ours = step_jacobians(robot, q, v, u, DT, integrator, losses=losses, effort_limit=limit)
    expected = differences(robot, the_step(robot, integrator, losses, limit), q, v, u)
    assert_close(ours.A, expected.A, f"A of {integrator}", RTOL)
    assert_close(ours.B, expected.B, f"B of {integrator}", RTOL)
    assert not ours.B[:, np.abs(u) > 0.8].any(), "a clipped command moves nothing"


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_the_simulated_robots_linearisation_is_its_steps(integrator: str) -> None:
    """SimulatedRobot.linearize against differences of SimulatedRobot.step itself, on the
    URDF's own damping, friction and effort limits, away from the joints' limits."""
    robot = robot_of("panda")
    sim = SimulatedRobot(robot, integrator, DT)
    q0 = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.4, 0.6])
    v0, tau = np.full(7, 0.3), np.array([5.0, -3.0, 2.0, 1.0, -0.5, 0.4, 0.2])

    def step(q: np.ndarray, v: np.ndarray, u: np.ndarray) -> tuple:
        sim.reset(q, v)
        sim.step(u)
        return sim.q, sim.qd

    sim.reset(q0, v0)
    ours = sim.linearize(tau)
    expected = differences(robot, step, q0, v0, tau)
    assert_close(ours.A, expected.A, "A", RTOL)
    assert_close(ours.B, expected.B, "B", RTOL)


def test_steps_it_does_not_linearise_are_refused() -> None:
    robot = robot_of("panda")
    with pytest.raises(ValueError, match="adaptive integrator 'rk45'"):
        SimulatedRobot(robot, "rk45").linearize(np.zeros(7))
    ground = world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, -1], "friction": 0.5}]})
    with pytest.raises(ValueError, match="world of planes"):
        SimulatedRobot(robot, "semi_implicit_euler", world=ground).linearize(np.zeros(7))
    with pytest.raises(ValueError, match="unknown integrator 'midpoint'"):
        step_jacobians(robot, np.zeros(7), np.zeros(7), np.zeros(7), DT, "midpoint")
    with pytest.raises(ValueError, match="u must have shape"):
        step_jacobians(robot, np.zeros(7), np.zeros(7), np.zeros(6), DT)
    with pytest.raises(ValueError, match="dt must be positive"):
        step_jacobians(robot, np.zeros(7), np.zeros(7), np.zeros(7), 0.0)


@pytest.mark.parametrize("name", ["panda", "tree_inner_joints"])
def test_a_batch_is_its_states_one_by_one(name: str) -> None:
    """A trajectory's steps linearised from one batch of each kernel, as a planner does, equal
    the steps linearised one at a time (to the kernels' batch-to-single agreement)."""
    robot = robot_of(name)
    rng = np.random.default_rng(3)
    q = np.stack([robot.integrate(robot.neutral(), rng.uniform(-1.0, 1.0, robot.nv))
                  for _ in range(4)])
    v, u = rng.uniform(-1.0, 1.0, (2, 4, robot.nv))
    losses = losses_of(robot, rng)
    for integrator in LINEARIZED_INTEGRATORS:
        batch = step_jacobians(robot, q, v, u, DT, integrator, losses=losses)
        for b in range(4):
            one = step_jacobians(robot, q[b], v[b], u[b], DT, integrator, losses=losses)
            assert_close(batch.A[b], one.A, f"A of {integrator}", 1e-12)
            assert_close(batch.B[b], one.B, f"B of {integrator}", 1e-12)
