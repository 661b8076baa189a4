"""Pinocchio asked robodyn's questions, answered in robodyn's conventions.

robodyn orders joints as the caller lists them and gives every joint one coordinate (a continuous
joint as an angle). Pinocchio orders joints depth-first from the URDF root and stores a
continuous joint as (cos θ, sin θ). ``PinocchioOracle`` converts between the two so tests and
benchmarks compare like with like. A root joint (e.g. a free flyer) between the world and the
root link keeps Pinocchio's own coordinates, which lead q and v on both sides. It takes joint
names, not a robodyn Model, so it stays an independent oracle; it needs Pinocchio
(``pip install pin``), a test/benchmark dependency only.

6-D quantities are ``[linear; angular]`` on both sides. Every method takes one state: q is
``(nq,)``, velocities, accelerations and torques ``(nv,)``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from typing import TypedDict, Unpack

import numpy as np
import pinocchio as pin  # type: ignore[import-untyped]

from robodyn_ros.errors import check_keywords


class OracleOptions(TypedDict, total=False):
    """How a PinocchioOracle's model is given and how it differs from its URDF, each key
    optional.

    Keys:
        locked_joints: joint name → position at which that joint is frozen (a continuous
            joint's as an angle); the other joints are at neutral while locking. None (the
            default): none.
        armature: joint name → armature (rotor inertia on M's diagonal), set in Pinocchio's
            ``model.armature``; zero for the joints not named (the default: all).
        gravity: the gravitational acceleration in the world frame (m/s²), set in Pinocchio's
            ``model.gravity``; Pinocchio's (0, 0, -9.81) when None (the default).
        payloads: URDF link → (mass in kg, (3,) centre of mass in the link's frame, (3, 3)
            inertia about it) of a load fixed to that link, added to its body. None (the
            default): none.
        is_string: the URDF is given as its text rather than a path. Default False.
    """

    locked_joints: Mapping[str, float] | None
    armature: Mapping[str, float] | None
    gravity: Sequence[float] | None
    payloads: Mapping[str, tuple[float, Sequence[float], np.ndarray]] | None
    is_string: bool


class PinocchioOracle:
    """A Pinocchio model of a URDF that speaks in robodyn's joint order.

    Attributes:
        model, data: the Pinocchio model (locked joints removed) and its workspace, for callers
            that want to time Pinocchio itself on ``q(...)``/``v(...)`` converted states.
        joint_names: robodyn's joint order, one coordinate per joint.
        nq: length of q: the root joint's coordinates (none for a fixed base), then one per joint.
        nv: length of v: the root joint's velocity coordinates, then one per joint.
    """

    def __init__(
        self,
        urdf: str | os.PathLike,
        joint_names: Sequence[str],
        *,
        mimic: bool = False,
        root_joint: pin.JointModel | None = None,
        **options: Unpack[OracleOptions],
    ) -> None:
        """Build the model.

        Args:
            urdf: path of a URDF file, or the URDF text itself when ``is_string``.
            joint_names: every moving joint left after locking, in robodyn's order.
            mimic: mimic joints follow their leaders (Pinocchio's ``mimic=True``): they are
                not coordinates, and ``joint_names`` lists the independent joints; q̈ and M⁻¹
                then come from M and the nonlinear effects (Pinocchio's ABA does not take them).
            root_joint: a Pinocchio joint from the world to the root link (e.g.
                ``pin.JointModelFreeFlyer()``), whose coordinates lead q and v as Pinocchio
                defines them; the root link is the world (a fixed base) when None.
            options: locked joints, armature, gravity, payloads, URDF text (OracleOptions).

        Raises:
            ValueError: a locked joint is unknown, or ``joint_names`` is not exactly the set of
                moving joints left, or one of them has more than one degree of freedom.
            TypeError: a keyword that is not one of OracleOptions'.
        """
        check_keywords("PinocchioOracle", options, OracleOptions.__optional_keys__)
        root = () if root_joint is None else (root_joint,)
        full = (pin.buildModelFromXML(urdf, *root, mimic=mimic) if options.get("is_string")
                else pin.buildModelFromUrdf(os.fspath(urdf), *root, mimic=mimic))
        self.mimic = mimic
        self.model = _lock_joints(full, options.get("locked_joints") or {})
        gravity = options.get("gravity")
        if gravity is not None:
            self.model.gravity.linear = np.array(gravity, dtype=float)
        for frame, (mass, com, inertia) in (options.get("payloads") or {}).items():
            placed = self.model.frames[self._link_frame(frame)]
            load = pin.Inertia(float(mass), np.asarray(com, float), np.asarray(inertia, float))
            self.model.inertias[placed.parentJoint] += placed.placement.act(load)
        self.data = self.model.createData()
        self.joint_names = tuple(joint_names)
        root_ids = [] if root_joint is None else [1]  # the root joint is Pinocchio's joint 1
        _require_every_joint_once(self.model, self.joint_names, first_id=1 + len(root_ids))
        self._joint_ids = _joint_ids(self.model, self.joint_names)
        self._body_ids = [*root_ids, *self._joint_ids]
        root_nq: int = 0 if root_joint is None else root_joint.nq
        self._root_nv: int = 0 if root_joint is None else root_joint.nv
        joints = [self.model.joints[i] for i in self._joint_ids]
        self._idx_q = np.array([*range(root_nq), *(joint.idx_q for joint in joints)], np.int64)
        self._idx_v = np.array([*range(self._root_nv), *(joint.idx_v for joint in joints)],
                               np.int64)
        self._is_angle_pair = np.array([False] * root_nq + [joint.nq == 2 for joint in joints])
        self.nq, self.nv = len(self._idx_q), len(self._idx_v)
        for name, value in (options.get("armature") or {}).items():
            self.model.armature[self._idx_v[self._root_nv + self.joint_names.index(name)]] = value

    # -- conversions --------------------------------------------------------------------------

    def q(self, q_ours: np.ndarray) -> np.ndarray:
        """Pinocchio configuration of robodyn's q (nq,)."""
        q_ours = self._state(q_ours, "q", self.nq)
        q_pin = np.empty(self.model.nq)
        single = ~self._is_angle_pair
        q_pin[self._idx_q[single]] = q_ours[single]
        pair_start = self._idx_q[self._is_angle_pair]
        angles = q_ours[self._is_angle_pair]
        q_pin[pair_start] = np.cos(angles)
        q_pin[pair_start + 1] = np.sin(angles)
        return q_pin

    def q_to_ours(self, q_pin: np.ndarray) -> np.ndarray:
        """robodyn's q (nq,) of a Pinocchio configuration; continuous angles in (-π, π]."""
        q_pin = np.asarray(q_pin, dtype=float)
        if q_pin.shape != (self.model.nq,):
            raise ValueError(f"q_pin must have shape ({self.model.nq},), got {q_pin.shape}")
        q_ours = q_pin[self._idx_q]
        pair_start = self._idx_q[self._is_angle_pair]
        q_ours[self._is_angle_pair] = np.arctan2(q_pin[pair_start + 1], q_pin[pair_start])
        return q_ours

    def v(self, v_ours: np.ndarray) -> np.ndarray:
        """Pinocchio order of a velocity, acceleration or torque vector (nv,)."""
        v_pin = np.empty(self.nv)
        v_pin[self._idx_v] = self._state(v_ours, "v", self.nv)
        return v_pin

    def to_ours(self, x_pin: np.ndarray) -> np.ndarray:
        """robodyn order of a Pinocchio velocity, acceleration or torque vector (nv,)."""
        return np.asarray(x_pin, dtype=float)[self._idx_v]

    def matrix_to_ours(self, m_pin: np.ndarray) -> np.ndarray:
        """robodyn order of the rows and columns of an nv×nv Pinocchio matrix."""
        return np.asarray(m_pin, dtype=float)[np.ix_(self._idx_v, self._idx_v)]

    def jacobian_to_ours(self, j_pin: np.ndarray) -> np.ndarray:
        """robodyn order of the columns of a k×nv Pinocchio Jacobian."""
        return np.asarray(j_pin, dtype=float)[:, self._idx_v]

    # -- dynamics ------------------------------------------------------------------------------

    def rnea(
        self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, f_ext: np.ndarray | None = None
    ) -> np.ndarray:
        """Inverse dynamics τ (nv,); ``f_ext`` as in ``forces``."""
        args = (self.model, self.data, self.q(q), self.v(qd), self.v(qdd))
        if f_ext is None:
            return self.to_ours(pin.rnea(*args))
        return self.to_ours(pin.rnea(*args, self.forces(f_ext)))

    def aba(
        self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, f_ext: np.ndarray | None = None
    ) -> np.ndarray:
        """Forward dynamics q̈ (nv,); ``f_ext`` as in ``forces``."""
        args = (self.model, self.data, self.q(q), self.v(qd), self.v(tau))
        if self.mimic:
            bias = self.rnea(q, qd, np.zeros(self.nv), f_ext)
            return np.linalg.solve(self.mass_matrix(q), np.asarray(tau) - bias)
        if f_ext is None:
            return self.to_ours(pin.aba(*args))
        return self.to_ours(pin.aba(*args, self.forces(f_ext)))

    def bias_forces(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """C(q, q̇) q̇ + g(q), (nv,)."""
        return self.to_ours(pin.nonLinearEffects(self.model, self.data, self.q(q), self.v(qd)))

    def gravity_torques(self, q: np.ndarray) -> np.ndarray:
        """g(q), (nv,)."""
        return self.to_ours(pin.computeGeneralizedGravity(self.model, self.data, self.q(q)))

    def coriolis_matrix(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Coriolis matrix C(q, q̇), (nv, nv), with Ṁ − 2C skew-symmetric: the Christoffel
        form of M. Not with mimic joints: there Pinocchio 4.1 answers a matrix that is not
        the Christoffel form of its own M."""
        if self.mimic:
            raise ValueError("coriolis_matrix: Pinocchio 4.1's is not the Christoffel form of "
                             "M with mimic joints; compare with that definition instead")
        C = pin.computeCoriolisMatrix(self.model, self.data, self.q(q), self.v(qd))
        return self.matrix_to_ours(C)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """Joint-space inertia M(q), (nv, nv), symmetric."""
        # With a mimic joint inside a chain, Pinocchio 4.1's crba is right on a fresh Data
        # only: on one that earlier calls filled, it returns another (wrong) M.
        data = self.model.createData() if self.mimic else self.data
        return self.matrix_to_ours(_symmetric(pin.crba(self.model, data, self.q(q))))

    def mass_matrix_inverse(self, q: np.ndarray) -> np.ndarray:
        """M(q)⁻¹, (nv, nv), symmetric."""
        if self.mimic:
            return np.linalg.inv(self.mass_matrix(q))
        minv = pin.computeMinverse(self.model, self.data, self.q(q))
        return self.matrix_to_ours(_symmetric(minv))

    def kinetic_energy(self, q: np.ndarray, qd: np.ndarray) -> float:
        """½ q̇ᵀ M(q) q̇, J."""
        return float(pin.computeKineticEnergy(self.model, self.data, self.q(q), self.v(qd)))

    def potential_energy(self, q: np.ndarray) -> float:
        """Gravitational potential energy of the moving bodies, J (zero at the world origin)."""
        return float(pin.computePotentialEnergy(self.model, self.data, self.q(q)))

    def forces(self, f_ext: np.ndarray) -> pin.StdVec_Force:
        """Pinocchio's per-joint external forces of robodyn's (len(joint_names), 6) ``f_ext``.

        Row i is the wrench ``[force; torque]`` on the body moved by ``joint_names[i]``,
        expressed in that body's frame (the joint frame = the URDF child link frame) about its
        origin, which is how Pinocchio takes ``fext``.
        """
        f_ext = np.asarray(f_ext, dtype=float)
        shape = (len(self.joint_names), 6)
        if f_ext.shape != shape:
            raise ValueError(f"f_ext must have shape {shape}, got {f_ext.shape}")
        forces = pin.StdVec_Force()
        forces.extend(pin.Force.Zero() for _ in range(self.model.njoints))
        for wrench, joint_id in zip(f_ext, self._joint_ids, strict=True):
            forces[joint_id] = pin.Force(wrench)
        return forces

    # -- frames --------------------------------------------------------------------------------

    def joint_torque_regressor(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Pinocchio's computeJointTorqueRegressor, (nv, 10 nb): τ = Y π, π the ten dynamic
        parameters of each body (body_parameters), rows and column blocks in robodyn's order.
        Pinocchio's regressor has no armature term."""
        Y = pin.computeJointTorqueRegressor(self.model, self.data, self.q(q), self.v(qd),
                                            self.v(qdd))
        columns = (10 * (np.array(self._body_ids)[:, None] - 1) + np.arange(10)).ravel()
        return np.asarray(Y)[np.ix_(self._idx_v, columns)]

    def body_parameters(self) -> np.ndarray:
        """(nb, 10) each body's dynamic parameters (Inertia.toDynamicParameters: m, m c, then
        I about the joint frame origin as xx, xy, yy, xz, yz, zz): the root link's first when a
        root joint moves it, then each joint's body in robodyn's order."""
        return np.array([self.model.inertias[j].toDynamicParameters() for j in self._body_ids])

    def with_parameters(self, body_parameters: np.ndarray, armature: np.ndarray) -> PinocchioOracle:
        """A copy whose bodies have these dynamic parameters, (nb, 10) as body_parameters
        gives them (Inertia.FromDynamicParameters), and whose coordinates have this armature
        (nv,), robodyn's order."""
        changed = copy.copy(self)
        changed.model = pin.Model(self.model)
        for parameters, body_id in zip(body_parameters, self._body_ids, strict=True):
            changed.model.inertias[body_id] = pin.Inertia.FromDynamicParameters(
                np.asarray(parameters, dtype=float))
        changed.model.armature[:] = self.v(armature)
        changed.data = changed.model.createData()
        return changed

    def frame_pose(self, q: np.ndarray, link_name: str) -> np.ndarray:
        """4x4 pose of a URDF link in the world (the root link frame for a fixed base)."""
        frame_id = self._link_frame(link_name)
        pin.framesForwardKinematics(self.model, self.data, self.q(q))
        return self.data.oMf[frame_id].homogeneous.copy()

    def jacobian(self, q: np.ndarray, link_name: str) -> np.ndarray:
        """6×nv Jacobian ``[linear; angular]`` of a link's origin, world-aligned axes."""
        return self.jacobian_to_ours(self._jacobian_pin(self.q(q), link_name))

    def classical_acceleration(self, q: np.ndarray, qd: np.ndarray, link_name: str) -> np.ndarray:
        """J̇ q̇ of a link: the classical acceleration [a; α] of its origin at q̈ = 0,
        world-aligned axes."""
        frame_id = self._link_frame(link_name)
        self._move(q, qd)
        return pin.getFrameClassicalAcceleration(
            self.model, self.data, frame_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        ).vector.copy()

    def operational_space_inertia(self, q: np.ndarray, link_name: str) -> np.ndarray:
        """Λ = (J M⁻¹ Jᵀ)⁻¹, 6x6, with the Jacobian of ``jacobian``; needs J of full rank."""
        q_pin = self.q(q)
        jac = self._jacobian_pin(q_pin, link_name)
        minv = _symmetric(pin.computeMinverse(self.model, self.data, q_pin))
        lam = np.linalg.inv(jac @ minv @ jac.T)
        return (lam + lam.T) / 2

    # -- internals -----------------------------------------------------------------------------

    def _move(self, q: np.ndarray, qd: np.ndarray) -> None:
        """Pinocchio's kinematics and frame placements at (q, q̇) with q̈ = 0, in ``data``."""
        pin.forwardKinematics(self.model, self.data, self.q(q), self.v(qd), np.zeros(self.model.nv))
        pin.updateFramePlacements(self.model, self.data)

    def _jacobian_pin(self, q_pin: np.ndarray, link_name: str) -> np.ndarray:
        frame_id = self._link_frame(link_name)
        return pin.computeFrameJacobian(
            self.model, self.data, q_pin, frame_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        ).copy()

    def _link_frame(self, link_name: str) -> int:
        if not self.model.existFrame(link_name, pin.FrameType.BODY):
            links = [f.name for f in self.model.frames if f.type == pin.FrameType.BODY]
            raise KeyError(f"no link {link_name!r} in the model; links: {', '.join(links)}")
        return self.model.getFrameId(link_name, pin.FrameType.BODY)

    def _state(self, x: np.ndarray, label: str, size: int) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != (size,):
            raise ValueError(f"{label} must have shape ({size},), got {x.shape}")
        return x


def _lock_joints(model: pin.Model, locked: Mapping[str, float]) -> pin.Model:
    """The model with the named joints frozen at the given positions (others at neutral)."""
    if not locked:
        return model
    ids = _joint_ids(model, tuple(locked))
    reference = pin.neutral(model)
    for joint_id, position in zip(ids, locked.values(), strict=True):
        joint = model.joints[joint_id]
        if joint.nq == 2:
            reference[joint.idx_q : joint.idx_q + 2] = np.cos(position), np.sin(position)
        else:
            reference[joint.idx_q] = position
    return pin.buildReducedModel(model, ids, reference)


def _require_every_joint_once(model: pin.Model, names: Sequence[str], first_id: int) -> None:
    """Raise unless ``names`` lists each moving joint of the model from ``first_id`` on (past
    the root joint) exactly once."""
    repeated = sorted({name for name in names if names.count(name) > 1})
    coordinates = [name for joint, name in zip(model.joints[first_id:],
                                               list(model.names)[first_id:], strict=True)
                   if joint.nv > 0]
    missing = [name for name in coordinates if name not in names]
    if repeated or missing:
        raise ValueError(
            f"joint_names must list every moving joint once; repeated: {repeated}, "
            f"missing: {missing}"
        )


def _joint_ids(model: pin.Model, names: Sequence[str]) -> list[int]:
    """Pinocchio ids of one-degree-of-freedom joints, checked against the model."""
    known = list(model.names)[1:]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"joints {unknown} are not in the model; its joints: {known}")
    ids = [model.getJointId(name) for name in names]
    wide = [name for name, i in zip(names, ids, strict=True) if model.joints[i].nv != 1]
    if wide:
        raise ValueError(f"joints {wide} have more than one degree of freedom")
    return ids


def _symmetric(upper: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle Pinocchio filled."""
    return np.triu(upper) + np.triu(upper, 1).T
