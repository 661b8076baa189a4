"""One error root and one warning root: every exception class of the package is a RobodynError
and still the standard class it extends, every warning class a RobodynWarning, so that a caller
catches "anything this library refused" in one clause and no existing clause breaks."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import warnings

import numpy as np
import pytest

import robodyn_ros
from robodyn_ros import ModelError, RobodynError, RobodynWarning, Robot, load_urdf_string
from robodyn_ros.bag.errors import BagError
from robodyn_ros.errors import NonFiniteResultError, SingularMassMatrixError
from robodyn_ros.model.urdf import URDFWarning
from robodyn_ros.parallel.base import ParallelError

from helpers.robots import MASSLESS, PANDA

# modules that import ROS 2's launch, which only a ROS install has; they define no class
NEEDS_ROS_LAUNCH = {"robodyn_ros.ros.launch_description"}


def _package_classes() -> list[type[BaseException]]:
    """Every exception and warning class defined in a module of the package."""
    found: dict[str, type[BaseException]] = {}
    for module in pkgutil.walk_packages(robodyn_ros.__path__, "robodyn_ros."):
        if module.name in NEEDS_ROS_LAUNCH:
            continue
        for _, cls in inspect.getmembers(importlib.import_module(module.name), inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__.startswith("robodyn_ros."):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(found.values())


def test_every_error_of_the_package_has_the_one_root() -> None:
    classes = _package_classes()
    errors = [cls for cls in classes if not issubclass(cls, Warning)]
    warning_classes = [cls for cls in classes if issubclass(cls, Warning)]
    assert len(errors) >= 19 and len(warning_classes) >= 2  # the walk found the package's own
    assert [cls.__name__ for cls in errors if not issubclass(cls, RobodynError)] == []
    assert [cls.__name__ for cls in warning_classes
            if not issubclass(cls, RobodynWarning)] == []


@pytest.mark.parametrize(("error", "standard"), [
    (ModelError, ValueError),
    (SingularMassMatrixError, np.linalg.LinAlgError),
    (NonFiniteResultError, FloatingPointError),
    (BagError, ValueError),
    (ParallelError, RuntimeError),
    (URDFWarning, UserWarning),
])
def test_each_keeps_the_standard_class_it_extends(error: type, standard: type) -> None:
    assert issubclass(error, standard)


def test_a_refusal_is_caught_by_the_root_and_by_its_old_class() -> None:
    with pytest.raises(RobodynError, match=r"robot\.urdf"):
        load_urdf_string("<robot name='r'><link name='a'/>", source="robot.urdf")
    with pytest.raises(ValueError):
        load_urdf_string("<robot name='r'><link name='a'/>", source="robot.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)  # the massless joints' warning
        robot = Robot.from_urdf_string(MASSLESS)
    with pytest.raises(RobodynError, match="mass matrix is singular") as caught:
        robot.forward_dynamics(np.zeros(robot.nq), np.zeros(robot.nv), np.zeros(robot.nv))
    assert isinstance(caught.value, np.linalg.LinAlgError)
    again = pickle.loads(pickle.dumps(caught.value))  # to a caller in another process
    assert type(again) is SingularMassMatrixError and str(again) == str(caught.value)


def test_a_robot_that_loads_warns_under_the_root_only_when_it_should() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobodynWarning)
        Robot.from_urdf_string(PANDA)
    with pytest.warns(RobodynWarning, match="move no mass"):
        Robot.from_urdf_string(MASSLESS)
