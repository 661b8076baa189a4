"""Pinocchio asked robodyn's floating-base questions, answered in robodyn's conventions.

robodyn's floating-base state is Pinocchio's free flyer followed by the joints in robodyn's
order: q = [x y z, qx qy qz qw, joint positions], v = [base linear; base angular velocity, both
in the base frame, joint velocities]; τ and every nv-sized vector or matrix follow v's order, the
first six entries of τ being the base wrench [force; torque] in the base frame.
``FloatingPinocchioOracle`` is ``PinocchioOracle`` with that free flyer as its root joint, plus
the centroidal quantities and Pinocchio's constrained (contact) forward dynamics.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal, Unpack

import numpy as np
import pinocchio as pin  # type: ignore[import-untyped]

from robodyn_ros.model.model import FREE_FLYER_JOINTS
from robodyn_ros.testing.pinocchio_oracle import OracleOptions, PinocchioOracle

ContactKind = Literal["3d", "6d"]
"""A point contact (the link origin's position held) or a rigid one (its whole pose held)."""

Contact = tuple[str, ContactKind]
"""A contact: the URDF link whose frame it holds, and its kind."""

_CONTACT_TYPES = {"3d": pin.ContactType.CONTACT_3D, "6d": pin.ContactType.CONTACT_6D}
_WORLD_ALIGNED = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


class FloatingPinocchioOracle(PinocchioOracle):
    """A free-flying Pinocchio model of a URDF that speaks in robodyn's floating-base order.

    Attributes:
        model, data, joint_names: as PinocchioOracle's; ``model`` starts with a free flyer.
        nq: 7 + the number of joints.
        nv: 6 + the number of joints.
    """

    def __init__(
        self, urdf: str | os.PathLike, joint_names: Sequence[str], **options: Unpack[OracleOptions]
    ) -> None:
        """Build the model, the URDF root link free-flying (Pinocchio's JointModelFreeFlyer).

        Args:
            urdf, joint_names, options: as PinocchioOracle's (joint_names may start with the
                free flyer's rows, FREE_FLYER_JOINTS, as a Robot's do); ``gravity`` is in the
                world frame. There are no mimic joints: Pinocchio's constraint dynamics does
                not take them.

        Raises:
            ValueError, TypeError: as PinocchioOracle's.
        """
        super().__init__(
            urdf, [name for name in joint_names if name not in FREE_FLYER_JOINTS],
            root_joint=pin.JointModelFreeFlyer(), **options,
        )

    # -- centroidal quantities -------------------------------------------------------------------

    def centre_of_mass(self, q: np.ndarray) -> np.ndarray:
        """The whole robot's centre of mass in the world.

        Args:
            q: robodyn's configuration (nq,).

        Returns:
            (3,) its position.
        """
        return np.array(pin.centerOfMass(self.model, self.data, self.q(q)))

    def com_jacobian(self, q: np.ndarray) -> np.ndarray:
        """Jacobian of the centre of mass: its velocity is ``com_jacobian(q) @ v``.

        Args:
            q: robodyn's configuration (nq,).

        Returns:
            (3, nv), world axes.
        """
        return self.jacobian_to_ours(pin.jacobianCenterOfMass(self.model, self.data, self.q(q)))

    def centroidal_map(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio's computeCentroidalMap A_G: the centroidal momentum is ``A_G @ v``.

        Args:
            q: robodyn's configuration (nq,).

        Returns:
            (6, nv): rows [linear momentum; angular momentum about the centre of mass], world
            axes.
        """
        return self.jacobian_to_ours(pin.computeCentroidalMap(self.model, self.data, self.q(q)))

    # -- contacts --------------------------------------------------------------------------------

    def contact_jacobian(self, q: np.ndarray, contacts: Sequence[Contact]) -> np.ndarray:
        """The contacts' Jacobians stacked, as ``constrained_forward_dynamics`` constrains them.

        Args:
            q: robodyn's configuration (nq,).
            contacts: (link, kind) pairs.

        Returns:
            (rows, nv): per contact, the link origin's ``jacobian`` rows in world-aligned axes,
            the linear three for "3d", all six [linear; angular] for "6d".

        Raises:
            KeyError: a link is unknown.
            ValueError: a kind is neither "3d" nor "6d".
        """
        q_pin = self.q(q)
        return self.jacobian_to_ours(np.vstack([
            self._jacobian_pin(q_pin, link)[: _contact_rows(kind)] for link, kind in contacts
        ]))

    def contact_drift(
        self, q: np.ndarray, v: np.ndarray, contacts: Sequence[Contact]
    ) -> np.ndarray:
        """The constrained accelerations at v̇ = 0, stacked as ``contact_jacobian``'s rows.

        With p the link origin, ω the link's angular velocity (world axes): "3d" constrains
        the classical acceleration p̈ (Pinocchio's getFrameClassicalAcceleration), "6d" the
        spatial one [p̈ − ω × ṗ; ω̇] (getFrameAcceleration), both LOCAL_WORLD_ALIGNED.

        Args:
            q: robodyn's configuration (nq,).
            v: robodyn's velocity (nv,).
            contacts: (link, kind) pairs.

        Returns:
            (rows,) the drift, so that the constrained acceleration is
            ``contact_jacobian(q) @ v̇ + contact_drift(q, v)``.

        Raises:
            KeyError: a link is unknown.
            ValueError: a kind is neither "3d" nor "6d".
        """
        self._move(q, v)
        return np.concatenate([self._drift(link, kind) for link, kind in contacts])

    def constrained_forward_dynamics(
        self,
        q: np.ndarray,
        v: np.ndarray,
        tau: np.ndarray,
        contacts: Sequence[Contact],
        kp: float = 0.0,
        kd: float = 0.0,
        placements: Sequence[np.ndarray] | None = None,
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Forward dynamics with each contact link held to a fixed world placement.

        Pinocchio 4.1's constraintDynamics: a RigidConstraintModel per contact (joint 1 the
        link's, joint 2 the world, holding the link frame to its target placement),
        reference frame LOCAL_WORLD_ALIGNED, Baumgarte gains BaumgarteCorrectorParameters(kp,
        kd), default ProximalSettings (μ = 0, one iteration: a direct solve of the KKT system
        by Pinocchio's constraint Cholesky). It solves, J_c and drift_c as
        ``contact_jacobian`` and ``contact_drift`` give them,

            M v̇ + nle = τ + Σ_c J_cᵀ λ_c,    J_c v̇ + drift_c = −kd·vel_c − kp·err_c.

        With p, R the link frame's position and rotation at q, ṗ and ω its origin's velocity
        and its angular velocity (world axes, ``jacobian(q) @ v``), p_d, R_d the target:

        - "3d" (CONTACT_3D): rows are world axes; vel = ṗ, err = p − p_d (R_d is unused), and
          the drift is the classical acceleration, so p̈ = −kd·ṗ − kp·(p − p_d).
        - "6d" (CONTACT_6D): rows are [linear; angular], world axes; vel = [ṗ; ω],
          err = [R ν; R φ] with (ν, φ) = log6(X_d⁻¹ X) (X = (R, p), X_d = (R_d, p_d)): the
          SE(3) log of the frame's pose relative to the target (Pinocchio's
          contact_placement_error, −log6(c1Mc2), which is in the link frame), rotated into
          world axes by R. So R φ = log3(R R_dᵀ), but R ν is not p − p_d unless R = R_d (the
          SE(3) log couples translation and rotation); Pinocchio uses no Jexp6 factor. The
          acceleration is the spatial one, [p̈ − ω × ṗ; ω̇] = R · d/dt(body twist), not the
          classical [p̈; ω̇]: the condition is the LOCAL one, d/dt(body twist) = −kd·(body
          twist) − kp·log6(X_d⁻¹ X), rotated by R.

        Args:
            q: robodyn's configuration (nq,).
            v: robodyn's velocity (nv,).
            tau: robodyn's generalised forces (nv,), the base wrench first.
            contacts: (link, kind) pairs, independent: the stacked Jacobian of full row rank.
            kp: Baumgarte stiffness (1/s²).
            kd: Baumgarte damping (1/s).
            placements: 4x4 world target of each contact's frame; where it is at q when None.

        Returns:
            v̇ (nv,), and per contact the force λ_c the environment exerts on the robot
            (Pinocchio's contact_force): (3,) force at the link origin for "3d", (6,)
            [force; torque about the link origin] for "6d", world-aligned axes.

        Raises:
            KeyError: a link is unknown.
            ValueError: a kind is neither "3d" nor "6d"; ``placements`` has not one entry per
                contact; the contacts are dependent (Pinocchio's solve answers NaN).
        """
        q_pin = self.q(q)
        constraints = self.constraint_models(q_pin, contacts, kp, kd, placements)
        datas = pin.StdVec_RigidConstraintData()
        datas.extend(constraint.createData() for constraint in constraints)
        pin.initConstraintDynamics(self.model, self.data, constraints, datas)
        vdot = pin.constraintDynamics(self.model, self.data, q_pin, self.v(v), self.v(tau),
                                      constraints, datas)
        if not np.all(np.isfinite(vdot)):
            raise ValueError(f"contacts {list(contacts)} are not independent: Pinocchio's "
                             "constraint dynamics has no unique solution")
        forces = [np.array(data.contact_force.vector[: _contact_rows(kind)])
                  for data, (_, kind) in zip(datas, contacts, strict=True)]
        return self.to_ours(vdot), forces

    # -- internals -------------------------------------------------------------------------------

    def _drift(self, link_name: str, kind: str) -> np.ndarray:
        """One contact's ``contact_drift`` rows, from the kinematics ``_move`` left in data."""
        frame_id = self._link_frame(link_name)
        if _contact_rows(kind) == 3:
            acceleration = pin.getFrameClassicalAcceleration(
                self.model, self.data, frame_id, _WORLD_ALIGNED)
            return np.array(acceleration.linear)
        return np.array(pin.getFrameAcceleration(
            self.model, self.data, frame_id, _WORLD_ALIGNED).vector)

    def constraint_models(
        self,
        q_pin: np.ndarray,
        contacts: Sequence[Contact],
        kp: float,
        kd: float,
        placements: Sequence[np.ndarray] | None,
    ) -> pin.StdVec_RigidConstraintModel:
        """Pinocchio's constraint models of ``constrained_forward_dynamics``' contacts at the
        Pinocchio configuration q_pin, for a caller that times constraintDynamics itself."""
        frame_ids = [self._link_frame(link) for link, _ in contacts]
        pin.framesForwardKinematics(self.model, self.data, q_pin)
        targets = ([self.data.oMf[frame_id].copy() for frame_id in frame_ids] if placements is None
                   else [pin.SE3(np.asarray(placement, dtype=float)) for placement in placements])
        if len(targets) != len(contacts):
            raise ValueError(f"{len(targets)} placements for {len(contacts)} contacts")
        constraints = pin.StdVec_RigidConstraintModel()
        for frame_id, (_, kind), target in zip(frame_ids, contacts, targets, strict=True):
            frame = self.model.frames[frame_id]
            constraint = pin.RigidConstraintModel(
                _contact_type(kind), self.model, frame.parentJoint, frame.placement, 0, target,
                _WORLD_ALIGNED)
            constraint.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(kp, kd))
            constraints.append(constraint)
        return constraints


def _contact_type(kind: str) -> pin.ContactType:
    """Pinocchio's ContactType of a contact kind.

    Raises:
        ValueError: the kind is neither "3d" nor "6d".
    """
    if kind not in _CONTACT_TYPES:
        raise ValueError(f"contact kind {kind!r} is neither '3d' nor '6d'")
    return _CONTACT_TYPES[kind]


def _contact_rows(kind: str) -> int:
    """Constraint rows of a contact kind: 3 or 6.

    Raises:
        ValueError: the kind is neither "3d" nor "6d".
    """
    return 3 if _contact_type(kind) == pin.ContactType.CONTACT_3D else 6
