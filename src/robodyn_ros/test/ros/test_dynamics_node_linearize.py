"""dynamics_node's linearize service over real DDS: A and B of one simulation step, as
sim.linearization.step_jacobians gives them with the robot's damping, friction and effort
limits, for the panda under each integrator and for a floating Solo12 at the newest odometry's
base; every bad request is refused naming its field, and the next good one is answered."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from robodyn_interfaces.srv import Linearize
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.odometry import base_link, odometry_message
from robodyn_ros.sim.linearization import (
    LINEARIZED_INTEGRATORS,
    JointLosses,
    StepJacobians,
    step_jacobians,
)
from robodyn_ros.testing import example_robot_urdf

from helpers.nodes import PATIENCE, Peer, call, dynamics_peer, panda_state, wait_for
from helpers.robots import PANDA, PANDA_JOINTS, Q0

TOLERANCE = 1e-12  # the node calls the same functions: relative to a matrix's largest entry
DT = 1e-3  # s
RATES = [0.3, -0.2, 0.1, 0.4, -0.5, 0.2, -0.1]  # rad/s: friction and damping at work
EFFORTS = [5.0, -3.0, 2.0, 1.0, 20.0, -0.5, 0.2]  # N·m: joint 5's beyond its limit (12)
CLIPPED = 4  # its column of u
NAN, INF = float("nan"), float("inf")


def expected_jacobians(robot: Robot, q, v, u, dt: float, integrator: str) -> StepJacobians:
    """step_jacobians with the robot's damping, friction and effort limits (SimulatedRobot's)."""
    model = robot.model
    return step_jacobians(robot, q, v, u, dt, integrator,
                          losses=JointLosses(model.damping, model.friction),
                          effort_limit=robot.per_coordinate(model.effort_limit))


def assert_jacobians(response: Linearize.Response, expected: StepJacobians) -> None:
    """The response's A and B, row-major, equal to `expected` to TOLERANCE."""
    assert response.success, response.message
    for name, published, matrix in (("A", response.state_matrix, expected.A),
                                    ("B", response.input_matrix, expected.B)):
        np.testing.assert_allclose(np.reshape(published, matrix.shape), matrix, rtol=0,
                                   atol=TOLERANCE * np.abs(matrix).max(), err_msg=name)


def linearize(peer: Peer, state: JointState, dt: float = DT, integrator: str = "",
              namespace: str = "") -> Linearize.Response:
    """The node's answer (the node's in `namespace`, "" the root's)."""
    return call(peer, Linearize, f"{namespace}/linearize",
                Linearize.Request(state=state, dt=dt, integrator=integrator))


@pytest.fixture(scope="module")
def panda(ros) -> Iterator[Peer]:
    """A dynamics_node on the panda, for the module."""
    peer = dynamics_peer(ros)
    yield peer
    peer.close()


@pytest.fixture(scope="module")
def panda_robot() -> Robot:
    """The panda as the node loads it."""
    return Robot.from_urdf_string(PANDA)


@pytest.mark.parametrize("integrator", ["", *LINEARIZED_INTEGRATORS])
def test_linearize_gives_the_step_jacobians(panda, panda_robot, integrator) -> None:
    """The panda's A and B, joints sent in another order: an effort beyond its limit is
    clipped, so its column of B is 0; an empty integrator is semi-implicit Euler's."""
    q, v, u = np.array(Q0), np.array(RATES), np.array(EFFORTS)
    expected = expected_jacobians(panda_robot, q, v, u, DT, integrator or "semi_implicit_euler")
    order = list(reversed(range(7)))
    state = JointState(name=[PANDA_JOINTS[k] for k in order], position=list(q[order]),
                       velocity=list(v[order]), effort=list(u[order]))
    response = linearize(panda, state, integrator=integrator)
    assert_jacobians(response, expected)
    assert list(response.joint_names) == PANDA_JOINTS
    assert not np.reshape(response.input_matrix, (14, 7))[:, CLIPPED].any()


def with_field(field: str, index: int, value: float) -> JointState:
    """The good state with `field`[index] = value."""
    message = panda_state(Q0, RATES, EFFORTS)
    values = list(getattr(message, field))
    values[index] = value
    setattr(message, field, values)
    return message


GOOD = panda_state(Q0, RATES, EFFORTS)
BAD_REQUESTS = {  # (state, dt, integrator), the reason expected in the message
    "nan-position": ((with_field("position", 2, NAN), DT, ""),
                     "state: position is non-finite (NaN or inf) for joint(s) panda_joint3"),
    "inf-velocity": ((with_field("velocity", 0, INF), DT, ""),
                     "state: velocity is non-finite (NaN or inf) for joint(s) panda_joint1"),
    "nan-effort": ((with_field("effort", 6, NAN), DT, ""),
                   "state: effort is non-finite (NaN or inf) for joint(s) panda_joint7"),
    "missing-joint": ((panda_state(Q0[:6], names=PANDA_JOINTS[:6]), DT, ""),
                      "state: name has no entry for joint(s) panda_joint7"),
    "unknown-integrator": ((GOOD, DT, "rk45"), "integrator: unknown 'rk45'"),
    "zero-dt": ((GOOD, 0.0, ""), "dt: must be a number of seconds > 0; got 0"),
    "negative-dt": ((GOOD, -1e-3, ""), "dt: must be a number of seconds > 0; got -0.001"),
    "nan-dt": ((GOOD, NAN, ""), "dt: must be a number of seconds > 0; got nan"),
    "inf-dt": ((GOOD, INF, ""), "dt: must be a number of seconds > 0; got inf"),
}


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_a_bad_request_is_refused_naming_the_field(panda, panda_robot, case) -> None:
    (state, dt, integrator), reason = BAD_REQUESTS[case]
    refused = linearize(panda, state, dt, integrator)
    assert not refused.success and reason in refused.message, refused.message
    assert not (refused.state_matrix or refused.input_matrix)
    good = linearize(panda, GOOD)
    assert_jacobians(good, expected_jacobians(panda_robot, Q0, RATES, EFFORTS, DT,
                                              "semi_implicit_euler"))


SOLO = example_robot_urdf("solo12").read_text()
FLOATING = "/floating"  # the Solo12's node's namespace: apart from the panda's


@pytest.fixture(scope="module")
def solo(ros) -> Iterator[tuple[Peer, Robot]]:
    """A dynamics_node on the floating Solo12 in FLOATING, and the robot."""
    node = DynamicsNode(namespace=FLOATING, parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True)])
    peer = Peer(ros, node)
    yield peer, Robot.from_urdf_string(SOLO, floating_base=True)
    peer.close()


def test_a_floating_base_is_linearised_at_the_odometry_base(solo) -> None:
    """x = (q, v) in the tangent space, 2 nv rows: the base's pose and twist from the newest
    odometry, u 0 on the base; before any odometry, refused."""
    peer, robot = solo
    rng = np.random.default_rng(3)
    joints, rates, efforts = rng.uniform(-1.0, 1.0, (3, 12))
    state = JointState(name=list(robot.joint_names[6:]), position=list(joints),
                       velocity=list(rates), effort=list(efforts))
    refused = linearize(peer, state, integrator="rk4", namespace=FLOATING)
    assert not refused.success and "no odometry yet" in refused.message
    orientation = np.array([0.1, 0.2, -0.3, 0.9])
    pose = [0.1, -0.2, 0.3, *orientation / np.linalg.norm(orientation)]
    twist = [0.2, -0.1, 0.05, 0.3, 0.1, -0.2]
    q, v = np.concatenate([pose, joints]), np.concatenate([twist, rates])
    u = np.concatenate([np.zeros(6), efforts])
    base = odometry_message(q, v, "odom", base_link(robot))
    answers: list[Linearize.Response] = []

    def sent_and_answered() -> bool:
        peer.publish(Odometry, f"{FLOATING}/odometry", base)
        answers.append(linearize(peer, state, integrator="rk4", namespace=FLOATING))
        return answers[-1].success

    assert wait_for(sent_and_answered, PATIENCE), answers[-1].message
    assert_jacobians(answers[-1], expected_jacobians(robot, q, v, u, DT, "rk4"))
    assert list(answers[-1].joint_names) == list(robot.joint_names)
