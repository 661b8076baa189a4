"""Typed settings (parameters.ParameterRecord): each field reads the parameter of its name, an
array (rclpy gives a list or an array.array) or a parameter never set (None) as a tuple, a
scalar as it is; and every field of a node's record is a parameter the node declares, so that
a misnamed field fails here rather than when the node reads it."""

from __future__ import annotations

import array
from dataclasses import dataclass, fields

import pytest

from robodyn_ros.ros.controller_node import ControllerNode, ControllerSettings
from robodyn_ros.ros.parameters import ParameterRecord
from robodyn_ros.ros.robot_node import COMMON_PARAMETERS
from robodyn_ros.ros.sim_node import SimNode, SimSettings


@dataclass(frozen=True)
class _Example(ParameterRecord):
    name: str
    rate: float
    count: int
    enabled: bool
    joints: tuple[str, ...]
    gains: tuple[float, ...]
    unset: tuple[float, ...]


def test_each_field_reads_its_parameter_and_arrays_become_tuples() -> None:
    values = {"name": "arm", "rate": 2.5, "count": 3, "enabled": False,
              "joints": ["a", "b"], "gains": array.array("d", [1.0, 2.0]), "unset": None}
    asked: list[str] = []

    def value(name: str) -> object:
        asked.append(name)
        return values[name]

    record = _Example.of(value)
    assert asked == [field.name for field in fields(_Example)]
    assert record == _Example("arm", 2.5, 3, False, ("a", "b"), (1.0, 2.0), ())


@pytest.mark.parametrize(("record", "node"), [(SimSettings, SimNode),
                                              (ControllerSettings, ControllerNode)],
                         ids=["sim_node", "controller_node"])
def test_every_field_of_a_node_record_is_one_of_its_parameters(record, node) -> None:
    declared = {spec.name for spec in (*COMMON_PARAMETERS, *node.PARAMETERS)}
    assert {field.name for field in fields(record)} <= declared
