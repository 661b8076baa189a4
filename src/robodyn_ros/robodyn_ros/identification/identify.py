"""Identification from the normal equations of a run: the robot's parameters, or a load's.

    equations = accumulate(robot, q, qd, qdd, tau, pool=pool)
    found = identify_robot(robot, equations)
    found.estimate.values, found.estimate.standard_errors  # the base parameters
    found.identified_robot()                               # physically consistent
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn_ros.identification.accumulation import Unknowns
from robodyn_ros.identification.base_parameters import base_parameters
from robodyn_ros.identification.estimation import (
    PRIOR_WEIGHT,
    BaseEstimate,
    ConsistentEstimate,
    physically_consistent,
    weighted_least_squares,
)
from robodyn_ros.identification.normal_equations import NormalEquations
from robodyn_ros.identification.payload import PayloadEstimate, payload_columns
from robodyn_ros.inertial_parameters import BODY_PARAMETER_NAMES, PARAMETERS_PER_BODY
from robodyn_ros.robot import Robot


@dataclass(frozen=True, eq=False)
class RobotIdentification:
    """A robot's parameters identified from a run.

    Attributes:
        robot: the description it started from (its π the prior).
        estimate: the base parameters by weighted least squares, with standard errors.
        consistent: a physically consistent π (every body a rigid body).
    """

    robot: Robot
    estimate: BaseEstimate
    consistent: ConsistentEstimate

    @property
    def parameters(self) -> np.ndarray:
        """The identified π, physically consistent (p,)."""
        return self.consistent.parameters

    def identified_robot(self) -> Robot:
        """The description with the identified bodies, armature and friction (the offsets are
        the torque sensors', not the robot's: they stay in `parameters`)."""
        return self.robot.with_inertial_parameters(self.parameters)


def identify_robot(
    robot: Robot, equations: NormalEquations, prior_weight: float = PRIOR_WEIGHT
) -> RobotIdentification:
    """The robot's base parameters and a physically consistent π from a run's equations
    (accumulated for π itself).

    Raises:
        IdentificationError: a run that cannot identify them (estimation.weighted_least_squares).
        ValueError: a bad prior_weight.
    """
    base = base_parameters(robot)
    estimate = weighted_least_squares(equations, base)
    consistent = physically_consistent(equations, estimate, robot.inertial_parameters(),
                                       prior_weight)
    return RobotIdentification(robot, estimate, consistent)


@dataclass(frozen=True, eq=False)
class PayloadIdentification:
    """A load identified on a frame.

    Attributes:
        estimate: its parameters by weighted least squares, with standard errors.
        consistent: the physically consistent fit of its ten parameters.
        payload: the load as Robot.with_payload takes it.
    """

    estimate: BaseEstimate
    consistent: ConsistentEstimate
    payload: PayloadEstimate


def payload_unknowns(robot: Robot, frame: str, known: np.ndarray | None = None) -> Unknowns:
    """What to accumulate for a load on `frame`: its ten parameters, the robot's own torques
    (π `known`, its inertial_parameters by default) taken off.

    Raises:
        ModelError, IdentificationError: as payload.payload_columns.
    """
    return Unknowns(payload_columns(robot.model, frame),
                    robot.inertial_parameters() if known is None else known)


def identify_payload(
    robot: Robot, frame: str, equations: NormalEquations, prior_weight: float = PRIOR_WEIGHT
) -> PayloadIdentification:
    """A load's parameters from a run's equations accumulated for payload_unknowns; the prior
    is no load.

    Raises:
        IdentificationError: a run that cannot identify them.
        ModelError: an unknown frame.
        ValueError: a bad prior_weight.
    """
    names = tuple(f"payload.{name}" for name in BODY_PARAMETER_NAMES)
    base = base_parameters(robot, columns=payload_columns(robot.model, frame), names=names)
    estimate = weighted_least_squares(equations, base)
    consistent = physically_consistent(equations, estimate, np.zeros(PARAMETERS_PER_BODY),
                                       prior_weight, bodies=1)
    return PayloadIdentification(estimate, consistent,
                                 PayloadEstimate.of(frame, consistent.parameters))
