"""Loads a robot carries at run time (a grasped part, a tool): each a Payload (model.py), one
rigid body per frame, checked and added to the inertia of the body that frame is fixed to."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from robodyn_ros.model.inertia import (
    MASS_BOUNDS,
    MAX_INERTIA,
    MAX_LENGTH,
    homogeneous,
    impossible_inertia,
    placed_spatial_inertia,
    principal_moments,
)
from robodyn_ros.model.model import Model, ModelError, Payload

_SYMMETRY_RTOL = 1e-9


def checked_payload(
    model: Model,
    frame: str,
    mass: float,
    com: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
    inertia: Sequence[Sequence[float]] | np.ndarray | None = None,
) -> Payload | None:
    """A payload on a frame of `model`, checked as a URDF link's inertial is.

    Args:
        model: the robot that carries it.
        frame: a frame of the model.
        mass: kg, ≥ 0; 0 stands for no payload (com is then ignored and inertia must be
            None or zero).
        com: the centre of mass in the frame, m.
        inertia: the 3x3 rotational inertia about the centre of mass in the frame's axes,
            kg·m²; None for a point mass.

    Returns:
        The Payload, or None for mass 0.

    Raises:
        ModelError: an unknown frame (the message lists the frames); a mass, centre of mass
            or inertia that is not finite, negative, past any robot's magnitude (as in a URDF),
            not symmetric, or that no rigid body can have.
    """
    subject = f"payload on frame '{frame}' of robot '{model.name}'"
    if frame not in model.frame_names:
        raise ModelError(f"{subject}: unknown frame; frames are: {', '.join(model.frame_names)}")
    mass = _checked_number(mass, "mass", subject)
    inertia = np.zeros((3, 3)) if inertia is None else _checked_array(
        inertia, (3, 3), "inertia", subject
    )
    if mass == 0.0:
        if inertia.any():
            raise ModelError(f"{subject}: mass 0 removes the payload, but an inertia was given")
        return None
    smallest, largest = MASS_BOUNDS
    if not smallest <= mass <= largest:
        raise ModelError(f"{subject}: mass must be 0 (none) or in [{smallest:g}, {largest:g}] "
                         f"kg; got {mass:g}")
    com = _checked_array(com, (3,), "com", subject)
    if np.abs(com).max() > MAX_LENGTH:
        raise ModelError(f"{subject}: com {com.tolist()} m is outside any robot "
                         f"(at most {MAX_LENGTH:g} m)")
    if np.abs(inertia).max() > MAX_INERTIA:
        raise ModelError(f"{subject}: an inertia entry above {MAX_INERTIA:g} kg·m² is outside "
                         "any robot (check the units)")
    if not np.allclose(inertia, inertia.T, rtol=0.0,
                       atol=_SYMMETRY_RTOL * max(np.abs(inertia).max(), 1e-300)):
        raise ModelError(f"{subject}: inertia must be symmetric; got {inertia.tolist()}")
    impossible = impossible_inertia(principal_moments(inertia))
    if impossible:
        raise ModelError(f"{subject}: inertia {impossible}")
    for array in (com, inertia):
        array.flags.writeable = False
    return Payload(frame, mass, com, inertia)


def with_payload(model: Model, frame: str, payload: Payload | None) -> Model:
    """`model` with `payload` on `frame` in place of the one it had there (None: no payload).

    The load is added to the spatial inertia of the body the frame is fixed to; a frame on
    the fixed base moves with no joint, so the dynamics do not change, though the model
    still records the payload.

    Args:
        model: the robot.
        frame: the frame, known to the model.
        payload: from checked_payload on that frame, or None to remove it.

    Returns:
        A new Model.
    """
    bodies = np.array(model.spatial_inertia)
    k = model.frame_index(frame)
    body, placement = model.frame_body[k], model.frame_placement[k]
    kept = tuple(p for p in model.payloads if p.frame != frame)
    if body >= 0:
        for removed in (p for p in model.payloads if p.frame == frame):
            bodies[body] -= _spatial_inertia(removed, placement)
        if payload is not None:
            bodies[body] += _spatial_inertia(payload, placement)
    payloads = kept if payload is None else (*kept, payload)
    return dataclasses.replace(model, spatial_inertia=bodies, payloads=payloads)


def _spatial_inertia(payload: Payload, placement: np.ndarray) -> np.ndarray:
    """The payload's 6x6 inertia about its body's origin, for a frame at `placement` in it."""
    com_pose = homogeneous(np.eye(3), payload.com)
    return placed_spatial_inertia(payload.mass, com_pose, payload.inertia, placement)


def _checked_number(value: float, name: str, subject: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = np.nan
    if not np.isfinite(number) or number < 0.0:
        raise ModelError(f"{subject}: {name} must be a finite number ≥ 0; got {value!r}")
    return number


def _checked_array(value: object, shape: tuple[int, ...], name: str, subject: str) -> np.ndarray:
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        array = np.full(shape, np.nan)
    if array.shape != shape or not np.isfinite(array).all():
        raise ModelError(f"{subject}: {name} must be {' x '.join(map(str, shape))} finite "
                         f"numbers; got {value!r}")
    return array
