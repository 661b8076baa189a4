"""One time step of a robot in a world, its contacts unilateral with Coulomb friction.

The step is velocity-level and semi-implicit (the time stepping of Stewart & Trinkle 1996,
as MuJoCo and Pinocchio's contact solvers take it):

    v⁺ = v + dt M⁻¹(τ − b) + M⁻¹ Jᵀ λ,    q⁺ = q ⊕ v⁺ dt,

λ the contact impulses of solver.solve_contact_impulses on G = J M⁻¹ Jᵀ, J the linear
Jacobians of the contact points in their contact frames. The contacts are detection's:
candidate points of the collision shapes closer to a plane than `margin`, at most five of a
shape on a plane. Its normal velocity
after the step must close at most its gap (u_n ≥ −h/dt), and a point inside the plane is
pushed out at a fraction `baumgarte` of its depth per step (u_n ≥ −baumgarte h/dt): a resting
body neither sinks nor bounces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn_ros.contact.detection import Candidates, find_contacts, shape_set
from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.contact.solver import ROWS, solve_contact_impulses
from robodyn_ros.contact.world import World
from robodyn_ros.robot import Robot


class ContactError(RuntimeError):
    """The contact solver did not converge: the message names the contacts."""


@dataclass(frozen=True)
class ContactSettings:
    """How contacts are found and solved.

    Attributes:
        margin: m; a candidate point closer to a plane than this is a contact.
        baumgarte: the fraction of a penetration removed per step, in (0, 1].
        tolerance: m/s, the change of the contact velocities in a sweep at which the solver
            stops (solver.solve_contact_impulses).
        max_iterations: the solver's sweeps allowed.
        relaxation: how far a sweep moves each impulse to its new value, in (0, 1]
            (solver.solve_contact_impulses).
    """

    margin: float = 1e-3
    baumgarte: float = 0.2
    tolerance: float = 1e-6
    max_iterations: int = 2000
    relaxation: float = 0.8


@dataclass(frozen=True, eq=False)
class ContactForce:
    """The force of one contact over a step.

    Attributes:
        link: the robot's link that touches.
        point: (3,) where, in the world, m.
        normal: (3,) the plane's normal.
        force: (3,) the world's force on the link there (its impulse / dt), world axes, N.
        velocity: (3,) the link's point there after the step, world axes, m/s: along the
            plane, its slip.
        depth: m, how far the point is inside the plane (negative: the gap).
    """

    link: str
    point: np.ndarray
    normal: np.ndarray
    force: np.ndarray
    velocity: np.ndarray
    depth: float


@dataclass(frozen=True, eq=False)
class ContactStep:
    """A step's result: the state after it and its contact forces."""

    q: np.ndarray
    v: np.ndarray
    contacts: tuple[ContactForce, ...]
    iterations: int


def contact_step(robot: Robot, shapes: tuple[CollisionShape, ...], world: World,
                 q: np.ndarray, v: np.ndarray, tau: np.ndarray, dt: float,
                 settings: ContactSettings = ContactSettings()) -> ContactStep:
    """The state after `dt` from (q, v) under the joint efforts `tau`.

    Raises:
        ValueError: q, v or tau not of the robot's sizes or not finite, or dt not > 0.
        ContactError: the solver did not converge, naming the contacts.
    """
    _check_state(robot, q, v, tau, dt)
    placed = shape_set(robot.model, tuple(shapes))
    v_free = v + dt * robot.forward_dynamics(q, v, tau)
    link_poses = robot.frame_poses(q)[placed.frame_rows]
    found = find_contacts(placed, link_poses, world, settings.margin)
    if not found.links:
        return ContactStep(robot.integrate(q, v_free, dt), v_free, (), 0)
    frames = found.frames
    poses = {shape.link: pose for shape, pose in zip(placed.shapes, link_poses, strict=True)}
    jacobian = _contact_jacobian(robot, q, poses, found, frames)
    mass_inverse = robot.mass_matrix_inverse(q)
    least = -np.where(found.heights < 0.0, settings.baumgarte, 1.0) * found.heights / dt
    solved = solve_contact_impulses(
        jacobian @ mass_inverse @ jacobian.T, jacobian @ v_free, least, found.friction,
        settings.tolerance, settings.max_iterations, settings.relaxation)
    if not solved.converged:
        raise ContactError(
            f"robot '{robot.model.name}': the contact solver did not converge in "
            f"{solved.iterations} sweeps (velocity change {solved.change:.3g} m/s) on the "
            f"contacts of {', '.join(sorted(set(found.links)))}")
    v_next = v_free + mass_inverse @ (jacobian.T @ solved.impulses.ravel())
    forces = np.einsum("kr,krj->kj", solved.impulses, frames) / dt
    velocities = np.einsum("kr,krj->kj", (jacobian @ v_next).reshape(-1, ROWS), frames)
    contacts = tuple(ContactForce(link, point, normal, force, velocity, -float(height))
                     for link, point, normal, force, velocity, height in zip(
                         found.links, found.points, frames[:, 0], forces, velocities,
                         found.heights, strict=True))
    return ContactStep(robot.integrate(q, v_next, dt), v_next, contacts, solved.iterations)


def wrench_about(contacts: tuple[ContactForce, ...], origin: np.ndarray) -> np.ndarray:
    """(6,) the contacts' wrench [force; torque] on the robot about `origin`, world axes, N
    and N·m: what a force/torque sensor there reads of them."""
    wrench = np.zeros(6)
    for contact in contacts:
        wrench[:3] += contact.force
        wrench[3:] += np.cross(contact.point - origin, contact.force)
    return wrench


def _check_state(robot: Robot, q: np.ndarray, v: np.ndarray, tau: np.ndarray, dt: float
                 ) -> None:
    """A ValueError naming the first of q, v, tau and dt that a step cannot take."""
    for name, values, size in (("q", q, robot.nq), ("v", v, robot.nv), ("tau", tau, robot.nv)):
        values = np.asarray(values)
        if values.shape != (size,):
            raise ValueError(f"contact_step: {name} must have {size} values for robot "
                             f"'{robot.model.name}', not shape {values.shape}")
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ValueError(f"contact_step: {name} is not finite at index(es) "
                             f"{bad.tolist()}: {values[bad].tolist()}")
    if not (np.isfinite(dt) and dt > 0.0):
        raise ValueError(f"contact_step: dt must be a positive number of seconds, not {dt!r}")


def moving_shapes(robot: Robot, shapes: tuple[CollisionShape, ...]
                  ) -> tuple[CollisionShape, ...]:
    """The shapes on links the joints move: a fixed base's own links are held by their mount
    whatever they touch, and a contact there has no motion to give (its Delassus rows are
    zero)."""
    return shape_set(robot.model, tuple(shapes)).shapes


def _contact_jacobian(robot: Robot, q: np.ndarray, poses: dict[str, np.ndarray],
                      found: Candidates, frames: np.ndarray) -> np.ndarray:
    """(3k, nv): each contact point's linear velocity on its link, in its contact frame."""
    jacobians = {link: robot.jacobian(q, link) for link in set(found.links)}
    frame_jacobians = np.array([jacobians[link] for link in found.links])  # (k, 6, nv)
    levers = found.points - np.array([poses[link][:3, 3] for link in found.links])
    # v_p = v + ω × lever: each point's linear velocity on its link
    point_jacobians = frame_jacobians[:, :3] + np.cross(
        frame_jacobians[:, 3:], levers[:, :, None], axisa=1, axisb=1, axisc=1)
    return (frames @ point_jacobians).reshape(-1, robot.nv)


__all__ = ["ContactError", "ContactForce", "ContactSettings", "ContactStep", "contact_step",
           "moving_shapes", "wrench_about"]
