"""The armature parameter of every node, over real DDS: the dynamics published with it match
Pinocchio's with ``model.armature`` set; a change at run time takes effect or is refused with
the reason; a new robot keeps the armature of the joints it has and names the others; it is
the remedy that lets a robot whose tip moves no mass be served."""

from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.parameter import Parameter
from std_msgs.msg import String

from robodyn_ros import Robot
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.nodes import (
    TOLERANCE,
    Peer,
    dynamics_answer,
    dynamics_peer,
    new_state,
    panda_node,
    published_answer,
    wait_for,
)
from helpers.robots import CHAIN, MASSLESS, PANDA, PANDA_JOINTS

ARMATURE = {"panda_joint1": 0.3, "panda_joint4": 0.2, "panda_joint7": 0.05}
INLINE = "{" + ", ".join(f"{joint}: {value}" for joint, value in ARMATURE.items()) + "}"


def expect_pinocchio(peer: Peer, armature: dict[str, float], urdf: str = PANDA) -> None:
    """The node's M and q̈ at a new state are Pinocchio's with this armature."""
    q, effort = new_state(), np.linspace(-2.0, 2.0, 7)
    answer = published_answer(peer, q, effort)
    M, qdd = np.reshape(answer.mass_matrix, (7, 7)), np.array(answer.acceleration)
    reference = PinocchioOracle(urdf, PANDA_JOINTS, armature=armature, is_string=True)
    M_ref, qdd_ref = reference.mass_matrix(q), reference.aba(q, np.zeros(7), effort)
    np.testing.assert_allclose(M, M_ref, atol=TOLERANCE * np.abs(M_ref).max())
    np.testing.assert_allclose(qdd, qdd_ref, atol=TOLERANCE * np.abs(qdd_ref).max())


def armature_peer(ros, armature: str) -> Peer:
    """dynamics_node on the panda with this armature parameter, publishing M and q̈."""
    return dynamics_peer(ros, Parameter("armature", value=armature),
                         Parameter("quantities", value=["mass_matrix", "acceleration"]))


@pytest.fixture
def dynamics(ros):
    peer = armature_peer(ros, INLINE)
    yield peer
    peer.close()


def test_dynamics_node_publishes_m_and_qdd_with_the_armature(dynamics) -> None:
    expect_pinocchio(dynamics, ARMATURE)


def test_armature_changes_at_run_time_and_bad_values_are_refused(dynamics, tmp_path) -> None:
    node = dynamics.node
    path = tmp_path / "armature.yaml"
    path.write_text("armature:\n  panda_joint2: 0.4\n  panda_joint6: 0.1\n")
    result = node.set_parameters([Parameter("armature", value=str(path))])[0]
    assert result.successful, result.reason
    expect_pinocchio(dynamics, {"panda_joint2": 0.4, "panda_joint6": 0.1})

    for value, reason in (
        ("{panda_joint3: -1.0}", "armature of joint 'panda_joint3' must be a finite number ≥ 0"),
        ("{wrist: 0.1}", "no moving joint(s) wrist"),
        ("[0.1, 0.2]", "neither a YAML mapping"),
        (str(tmp_path / "missing.yaml"), "missing.yaml"),
    ):
        refused = node.set_parameters([Parameter("armature", value=value)])[0]
        assert not refused.successful and reason in refused.reason, (value, refused.reason)
    expect_pinocchio(dynamics, {"panda_joint2": 0.4, "panda_joint6": 0.1})  # as it was

    assert node.set_parameters([Parameter("armature", value="")])[0].successful
    expect_pinocchio(dynamics, {})


def test_a_new_robot_keeps_the_armature_of_the_joints_it_has(ros) -> None:
    """The armature names joints of two robots: each robot in turn gets its own joints'
    armature, with a WARN naming the others."""
    chain = Robot.from_urdf_string(CHAIN)
    first = chain.joint_names[0]
    dynamics = armature_peer(ros, str({first: 0.5, **ARMATURE}))
    node = dynamics.node
    try:
        assert wait_for(lambda: dynamics.reported(f"armature of joint(s) {first} left out"))
        expect_pinocchio(dynamics, ARMATURE)

        dynamics.description.publish(String(data=CHAIN))
        assert wait_for(lambda: node.robot is not None and node.robot.nv == chain.nv)
        assert wait_for(lambda: dynamics.reported(
            "armature of joint(s) panda_joint1, panda_joint4, panda_joint7 left out"))
        expected = np.zeros(chain.nv)
        expected[0] = 0.5
        np.testing.assert_array_equal(node.robot.model.armature, expected)

        since = len(dynamics.statuses)
        dynamics.description.publish(String(data=PANDA))
        assert wait_for(lambda: node.robot is not None and node.robot.nv == 7)
        expect_pinocchio(dynamics, ARMATURE)
        assert wait_for(lambda: dynamics.reported(f"armature of joint(s) {first} left out",
                                                  since=since))
    finally:
        dynamics.close()


def test_armature_on_a_joint_that_moves_no_mass_lets_the_robot_be_served(dynamics) -> None:
    """The panda whose link 7 has no inertial: refused while q̈ is published; with armature on
    joint 7 it is served, and q̈ matches Pinocchio on the same description."""
    node = dynamics.node
    assert node.set_parameters([Parameter("armature", value="")])[0].successful
    dynamics.description.publish(String(data=MASSLESS))
    assert wait_for(lambda: dynamics.reported("panda_joint7", DiagnosticStatus.ERROR))
    assert node.robot.model.name == "panda" and node.robot.massless_joints == ()  # as it was

    result = node.set_parameters([Parameter("armature", value="{panda_joint7: 0.05}")])[0]
    assert result.successful, result.reason  # the panda in service gets it
    dynamics.description.publish(String(data=MASSLESS))
    assert wait_for(lambda: node.robot.model.armature[6] == 0.05
                    and node.robot.mass_matrix(np.zeros(7))[6, 6] == pytest.approx(0.05))
    expect_pinocchio(dynamics, {"panda_joint7": 0.05}, MASSLESS)
    assert dynamics_answer(dynamics)


@pytest.mark.parametrize("kind", [SimNode, ControllerNode, PreviewNode])
def test_every_node_takes_the_armature_parameter(ros, kind) -> None:
    """The simulated robot, the controller's and the preview's robot carry the armature, and
    a change at run time reaches them."""
    with panda_node(kind, Parameter("armature", value=INLINE)) as (node, robot):
        expected = Robot.from_urdf_string(PANDA, armature=ARMATURE).model.armature
        assert wait_for(lambda: robot() is not None)
        np.testing.assert_array_equal(robot().model.armature, expected)
        result = node.set_parameters([Parameter("armature", value="{panda_joint5: 0.2}")])[0]
        assert result.successful, result.reason
        assert wait_for(lambda: robot().model.armature[4] == 0.2)
        assert robot().model.armature.sum() == 0.2
        refused = node.set_parameters([Parameter("armature", value="{panda_joint5: nan}")])[0]
        assert not refused.successful and "panda_joint5" in refused.reason
