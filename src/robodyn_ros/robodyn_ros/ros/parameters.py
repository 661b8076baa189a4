"""A node's parameters as one declarative table: each parameter's type (from its default),
description, range, allowed values and whether it can change at run time.

`ParameterRecord.of` reads a node's settings into a typed record, a field per parameter.
`declare` declares a table on a node with rclpy ParameterDescriptors, so that
``ros2 param describe`` shows them and rclpy itself refuses a wrong type, a value out of range
or a change of a read-only parameter, at start (a params file) as at run time. The allowed
values of a string (or of each element of a string array) are checked by `problem`, which
the node's parameter callback calls. `check_overrides` makes a parameter the node does not
declare an error at start, listing the valid names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import Field, dataclass, fields
from typing import Any, ClassVar, Self

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from robodyn_ros.errors import RobodynError
from robodyn_ros.ros.guard import RefusedError

# Parameters rclpy declares itself, or on creating a subscription with QoS overrides
RCLPY_PARAMETERS = ("use_sim_time", "start_type_description_service")
RCLPY_PREFIXES = ("qos_overrides.",)


class ParameterError(RobodynError, ValueError):
    """A node's parameters cannot start it (an undeclared name, a value out of its range)."""


@dataclass(frozen=True)
class ParameterSpec:
    """One row of a node's parameter table.

    default: the value, or a Parameter.Type for a parameter without one (an empty string
        array: rclpy cannot type an empty list).
    bounds: inclusive (low, high) for a number.
    choices: the allowed values of a string, or of each element of a string array.
    read_only: the node cannot apply a change at run time (rclpy refuses it).
    """

    name: str
    default: Any
    description: str
    bounds: tuple[float, float] | None = None
    choices: tuple[str, ...] = ()
    read_only: bool = False

    def descriptor(self) -> ParameterDescriptor:
        """The rclpy descriptor of this row."""
        descriptor = ParameterDescriptor(name=self.name, description=self.description,
                                         read_only=self.read_only)
        if self.choices:
            descriptor.additional_constraints = f"one of: {', '.join(self.choices)}"
        if self.bounds is not None:
            low, high = self.bounds
            if isinstance(self.default, int) and not isinstance(self.default, bool):
                descriptor.integer_range = [IntegerRange(from_value=low, to_value=high, step=0)]
            else:
                descriptor.floating_point_range = [
                    FloatingPointRange(from_value=float(low), to_value=float(high), step=0.0)
                ]
        return descriptor

    def problem(self, value: Any) -> str:
        """Why `value` is not one of the choices ("" when it is, or there are none)."""
        if not self.choices or value is None:
            return ""
        values = [value] if isinstance(value, str) else list(value)
        wrong = [v for v in values if v not in self.choices]
        if not wrong:
            return ""
        return (f"parameter '{self.name}': {', '.join(map(repr, wrong))} is not one of "
                f"{', '.join(self.choices)}")



class ParameterRecord:
    """A node's settings as a frozen dataclass whose fields are named as its parameters (the
    subclass, decorated with @dataclass(frozen=True))."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @classmethod
    def of(cls, value: Callable[[str], Any]) -> Self:
        """The settings of the parameters, each read by `value` (a parameter's name → its
        value, None for one never set); an array (or None) becomes a tuple."""
        read = {}
        for field in fields(cls):
            field_value = value(field.name)
            if not isinstance(field_value, str | int | float):  # an array, or None
                field_value = tuple(field_value if field_value is not None else ())
            read[field.name] = field_value
        return cls(**read)

def declare(node: Node, table: Sequence[ParameterSpec]) -> None:
    """Declare every row of `table` on `node`, with its descriptor.

    Raises:
        ParameterError: a value given at start (params file, command line) of the wrong type,
            out of range or not one of the choices; naming the node and the parameter.
    """
    for spec in table:
        try:
            node.declare_parameter(spec.name, spec.default, spec.descriptor())
        except Exception as error:  # rclpy's InvalidParameter*Exception family
            raise ParameterError(f"{node.get_name()}: parameter '{spec.name}': {error}") from None
        reason = spec.problem(value(node, spec.name))
        if reason:
            raise ParameterError(f"{node.get_name()}: {reason}")


def declare_prefixed(node: Node, prefixes: Sequence[str]) -> None:
    """Declare the parameters given to the node whose names start with one of `prefixes` (a
    plugin's, checked by the plugin), typed by the value given."""
    for name, parameter in node._parameter_overrides.items():
        if prefixes and name.startswith(tuple(prefixes)) and not node.has_parameter(name):
            node.declare_parameter(name, parameter.value, ParameterDescriptor(
                name=name, description="a parameter of the node's plugin, given at start"))


def check_overrides(node: Node, table: Iterable[ParameterSpec],
                    prefixes: Sequence[str] = ()) -> None:
    """Refuse parameters given to the node (params file, command line) that it does not
    declare.

    Args:
        prefixes: name prefixes the node takes beyond its table (a plugin's parameters).

    Raises:
        ParameterError: naming the unknown parameters and listing the valid ones.
    """
    names = {spec.name for spec in table} | set(RCLPY_PARAMETERS)
    allowed = (*RCLPY_PREFIXES, *prefixes)
    unknown = sorted(name for name in node._parameter_overrides
                     if name not in names and not name.startswith(allowed))
    if unknown:
        valid = ", ".join(sorted(names) + [f"{prefix}*" for prefix in prefixes])
        raise ParameterError(
            f"{node.get_name()}: unknown parameter(s) {', '.join(unknown)}; its parameters: "
            f"{valid}"
        )


def value(node: Node, name: str) -> Any:
    """A parameter's value; None for one declared without a value and never set."""
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return None


def changes_checker(
    table: Sequence[ParameterSpec],
) -> Callable[[list[Parameter[Any]]], None]:
    """A function that raises RefusedError for a change to a value not among its row's
    choices (rclpy checks types, ranges and read-only parameters itself)."""
    rows = {spec.name: spec for spec in table}

    def check(parameters: list[Parameter[Any]]) -> None:
        for parameter in parameters:
            spec = rows.get(parameter.name)
            reason = spec.problem(parameter.value) if spec is not None else ""
            if reason:
                raise RefusedError(reason)

    return check
