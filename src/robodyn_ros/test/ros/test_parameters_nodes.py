"""Parameters over real DDS: every parameter of every node is described, typed, ranged where
numeric and read-only where a change cannot be applied (seen through the node's
describe_parameters service); a change out of range or among no choices is refused with the
reason; the changes that were once accepted and ignored are applied (diagnostic_period,
sim_node's dt and integrator); a parameter the node does not have is an error at start that
lists the valid names, from a params file as from the command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import DescribeParameters, SetParameters
from rclpy.parameter import Parameter

from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.parameters import ParameterError
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.sim_node import SimNode

from helpers.nodes import Peer, call, dynamics_peer, wait_for
from helpers.robots import PANDA

NODES = {"dynamics_node": DynamicsNode, "sim_node": SimNode, "controller_node": ControllerNode,
         "preview_node": PreviewNode}
NUMBERS = (ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_INTEGER)


@pytest.mark.parametrize("kind", NODES.values(), ids=NODES)
def test_every_parameter_is_described_typed_and_ranged(ros, kind) -> None:
    peer = Peer(ros, kind(parameter_overrides=[Parameter("autostart", value=False)]))
    try:
        names = [spec.name for spec in peer.node.table]
        assert {"robot_description", "frame_prefix", "locked_joints", "diagnostic_period",
                "autostart"} <= set(names)
        answer = call(peer, DescribeParameters, f"/{peer.node.get_name()}/describe_parameters",
                      DescribeParameters.Request(names=names))
        assert len(answer.descriptors) == len(names)
        for spec, descriptor in zip(peer.node.table, answer.descriptors, strict=True):
            assert descriptor.name == spec.name and len(descriptor.description) > 20, spec.name
            assert descriptor.type != ParameterType.PARAMETER_NOT_SET, spec.name
            if descriptor.type in NUMBERS:
                assert descriptor.floating_point_range or descriptor.integer_range, spec.name
            if spec.choices:
                assert all(c in descriptor.additional_constraints for c in spec.choices)
        read_only = {d.name for d in answer.descriptors if d.read_only}
        assert "autostart" in read_only

        refused = call(peer, SetParameters, f"/{peer.node.get_name()}/set_parameters",
                       SetParameters.Request(parameters=[
                           Parameter("autostart", value=True).to_parameter_msg()]))
        assert not refused.results[0].successful
        assert "read-only" in refused.results[0].reason.lower()
    finally:
        peer.close()


def test_a_change_out_of_range_or_choices_is_refused_with_the_reason(ros) -> None:
    peer = dynamics_peer(ros)
    try:
        for parameter, reason in (
            (Parameter("diagnostic_period", value=-1.0), "out of range"),
            (Parameter("singular_threshold", value=float("nan")), "out of range"),
            (Parameter("mass_matrix_method", value="gauss"), "'gauss' is not one of crba"),
            (Parameter("quantities", value=["mass_matrix", "jerk"]), "'jerk' is not one of"),
            (Parameter("joint_states_max_age", value=0.0), "out of range"),
            (Parameter("locked_joints", value="panda_joint1"), "locked_joints"),
        ):
            result = peer.node.set_parameters([parameter])[0]
            assert not result.successful and reason in result.reason, (parameter.name, result)
    finally:
        peer.close()


def test_diagnostic_period_is_applied(ros) -> None:
    peer = dynamics_peer(ros)
    try:
        assert wait_for(lambda: len(peer.statuses) >= 2)
        assert peer.node.set_parameters([Parameter("diagnostic_period", value=0.05)])[0] \
            .successful
        time.sleep(0.2)
        since = len(peer.statuses)
        time.sleep(1.0)
        assert len(peer.statuses) - since >= 10  # 20 Hz now; 5 Hz before
    finally:
        peer.close()


def test_sim_settings_changed_at_run_time_are_applied_and_time_goes_on(ros) -> None:
    node = SimNode(parameter_overrides=[Parameter("robot_description", value=PANDA),
                                        Parameter("real_time_factor", value=0.0)])
    peer = Peer(ros, node)
    try:
        assert wait_for(lambda: node.sim is not None and node.sim.time > 0.1)
        before = node.sim
        assert node.set_parameters([Parameter("dt", value=0.002),
                                    Parameter("integrator", value="semi_implicit_euler")])[0] \
            .successful
        assert wait_for(lambda: node.sim is not before and node.sim.time > before.time)
        assert node.sim.dt == 0.002 and node.sim.integrator == "semi_implicit_euler"
        assert node.sim.time >= before.time  # resumed, not restarted
        refused = node.set_parameters([Parameter("integrator", value="leapfrog")])[0]
        assert not refused.successful and "leapfrog" in refused.reason
        refused = node.set_parameters([Parameter("initial_positions", value=[0.0] * 7)])[0]
        assert not refused.successful and "read-only" in refused.reason.lower()
    finally:
        peer.close()


def test_a_controller_change_configures_a_new_controller(ros) -> None:
    """A change of the plugin's parameters configures a new controller with them; one the
    plugin refuses, or a plugin the parameters do not fit, is refused with its reason."""
    node = ControllerNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA),
        Parameter("controller", value="operational_space"),
        Parameter("controller_parameters.frame", value="panda_hand_tcp"),
        Parameter("controller_parameters.kp", value=50.0)])
    peer = Peer(ros, node)
    try:
        before = node.controller
        assert node.set_parameters([Parameter("controller_parameters.kp", value=80.0)])[0] \
            .successful
        assert node.controller is not before and np.allclose(node.controller.kp, 80.0)
        refused = node.set_parameters([Parameter("controller_parameters.frame", value="hand")])[0]
        assert not refused.successful and "hand" in refused.reason
        refused = node.set_parameters([Parameter("controller", value="joint_impedance")])[0]
        assert not refused.successful and "JointImpedance" in refused.reason
        refused = node.set_parameters([Parameter("controller", value="pid")])[0]
        assert not refused.successful and "unknown controller 'pid'" in refused.reason
        assert type(node.controller).__name__ == "OperationalSpace"
        assert np.allclose(node.controller.kp, 80.0)
    finally:
        peer.close()


@pytest.mark.parametrize("kind", NODES.values(), ids=NODES)
def test_an_unknown_parameter_is_an_error_at_start_listing_the_valid_names(ros, kind) -> None:
    with pytest.raises(ParameterError) as error:
        kind(parameter_overrides=[Parameter("robot_descripton", value=PANDA)])
    message = str(error.value)
    assert "unknown parameter(s) robot_descripton" in message
    assert "robot_description" in message and "frame_prefix" in message


@pytest.mark.parametrize("executable", ["controller_node", "dynamics_node"])
def test_a_params_file_with_an_unknown_name_stops_the_executable(tmp_path, executable) -> None:
    """The executable exits with status 1 and the error, no traceback (controller_node once
    took any name)."""
    params = tmp_path / "params.yaml"
    params.write_text(f"/**/{executable}:\n  ros__parameters:\n    controler: joint_impedance\n")
    result = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), executable), "--ros-args",
         "--params-file", str(params)],
        env=os.environ | {"ROS_LOG_DIR": str(tmp_path)}, capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "unknown parameter(s) controler" in result.stderr
    assert "Traceback" not in result.stderr
