"""The controller plugin interface: `Controller`, `ControllerState` and `load_controller`.

A controller maps the robot's state to joint efforts, once per control cycle::

    controller = load_controller("joint_impedance")()
    controller.configure(robot, {"stiffness": 100.0, "damping": 10.0})
    controller.set_target(q_star)
    tau = controller.update(ControllerState(t, q, qd))

`ControllerState` may carry dynamics a node already has (M, b = C q̇ + g, g, and the
operational-space dynamics of the frames in the controller's `task_frames`, for instance from
the dynamics node's ``compute_dynamics`` service); a controller computes whatever is missing
with the robot. Controllers are found by name: the built-ins below, merged with the Python
entry points of group ``robodyn_ros.controllers`` (a built-in name wins over an entry point of
the same name). Nothing here imports ROS.
"""

from __future__ import annotations

import abc
import importlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoints, entry_points
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot
    from robodyn_ros.robot.operational_space import OperationalSpaceDynamics

ENTRY_POINT_GROUP = "robodyn_ros.controllers"

# name → "module:Class", imported on first use
BUILTIN_CONTROLLERS: Mapping[str, str] = {
    "computed_torque": "robodyn_ros.control.computed_torque:ComputedTorque",
    "gravity_compensation": "robodyn_ros.control.gravity_compensation:GravityCompensation",
    "joint_impedance": "robodyn_ros.control.joint_impedance:JointImpedance",
    "operational_space": "robodyn_ros.control.operational_space_controller:OperationalSpace",
    "whole_body": "robodyn_ros.control.whole_body:WholeBody",
}


@dataclass(frozen=True, eq=False)
class ControllerState:
    """One sample of the robot's state, with optional precomputed dynamics.

    t: time in s; q (nq,), qd (n,): the configuration and velocity, qd in ``robot.joint_names``
    order (q = qd's positions but for a floating base's, ``Robot.nq``).
    M (n, n), bias = C(q, q̇) q̇ + g(q) (n,), gravity = g(q) (n,): optional, computed by the
    controller with the robot when None. Arrays are converted to float64 and checked (shape,
    finite values); an error names the field. operational_space: frame name → the
    OperationalSpaceDynamics of that one frame, for frames the controller asks for.
    wrenches: frame name → the wrench [force; torque] (N, N·m) the environment exerts on the
    robot, measured about that frame's origin in world axes (a force/torque sensor there; the
    simulator's contacts); empty: none measured.
    """

    t: float
    q: np.ndarray
    qd: np.ndarray
    M: np.ndarray | None = field(default=None)
    bias: np.ndarray | None = field(default=None)
    gravity: np.ndarray | None = field(default=None)
    operational_space: Mapping[str, OperationalSpaceDynamics] = field(default_factory=dict)
    wrenches: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        q = _finite_array(self.q, "q")
        if q.ndim != 1:
            raise ValueError(f"ControllerState: q must be one state of shape (nq,); got {q.shape}")
        if self.qd is None:
            raise ValueError("ControllerState: qd is required")
        qd = _finite_array(self.qd, "qd")
        if qd.ndim != 1 or qd.shape[0] > q.shape[0]:
            raise ValueError(f"ControllerState: qd must have shape (n,), n ≤ len(q) = "
                             f"{q.shape[0]}; got {qd.shape}")
        n = qd.shape[0]
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "t", float(self.t))
        expected = {"qd": (n,), "M": (n, n), "bias": (n,), "gravity": (n,)}
        for name, shape in expected.items():
            value = getattr(self, name)
            if value is None:
                if name == "qd":
                    raise ValueError("ControllerState: qd is required")
                continue
            array = _finite_array(value, name)
            if array.shape != shape:
                raise ValueError(
                    f"ControllerState: {name} must have shape {shape} (n = len(qd)); "
                    f"got {array.shape}"
                )
            object.__setattr__(self, name, array)
        wrenches = {}
        for frame, wrench in self.wrenches.items():
            array = _finite_array(wrench, f"wrenches[{frame!r}]")
            if array.shape != (6,):
                raise ValueError(f"ControllerState: wrenches[{frame!r}] must be six numbers "
                                 f"[force; torque]; got shape {array.shape}")
            wrenches[frame] = array
        object.__setattr__(self, "wrenches", wrenches)


class Controller(abc.ABC):
    """A joint-effort controller. Subclasses set `PARAMETERS` (the names of the parameters
    they take, each described in their docstring), implement `_configure` (validate and store
    parameters) and `update`, and `set_target` if they track a target. `configure` may be
    called again to change parameters; it resets the targets."""

    name: ClassVar[str] = ""
    PARAMETERS: ClassVar[tuple[str, ...]] = ()
    TAKES_FLOATING_BASE: ClassVar[bool] = False  # a controller of a floating-base robot

    def __init__(self) -> None:
        self._robot: Robot | None = None

    @property
    def robot(self) -> Robot:
        if self._robot is None:
            raise RuntimeError(f"{type(self).__name__}: call configure(robot, parameters) first")
        return self._robot

    def configure(self, robot: Robot, parameters: Mapping[str, object] | None = None) -> None:
        """Bind the controller to a robot and set its parameters; a bad parameter raises
        ValueError naming it (an unknown name too, listing the known ones)."""
        parameters = dict(parameters or {})
        unknown = sorted(set(parameters) - set(self.PARAMETERS))
        if unknown:
            known = ", ".join(self.PARAMETERS) or "none"
            raise ValueError(
                f"{type(self).__name__}: unknown parameter(s) {', '.join(unknown)}; "
                f"known parameters: {known}"
            )
        self._configure(robot, parameters)
        self._robot = robot

    @abc.abstractmethod
    def _configure(self, robot: Robot, parameters: dict[str, object]) -> None:
        """Validate and store the parameters (raise ValueError naming a bad one)."""

    @abc.abstractmethod
    def update(self, state: ControllerState) -> np.ndarray:
        """Joint efforts (n,) for this state."""

    @property
    def task_frames(self) -> tuple[str, ...]:
        """Frames whose operational-space dynamics `update` uses; a node that has them puts
        them in ControllerState.operational_space."""
        return ()

    # (*Any, **Any): each controller takes a target of its own, and mypy lets any signature
    # override this one
    def set_target(self, *args: Any, **kwargs: Any) -> None:
        """Set the controller's target; controllers without a target refuse."""
        raise TypeError(f"{type(self).__name__} has no target to set")

    # -- helpers for subclasses -------------------------------------------------------------

    def _check_state(self, state: ControllerState) -> None:
        robot = self.robot
        if state.q.shape != (robot.nq,) or state.qd.shape != (robot.nv,):
            raise ValueError(
                f"{type(self).__name__}: the state has {state.q.shape[0]} positions and "
                f"{state.qd.shape[0]} velocities; the robot has {robot.nq} and {robot.nv} "
                f"(joints {', '.join(robot.joint_names)})"
            )

    def _gravity(self, state: ControllerState) -> np.ndarray:
        return state.gravity if state.gravity is not None else self.robot.gravity_torques(state.q)

    def _bias(self, state: ControllerState) -> np.ndarray:
        if state.bias is not None:
            return state.bias
        return self.robot.bias_forces(state.q, state.qd)

    def _mass_matrix(self, state: ControllerState) -> np.ndarray:
        return state.M if state.M is not None else self.robot.mass_matrix(state.q)


# -- parameter checks (each error names the parameter) ----------------------------------------


def joint_vector(
    parameters: Mapping[str, object],
    name: str,
    n: int,
    default: ArrayLike | None = None,
    *,
    nonnegative: bool = False,
) -> np.ndarray | None:
    """A scalar (broadcast to n joints) or n finite numbers; `default` when absent."""
    value = parameters.get(name, default)
    if value is None:
        return None
    return _vector(value, name, n, nonnegative=nonnegative, broadcast=True)


def task_vector(
    parameters: Mapping[str, object], name: str, default: ArrayLike, *, nonnegative: bool = True
) -> np.ndarray:
    """A scalar (all six task directions) or six numbers [linear x, y, z; angular x, y, z]."""
    return _vector(parameters.get(name, default), name, 6, nonnegative=nonnegative, broadcast=True)


def positive_float(parameters: Mapping[str, object], name: str, default: float) -> float:
    value = parameters.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"parameter '{name}' must be a number; got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"parameter '{name}' must be a finite number > 0; got {value}")
    return value


def nonnegative_float(parameters: Mapping[str, object], name: str, default: float) -> float:
    """One finite number ≥ 0, or a ValueError naming the parameter."""
    return float(_vector(parameters.get(name, default), name, 1, nonnegative=True,
                         broadcast=True)[0])


def boolean(parameters: Mapping[str, object], name: str, default: bool) -> bool:
    value = parameters.get(name, default)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"parameter '{name}' must be true or false; got {value!r}")
    return bool(value)


def _vector(value: object, name: str, n: int, *, nonnegative: bool, broadcast: bool) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"parameter '{name}' must be numbers; got {value!r}") from None
    if array.ndim == 0 and broadcast:
        array = np.full(n, float(array))
    if array.shape != (n,):
        raise ValueError(
            f"parameter '{name}' must be one number or {n} numbers; got shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"parameter '{name}' must be finite; got {array.tolist()}")
    if nonnegative and np.any(array < 0):
        raise ValueError(f"parameter '{name}' must be >= 0; got {array.tolist()}")
    return array


def _finite_array(value: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"ControllerState: {name} must be numbers; got {array.dtype} values")
    array = np.ascontiguousarray(array, dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"ControllerState: {name} has non-finite values")
    return array


# -- discovery --------------------------------------------------------------------------------


def available_controllers() -> list[str]:
    """Names `load_controller` accepts: the built-ins and the installed entry points."""
    return sorted({*BUILTIN_CONTROLLERS, *(ep.name for ep in _entry_points())})


def load_controller(name: str) -> type[Controller]:
    """The Controller class registered under `name` (a built-in or an entry point of group
    ``robodyn_ros.controllers``); an unknown name raises ValueError listing the known ones."""
    target = BUILTIN_CONTROLLERS.get(name)
    if target is not None:
        module, _, attribute = target.partition(":")
        cls = getattr(importlib.import_module(module), attribute)
    else:
        matches = [ep for ep in _entry_points() if ep.name == name]
        if not matches:
            raise ValueError(
                f"unknown controller '{name}'; available: {', '.join(available_controllers())}"
            )
        cls = matches[0].load()
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise TypeError(f"controller '{name}' ({cls!r}) is not a Controller subclass")
    return cls


def _entry_points() -> EntryPoints:
    return entry_points(group=ENTRY_POINT_GROUP)

