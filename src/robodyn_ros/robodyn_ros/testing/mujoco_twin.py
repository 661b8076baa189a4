"""A URDF as MuJoCo's model, beside robodyn's Robot of the same text: MuJoCo's own URDF
importer reads it (with a ``<mujoco><compiler/></mujoco>`` extension), a free joint under the
root link for a floating base, a world's planes as plane geoms, and the maps between the two
configurations. For the tests and benchmarks that hold the simulation against MuJoCo; needs
MuJoCo (``pip install mujoco``), a test and benchmark dependency."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import mujoco  # type: ignore[import-untyped]
import numpy as np

from robodyn_ros.contact.geometry import mesh_file
from robodyn_ros.contact.world import World
from robodyn_ros.robot import Robot
from robodyn_ros.robot.free_flyer import rotation_matrix

SLIDING_ONLY = (0.0, 0.0)
"""A plane geom's torsional and rolling friction: none; a contact of condim 3 (MuJoCo's
default: the cone of the sliding friction alone) does not read them."""


def mujoco_urdf(urdf: str, collisions: bool = True,
                base_folder: str | os.PathLike[str] | None = None,
                package_folders: Sequence[str | os.PathLike[str]] = ()) -> str:
    """The URDF text as MuJoCo's importer takes it: the visuals left out; the collisions left
    out, or kept with each mesh's filename the file it names (geometry.mesh_file) and every
    link a body of its own, so that a contact's geom names its link.

    Args:
        urdf: the URDF text.
        collisions: keep the ``<collision>`` elements.
        base_folder, package_folders: where the meshes are (collision_shapes' arguments).

    Raises:
        GeometryError: a mesh file that cannot be found, naming it.
    """
    text = re.sub(r"<visual\b.*?</visual>", "", urdf, flags=re.S)
    if not collisions:
        return re.sub(r"<collision\b.*?</collision>", "", text, flags=re.S)

    def resolved(found: re.Match[str]) -> str:
        path = mesh_file("a <collision> <mesh>", found[1], base_folder, package_folders)
        return f'filename="{path.resolve()}"'

    text = re.sub(r'filename="([^"]*)"', resolved, text)
    compiler = '<mujoco><compiler strippath="false" fusestatic="false"/></mujoco>'
    return re.sub(r"(<robot\b[^>]*>)", lambda found: found[1] + compiler, text, count=1)


def mujoco_model(urdf: str, *, floating_base: bool, world: World | None = None,
                 collisions: bool = True, base_folder: str | os.PathLike[str] | None = None,
                 package_folders: Sequence[str | os.PathLike[str]] = ()) -> mujoco.MjModel:
    """MuJoCo's model of the URDF text (mujoco_urdf), its root link under a free joint when
    `floating_base`, and the planes of `world` as plane geoms with their friction.

    The robot's geoms touch the planes only (contype 1, conaffinity 0: no self-collision, as
    contact.time_step has none); a plane's priority makes its friction the contact's.

    Raises:
        GeometryError: a mesh file that cannot be found.
        ValueError: MuJoCo refuses the model (an inertia it will not take), its message.
    """
    spec = mujoco.MjSpec.from_string(mujoco_urdf(urdf, collisions, base_folder, package_folders))
    if floating_base:
        spec.worldbody.first_body().add_freejoint()
    for geom in spec.geoms:
        geom.contype, geom.conaffinity = 1, 0
    for plane in (world or World()).planes:
        orientation = np.empty(4)
        mujoco.mju_quatZ2Vec(orientation, plane.normal)
        spec.worldbody.add_geom(
            type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 1.0], pos=plane.point,
            quat=orientation, friction=[plane.friction, *SLIDING_ONLY], contype=0,
            conaffinity=1, priority=1)
    return spec.compile()


@dataclass(frozen=True)
class MujocoTwin:
    """A robot and MuJoCo's model of its URDF, with the maps between their states: joints
    matched by name, a free flyer's quaternion x y z w as MuJoCo's w x y z, its velocity
    [linear; angular] in the base frame as MuJoCo's [linear in the world; angular in the
    base]."""

    robot: Robot
    model: mujoco.MjModel
    qpos_rows: np.ndarray  # qpos = q[qpos_rows]
    dof_rows: np.ndarray  # a joint's qvel = v[dof_rows] (the free joint's converted)

    @property
    def floating(self) -> bool:
        return self.robot.nq != self.robot.nv

    def qvel(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """MuJoCo's qvel of our state (q, v)."""
        qvel = np.asarray(v, dtype=float)[self.dof_rows]
        if self.floating:
            qvel[:3] = rotation_matrix(q[3:7]) @ v[:3]
        return qvel

    def v(self, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """Our velocity v of MuJoCo's (qpos, qvel)."""
        v = np.empty(self.robot.nv)
        v[self.dof_rows] = qvel
        if self.floating:
            v[:3] = rotation_matrix(self.q(qpos)[3:7]).T @ qvel[:3]
        return v

    def qfrc(self, tau: np.ndarray) -> np.ndarray:
        """MuJoCo's generalized force of our joint efforts τ (zero on a free flyer's rows)."""
        return np.asarray(tau, dtype=float)[self.dof_rows]

    def qpos(self, q: np.ndarray) -> np.ndarray:
        """MuJoCo's qpos of our configuration q."""
        return np.asarray(q, dtype=float)[self.qpos_rows]

    def q(self, qpos: np.ndarray) -> np.ndarray:
        """Our configuration of MuJoCo's qpos."""
        q = np.empty(self.robot.nq)
        q[self.qpos_rows] = qpos
        return q

    def contact_links(self, data: mujoco.MjData) -> set[str]:
        """The robot's links in contact in `data` (a plane geom belongs to the world body)."""
        bodies = {int(self.model.geom_bodyid[geom]) for contact in data.contact
                  for geom in contact.geom}
        return {self.model.body(body).name for body in bodies - {0}}

    def contact_force(self, data: mujoco.MjData) -> np.ndarray:
        """(3,) the sum of the contact forces on the robot in `data`, world axes, N."""
        total, local = np.zeros(3), np.zeros(6)
        for k, contact in enumerate(data.contact):
            mujoco.mj_contactForce(self.model, data, k, local)
            # contact frame rows: the normal (from geom 1 to geom 2), then the tangents
            force = contact.frame.reshape(3, 3).T @ local[:3]
            total += force if self.model.geom_bodyid[contact.geom[1]] else -force
        return total


def mujoco_twin(robot: Robot, urdf: str, dt: float, world: World | None = None,
                base_folder: str | os.PathLike[str] | None = None,
                package_folders: Sequence[str | os.PathLike[str]] = ()) -> MujocoTwin:
    """MuJoCo's model of the URDF `robot` was loaded from (floating if it is), with the planes
    of `world`, stepped as `robot` is simulated: time step `dt`, the robot's gravity, its
    joints' damping, friction loss and armature; MuJoCo's other options its defaults
    (semi-implicit Euler, the pyramidal friction cone, soft contacts).

    Raises:
        ValueError: a joint of another kind than a free flyer or one degree of freedom, or a
            joint MuJoCo's model lacks, naming it.
    """
    joints = robot.configuration_joints
    floating = joints[0].kind == "floating"
    model = mujoco_model(urdf, floating_base=floating, world=world, base_folder=base_folder,
                         package_folders=package_folders)
    model.opt.timestep, model.opt.gravity[:] = dt, robot.model.gravity
    damping, friction, armature = (robot.per_coordinate(np.asarray(values)) for values in (
        robot.model.damping, robot.model.friction, robot.model.armature))
    # (MuJoCo's qpos address, ours in q): the free joint's w x y z from our x y z w
    pairs = list(enumerate((0, 1, 2, 6, 3, 4, 5))) if floating else []
    dofs = list(enumerate(range(6))) if floating else []
    for joint in joints[1:] if floating else joints:
        if joint.q.stop - joint.q.start != 1:
            raise ValueError(f"mujoco_twin: joint '{joint.name}' ({joint.kind}) has no "
                             "MuJoCo twin here; a free flyer at the root and joints of one "
                             "degree of freedom have")
        theirs = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint.name)
        if theirs < 0:
            raise ValueError(f"mujoco_twin: MuJoCo's model has no joint '{joint.name}'")
        dof, row = model.jnt_dofadr[theirs], joint.v.start
        model.dof_damping[dof], model.dof_frictionloss[dof] = damping[row], friction[row]
        model.dof_armature[dof] = armature[row]
        pairs.append((int(model.jnt_qposadr[theirs]), joint.q.start))
        dofs.append((int(dof), row))
    if len(pairs) != model.nq:
        raise ValueError(f"mujoco_twin: MuJoCo's model has {model.nq} coordinates, robot "
                         f"'{robot.model.name}' {robot.nq}")
    order, dof_order = np.empty(model.nq, dtype=np.int64), np.empty(model.nv, dtype=np.int64)
    for address, ours in pairs:
        order[address] = ours
    for address, ours in dofs:
        dof_order[address] = ours
    return MujocoTwin(robot, model, order, dof_order)


__all__ = ["MujocoTwin", "mujoco_model", "mujoco_twin", "mujoco_urdf"]
