"""The gravity parameter of every node, over real DDS: it is changeable at run time, and
dynamics_node's published g and q̈ follow Pinocchio with ``model.gravity`` set; a gravity that
is not three finite numbers is refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest
from rclpy.parameter import Parameter

from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.nodes import dynamics_peer, new_state, panda_node, published_answer
from helpers.robots import PANDA
from helpers.tolerances import close

WALL = (9.81, 0.0, 0.0)  # base z horizontal: the arm hangs off a wall
SLANTED = (1.2, -3.4, 8.9)


def expect_node_follows(peer, gravity) -> None:
    """dynamics_node's published g and q̈ at a new state are Pinocchio's under `gravity`."""
    q, effort = new_state(), np.linspace(-2.0, 2.0, 7)
    answer = published_answer(peer, q, effort)
    oracle = PinocchioOracle(PANDA, [f"panda_joint{k}" for k in range(1, 8)], gravity=gravity,
                             is_string=True)
    close(answer.gravity_torques, oracle.gravity_torques(q))
    close(answer.acceleration, oracle.aba(q, np.zeros(7), effort))


def test_dynamics_node_publishes_g_and_qdd_under_the_gravity_parameter(ros) -> None:
    peer = dynamics_peer(ros, Parameter("gravity", value=list(WALL)),
                         Parameter("quantities", value=["gravity_torques", "acceleration"]))
    node = peer.node
    try:
        expect_node_follows(peer, WALL)
        assert node.set_parameters([Parameter("gravity", value=list(SLANTED))])[0].successful
        expect_node_follows(peer, SLANTED)
        for value in ([0.0, float("nan"), 0.0], [1.0, 2.0]):
            refused = node.set_parameters([Parameter("gravity", value=value)])[0]
            assert not refused.successful and "gravity must be 3 finite numbers" in \
                refused.reason, refused.reason
        expect_node_follows(peer, SLANTED)  # as it was
    finally:
        peer.close()


@pytest.mark.parametrize("kind", [SimNode, ControllerNode, PreviewNode])
def test_every_node_takes_the_gravity_parameter(ros, kind) -> None:
    """The simulated robot, the controller's and the preview's robot are under the gravity,
    and a change at run time reaches them."""
    with panda_node(kind, Parameter("gravity", value=list(WALL))) as (node, robot):
        np.testing.assert_array_equal(robot().model.gravity, WALL)
        assert node.set_parameters([Parameter("gravity", value=list(SLANTED))])[0].successful
        np.testing.assert_array_equal(robot().model.gravity, SLANTED)
