"""A robot's dynamic parameters π as one vector, the one the regressor multiplies: τ = Y π.

The layout dynamics.regressor computes Y in: ten inertial parameters per body of the tree, in joint
order, in the body's (joint) frame about its origin (BODY_PARAMETER_NAMES), then four per joint
of the tree (JOINT_PARAMETER_NAMES). A body is the child link of its joint with every link
fixed to it (and any payload on them): its parameters are what the dynamics can tell apart.

Armature, viscous and Coulomb friction are the Model's armature, damping and friction (the
URDF's ``<dynamics damping friction>``); the offset is a bias of the torque measurement, not a
property of the robot, so a Model holds none and reads as zero.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.model.inertia import (
    MASS_BOUNDS,
    MAX_INERTIA,
    impossible_inertia,
    inertia_about_com,
    principal_moments,
)
from robodyn_ros.model.model import Model, ModelError

PARAMETERS_PER_BODY = 10
PARAMETERS_PER_JOINT = 4
# the columns of a joint's parameters, after those of every body
ARMATURE, VISCOUS, COULOMB, OFFSET = range(PARAMETERS_PER_JOINT)

BODY_PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
"""A body's parameters: mass (kg), first moment m·c (kg·m) and rotational inertia about the
body origin (kg·m²), all in the body's frame."""

JOINT_PARAMETER_NAMES = ("armature", "viscous", "coulomb", "offset")
"""A joint's parameters: armature (kg·m² or kg), viscous friction (N·m·s/rad or N·s/m),
Coulomb friction and offset (N·m or N)."""

__all__ = [
    "ARMATURE",
    "BODY_PARAMETER_NAMES",
    "COULOMB",
    "JOINT_PARAMETER_NAMES",
    "OFFSET",
    "PARAMETERS_PER_BODY",
    "PARAMETERS_PER_JOINT",
    "VISCOUS",
    "body_parameters",
    "model_with_parameters",
    "parameter_count",
    "parameter_count_of",
    "parameter_names",
    "parameters_of",
    "spatial_inertia_of",
]


def parameter_count(model: Model) -> int:
    """The length of π for a model."""
    return parameter_count_of(model.nv)


def parameter_count_of(joints: int) -> int:
    """The length of π for a tree of `joints` joints (and as many bodies)."""
    return (PARAMETERS_PER_BODY + PARAMETERS_PER_JOINT) * joints


def parameter_names(model: Model) -> tuple[str, ...]:
    """Each entry of π named "<link>.<parameter>" for a body (its joint's child link) and
    "<joint>.<parameter>" for a joint."""
    return (
        *(f"{link}.{name}" for link in model.body_links for name in BODY_PARAMETER_NAMES),
        *(f"{joint}.{name}" for joint in model.joint_names for name in JOINT_PARAMETER_NAMES),
    )


def body_parameters(spatial_inertia: np.ndarray) -> np.ndarray:
    """(..., 6, 6) spatial inertias about a frame origin → (..., 10) their parameters."""
    h = np.stack([spatial_inertia[..., 5, 1], spatial_inertia[..., 3, 2],
                  spatial_inertia[..., 4, 0]], axis=-1)  # the [h]× block is [3:, :3]
    inertia = spatial_inertia[..., 3:, 3:]
    return np.concatenate([
        spatial_inertia[..., 0, 0, None], h,
        np.stack([inertia[..., 0, 0], inertia[..., 0, 1], inertia[..., 1, 1],
                  inertia[..., 0, 2], inertia[..., 1, 2], inertia[..., 2, 2]], axis=-1),
    ], axis=-1)


def spatial_inertia_of(parameters: np.ndarray) -> np.ndarray:
    """(..., 10) body parameters → (..., 6, 6) spatial inertias [[m 1, −[h]×], [[h]×, I_O]]."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = np.moveaxis(parameters, -1, 0)
    zero = np.zeros_like(m)
    skew_h = np.stack([np.stack([zero, -hz, hy], -1), np.stack([hz, zero, -hx], -1),
                       np.stack([-hy, hx, zero], -1)], -2)
    inertia = np.stack([np.stack([ixx, ixy, ixz], -1), np.stack([ixy, iyy, iyz], -1),
                        np.stack([ixz, iyz, izz], -1)], -2)
    mass = m[..., None, None] * np.eye(3)
    return np.concatenate([np.concatenate([mass, -skew_h], -1),
                           np.concatenate([skew_h, inertia], -1)], -2)


def parameters_of(model: Model) -> np.ndarray:
    """π of a model: its bodies' inertias, then its joints' armature, damping and friction
    (offsets zero)."""
    joints = np.zeros((model.nv, PARAMETERS_PER_JOINT))
    joints[:, ARMATURE] = model.armature
    joints[:, VISCOUS] = model.damping
    joints[:, COULOMB] = model.friction
    return np.concatenate([body_parameters(model.spatial_inertia).ravel(), joints.ravel()])


def model_with_parameters(model: Model, parameters: ArrayLike) -> Model:
    """The model with the bodies, armature and friction of π; the offsets are left out (a
    Model holds none), and so are the payloads, which π's bodies already include.

    Raises:
        ModelError: π is not parameter_count(model) finite numbers; a body that no rigid
            body can be (a negative or out-of-range mass, an inertia about its centre of
            mass that is not positive semi-definite or breaks the triangle inequality), or a
            negative armature or friction: the message names the link or joint.
    """
    count = parameter_count(model)
    try:
        values = np.array(parameters, dtype=float)
    except (TypeError, ValueError):
        values = np.full(count, np.nan)
    if values.shape != (count,) or not np.isfinite(values).all():
        raise ModelError(
            f"robot '{model.name}': parameters must be {count} finite numbers (10 per body, "
            f"4 per joint: inertial_parameters' layout); got shape {values.shape}"
        )
    split = PARAMETERS_PER_BODY * model.nv
    bodies = values[:split].reshape(model.nv, PARAMETERS_PER_BODY)
    joints = values[split:].reshape(model.nv, PARAMETERS_PER_JOINT)
    for link, body in zip(model.body_links, bodies, strict=True):
        _check_body(body, f"robot '{model.name}': body of link '{link}'")
    for name, joint in zip(model.joint_names, joints, strict=True):
        negative = [JOINT_PARAMETER_NAMES[k] for k in (ARMATURE, VISCOUS, COULOMB) if joint[k] < 0]
        if negative:
            raise ModelError(f"robot '{model.name}': joint '{name}': {', '.join(negative)} must "
                             f"be ≥ 0; got {joint[[ARMATURE, VISCOUS, COULOMB]].tolist()}")
    return dataclasses.replace(
        model, spatial_inertia=spatial_inertia_of(bodies), armature=joints[:, ARMATURE],
        damping=joints[:, VISCOUS], friction=joints[:, COULOMB], payloads=(),
    )


def _check_body(body: np.ndarray, subject: str) -> None:
    """ModelError unless a rigid body can have these ten parameters."""
    mass = body[0]
    smallest, largest = MASS_BOUNDS
    if mass != 0.0 and not smallest <= mass <= largest:
        raise ModelError(f"{subject}: mass must be 0 or in [{smallest:g}, {largest:g}] kg; "
                         f"got {mass:g}")
    if np.abs(body[4:]).max() > MAX_INERTIA:
        raise ModelError(f"{subject}: an inertia entry above {MAX_INERTIA:g} kg·m² is outside "
                         "any robot (check the units)")
    spatial = spatial_inertia_of(body)
    if mass == 0.0 and np.any(body[1:4] != 0.0):
        raise ModelError(f"{subject}: a massless body has no first moment m·c; got "
                         f"{body[1:4].tolist()}")
    impossible = impossible_inertia(principal_moments(inertia_about_com(spatial)))
    if impossible:
        raise ModelError(f"{subject}: its inertia about the centre of mass {impossible}")
