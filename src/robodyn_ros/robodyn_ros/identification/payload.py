"""A load's ten inertial parameters from the joint torques of a run in which the robot holds it
(Kubus, Kröger & Wahl, "On-line estimation of inertial parameters using a recursive total
least-squares approach", IROS 2008, with joint torques in place of a wrist sensor).

The load's parameters λ, in the frame it is fixed to and about that frame's origin, enter the
body b the frame belongs to through the frame's placement X (body ← frame): its spatial inertia
is Xᵀ* I_λ X⁻¹, linear in λ, so π_b = T λ with T (10 x 10). The torques the robot's own model
does not explain are then (Y_b T) λ: a ten-parameter fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn_ros.identification.errors import IdentificationError
from robodyn_ros.model import Model
from robodyn_ros.model.inertia import inertia_about_com
from robodyn_ros.model.inertial_parameters import (
    PARAMETERS_PER_BODY,
    body_parameters,
    parameter_count,
    spatial_inertia_of,
)


@dataclass(frozen=True, eq=False)
class PayloadEstimate:
    """A load identified on a frame: what Robot.with_payload takes.

    Attributes:
        frame: the frame it is fixed to.
        mass: kg.
        com: (3,) its centre of mass in the frame, m.
        inertia: (3, 3) its rotational inertia about the centre of mass, frame axes, kg·m².
        parameters: (10,) λ: m, m c, I about the frame origin (inertial_parameters' order).
    """

    frame: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    parameters: np.ndarray

    @classmethod
    def of(cls, frame: str, parameters: np.ndarray) -> PayloadEstimate:
        """The load of parameters λ (physically consistent, mass > 0) on `frame`."""
        spatial = spatial_inertia_of(parameters)
        mass = float(parameters[0])
        return cls(frame, mass, parameters[1:4] / mass, inertia_about_com(spatial),
                   np.array(parameters))


def payload_columns(model: Model, frame: str) -> np.ndarray:
    """A (p, 10) with Y A the regressor of a load's parameters λ on `frame` (p = len(π)).

    Raises:
        ModelError: an unknown frame (the message lists the frames).
        IdentificationError: a frame on the fixed base, where a load moves no joint.
    """
    index = model.frame_index(frame)
    body = int(model.frame_body[index])
    if body < 0:
        raise IdentificationError(
            f"payload frame '{frame}' is on the fixed base of robot '{model.name}': a load "
            "there moves with no joint, so no joint torque tells anything about it")
    X = model.frame_placement[index]
    motion = _motion_transform(X)  # body coordinates → frame coordinates, for motions
    transform = np.column_stack([
        body_parameters(motion.T @ spatial_inertia_of(unit) @ motion)
        for unit in np.eye(PARAMETERS_PER_BODY)
    ])
    columns = np.zeros((parameter_count(model), PARAMETERS_PER_BODY))
    columns[PARAMETERS_PER_BODY * body : PARAMETERS_PER_BODY * (body + 1)] = transform
    return columns


def _motion_transform(X: np.ndarray) -> np.ndarray:
    """The 6x6 [linear; angular] transform taking a motion in the body's coordinates to the
    frame's, for the frame at pose X = (R, p) in the body: ω_f = Rᵀ ω, v_f = Rᵀ (v + ω × p)."""
    R, p = X[:3, :3], X[:3, 3]
    skew_p = np.array([[0.0, -p[2], p[1]], [p[2], 0.0, -p[0]], [-p[1], p[0], 0.0]])
    transform = np.zeros((6, 6))
    transform[:3, :3] = R.T
    transform[:3, 3:] = -R.T @ skew_p
    transform[3:, 3:] = R.T
    return transform
