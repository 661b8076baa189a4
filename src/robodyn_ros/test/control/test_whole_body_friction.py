"""Whole-body control on friction cones (control.whole_body): the QP's answer keeps every
contact force in its friction pyramid and above its least normal force, and a sole's wrench in
its rectangle's cone, and it is the rigid-contact dynamics' own (robodyn's and Pinocchio's);
Solo12 on its point feet and TALOS on its soles stand on the ground of a world (unilateral
contact with Coulomb friction, contact.time_step), pushed, the whole_body plugin closing the
loop every step."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest
from scipy.optimize import nnls
from scipy.spatial.transform import Rotation

from robodyn_ros import Robot
from robodyn_ros.contact import CollisionShape, collision_shapes, contact_points, world_of
from robodyn_ros.control import load_controller
from robodyn_ros.control.plugin import ControllerState
from robodyn_ros.control.whole_body import (
    Ground,
    SoleRectangle,
    WholeBodyController,
    WholeBodyError,
    WholeBodyTargets,
    cone_rows,
)
from robodyn_ros.robot.contact_dynamics import Contact
from robodyn_ros.robot.free_flyer import rotation_matrix
from robodyn_ros.sim import SimulatedRobot
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.floating_pinocchio_oracle import FloatingPinocchioOracle

from helpers.floating import robot_and_oracle
from helpers.tolerances import assert_close

FRICTION = 0.8
GROUND = world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": FRICTION}]})
DT = 1e-3
SOLO_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
TALOS_SOLES = {"left_sole_link": "leg_left_6_link", "right_sole_link": "leg_right_6_link"}
SOLE_HEIGHT = 0.02  # m, of the box a TALOS sole stands on in the world
RAYS = 32  # rays of a true cone in the corner-force oracle, the pyramid's edges among them


class Stand(NamedTuple):
    """A robot standing on the ground: its Pinocchio oracle, where it stands, its contacts and
    the whole_body plugin's parameters; `shapes` its feet's collision shapes only (the rest
    never touches the ground here, and fewer shapes keep the world's step fast), each on the
    link `frame_of` maps to its contact frame."""

    robot: Robot
    oracle: FloatingPinocchioOracle
    q: np.ndarray
    contacts: tuple[Contact, ...]
    ground: Ground
    shapes: tuple[CollisionShape, ...]
    frame_of: dict[str, str]
    parameters: dict[str, object]


def lowered_onto_the_ground(robot: Robot, q: np.ndarray, shapes: tuple[CollisionShape, ...]
                            ) -> np.ndarray:
    """q with the base moved along z so that the shapes' lowest point is on the ground."""
    lowest = min(contact_points(shape, robot.frame_pose(q, shape.link), GROUND.planes[0])
                 .heights.min() for shape in shapes)
    q = q.copy()
    q[2] -= lowest
    return q


def solo_standing() -> Stand:
    """Solo12, knees bent, on its four ball feet (example-robot-data's meshes, read by coal)."""
    robot, oracle = robot_and_oracle("solo12")
    path = example_robot_urdf("solo12")
    shapes = tuple(shape for shape in collision_shapes(path.read_text(), path.parent,
                                                       [path.parents[4]])
                   if shape.link in SOLO_FEET)
    q = robot.neutral()
    joints = {joint.name: joint.q.start for joint in robot.configuration_joints}
    for leg, sign in (("FL", 1), ("FR", 1), ("HL", -1), ("HR", -1)):
        q[joints[f"{leg}_HFE"]], q[joints[f"{leg}_KFE"]] = 0.8 * sign, -1.6 * sign
    contacts = tuple(Contact(foot, "3d") for foot in SOLO_FEET)
    parameters = {"contacts": [f"{foot}:3d" for foot in SOLO_FEET], "frame": "base_link",
                  "friction": FRICTION, "min_normal_force": 1.0}
    return Stand(robot, oracle, lowered_onto_the_ground(robot, q, shapes), contacts,
                 Ground(FRICTION, min_normal_force=1.0), shapes, {foot: foot for foot in SOLO_FEET},
                 parameters)


def footprint(robot: Robot, q: np.ndarray, shape: CollisionShape, sole: str
              ) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest x and y, in the sole frame, of a mesh's hull vertices within
    1 mm of its bottom: the rectangle of the sole it stands on."""
    in_sole = np.linalg.inv(robot.frame_pose(q, sole)) @ robot.frame_pose(q, shape.link)
    vertices = shape.vertices @ in_sole[:3, :3].T + in_sole[:3, 3]
    bottom = vertices[vertices[:, 2] < vertices[:, 2].min() + 1e-3]
    return bottom[:, :2].min(axis=0), bottom[:, :2].max(axis=0)


def talos_standing() -> Stand:
    """TALOS, knees bent, on its two soles. Its ankles' collision meshes bulge a millimetre
    under the sole (an inner vertex 0.4 mm below the sole frame, the rim up to 0.5 mm above):
    in the world each foot would rock on that one point, which resists no yaw torque. Each
    sole stands on a box of the mesh's footprint instead (the bounding rectangle of its bottom
    vertices, in the sole frame); the controller's SoleRectangle is the largest one centred on
    the sole frame inside that footprint, less 5 mm each side."""
    robot, oracle = robot_and_oracle("talos_reduced")
    path = example_robot_urdf("talos_reduced")
    meshes = {shape.link: shape for shape in collision_shapes(
        path.read_text(), path.parent, [path.parents[4]]) if shape.link in TALOS_SOLES.values()}
    q = robot.neutral()
    joints = {joint.name: joint.q.start for joint in robot.configuration_joints}
    for side in ("left", "right"):
        for k, angle in enumerate((0.0, 0.0, -0.4, 0.8, -0.4, 0.0), start=1):
            q[joints[f"leg_{side}_{k}_joint"]] = angle
    boxes, halves = [], []
    for sole, link in TALOS_SOLES.items():
        low, high = footprint(robot, q, meshes[link], sole)
        in_link = np.linalg.inv(robot.frame_pose(q, link)) @ robot.frame_pose(q, sole)
        centre = np.eye(4)
        centre[:3, 3] = [*(low + high) / 2.0, SOLE_HEIGHT / 2.0]
        boxes.append(CollisionShape(link, "box", (*(high - low), SOLE_HEIGHT), in_link @ centre,
                                    np.zeros((0, 3))))
        halves.append(np.minimum(-low, high))
    half = np.min(halves, axis=0) - 0.005
    sole = SoleRectangle(2.0 * float(half[0]), 2.0 * float(half[1]))
    contacts = tuple(Contact(frame, "6d") for frame in TALOS_SOLES)
    parameters = {"contacts": list(TALOS_SOLES), "frame": "base_link", "friction": FRICTION,
                  "min_normal_force": 20.0, "sole_size": [sole.length, sole.width]}
    ground = Ground(FRICTION, min_normal_force=20.0,
                    soles=dict.fromkeys(TALOS_SOLES, sole))
    shapes = tuple(boxes)
    return Stand(robot, oracle, lowered_onto_the_ground(robot, q, shapes), contacts, ground,
                 shapes, {link: sole for sole, link in TALOS_SOLES.items()}, parameters)


STANDS = {"solo12": solo_standing, "talos_reduced": talos_standing}


@pytest.fixture(scope="module", params=list(STANDS))
def stand(request: pytest.FixtureRequest) -> Stand:
    return STANDS[request.param]()


# -- the QP's answer ----------------------------------------------------------------------------


def tangents(ground: Ground, rotation: np.ndarray) -> np.ndarray:
    """(2, 3) the ground's tangents of a contact, as the module documents them: its frame's x
    projected on the ground, and n × that."""
    n = np.array(ground.normal)
    x = rotation[:, 0] - (rotation[:, 0] @ n) * n
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(n, x)])


def corner_wrenches(ground: Ground, rotation: np.ndarray, sole: SoleRectangle) -> np.ndarray:
    """(6, 4 RAYS) the wrenches about the sole frame's origin of unit forces along RAYS rays of
    the true Coulomb cone at each corner of the sole: a wrench is the sole's iff it is a
    nonnegative combination of them (the true cone's wrench cone, from the inside)."""
    n, (t1, t2) = np.array(ground.normal), tangents(ground, rotation)
    angles = 2.0 * np.pi * np.arange(RAYS) / RAYS
    rays = n + ground.friction * (np.cos(angles)[:, None] * t1 + np.sin(angles)[:, None] * t2)
    columns = []
    for sx in (-1.0, 1.0):
        for sy in (-1.0, 1.0):
            corner = sx * sole.length / 2.0 * t1 + sy * sole.width / 2.0 * t2
            columns += [np.concatenate([ray, np.cross(corner, ray)]) for ray in rays]
    return np.array(columns).T


def in_the_ground_cones(stand: Stand, q: np.ndarray, contact: Contact, force: np.ndarray,
                        tolerance: float) -> float:
    """Assert the force obeys the ground: normal ≥ the least, tangent inside the pyramid
    inscribed in the cone (so inside the cone), and a sole's wrench a sum of corner forces in
    the cone; the largest fraction of a bound it uses (1: on the bound)."""
    ground = stand.ground
    rotation = stand.oracle.frame_pose(q, contact.frame)[:3, :3]
    n, (t1, t2) = np.array(ground.normal), tangents(ground, rotation)
    normal = force[:3] @ n
    inscribed = ground.friction / np.sqrt(2.0)
    where = f"contact {contact.frame}: force {force}"
    assert normal >= ground.min_normal_force - tolerance, where
    assert np.linalg.norm(force[:3] - normal * n) <= ground.friction * normal + tolerance, where
    for tangent in (t1, t2):
        assert abs(force[:3] @ tangent) <= inscribed * normal + tolerance, where
    used = max(abs(force[:3] @ t1), abs(force[:3] @ t2)) / (inscribed * normal)
    sole = ground.soles.get(contact.frame)
    if sole is not None:
        torque = np.array([force[3:] @ t1, force[3:] @ t2])
        assert abs(torque[0]) <= sole.width / 2.0 * normal + tolerance, f"{where}: CoP y"
        assert abs(torque[1]) <= sole.length / 2.0 * normal + tolerance, f"{where}: CoP x"
        _, residual = nnls(corner_wrenches(ground, rotation, sole), force)
        assert residual <= tolerance, f"{where}: no corner forces in the cone give it"
        used = max(used, abs(torque[0]) / (sole.width / 2.0 * normal),
                   abs(torque[1]) / (sole.length / 2.0 * normal))
    return float(used)


def random_state(stand: Stand, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Around where the robot stands: the joints ±0.15 rad, the base turned up to 0.1 rad,
    moving at up to 0.3 m/s and rad/s (joints too)."""
    robot, q = stand.robot, stand.q.copy()
    q[7:] += rng.uniform(-0.15, 0.15, robot.nv - 6)
    turn = Rotation.from_rotvec(rng.uniform(-0.1, 0.1, 3) / np.sqrt(3.0))
    q[3:7] = (turn * Rotation.from_quat(q[3:7])).as_quat()  # both (x, y, z, w)
    return q, rng.uniform(-0.3, 0.3, robot.nv)


def test_the_answer_obeys_the_ground_and_is_the_dynamics_own(stand: Stand) -> None:
    """Twelve random states near standing, the centre of mass sent up to 6 cm and the base up
    to 6 cm off, μ = 0.5: every contact force obeys its ground (in_the_ground_cones, to 1e-6 of
    the weight), at least a quarter of the answers on a bound of it; under the answer's τ,
    robodyn's and Pinocchio's rigid-contact dynamics both give back its v̇ and forces, and
    Pinocchio's RNEA at that v̇, less J_cᵀ λ, is [0; τ]."""
    robot, oracle = stand.robot, stand.oracle
    ground = Ground(0.5, min_normal_force=stand.ground.min_normal_force, soles=stand.ground.soles)
    stand = stand._replace(ground=ground)
    rng = np.random.default_rng(11)
    weight = robot.mass * 9.81
    on_a_bound = 0
    for _ in range(12):
        q, v = random_state(stand, rng)
        base = robot.frame_pose(q, "base_link")
        targets = WholeBodyTargets(
            com=robot.centre_of_mass(q) + rng.uniform(-0.06, 0.06, 3), frame="base_link",
            position=base[:3, 3] + rng.uniform(-0.06, 0.06, 3), orientation=base[:3, :3],
            posture=stand.q[7:].copy())
        answer = WholeBodyController(robot, stand.contacts, targets, ground).solve(q, v)
        assert np.all(answer.tau[:6] == 0.0)
        used = [in_the_ground_cones(stand, q, contact, force, 1e-6 * weight)
                for contact, force in zip(stand.contacts, answer.forces, strict=True)]
        on_a_bound += max(used) > 1.0 - 1e-6
        kd = targets.contact_damping
        held = robot.constrained_forward_dynamics(q, v, answer.tau, stand.contacts, kd=kd)
        assert_close(held.vdot, answer.vdot, "robodyn's v̇ under the answer's τ", rtol=1e-7)
        assert_close(np.concatenate(held.forces), np.concatenate(answer.forces),
                     "robodyn's contact forces", rtol=1e-7)
        pairs = [(contact.frame, contact.kind) for contact in stand.contacts]
        vdot, forces = oracle.constrained_forward_dynamics(q, v, answer.tau, pairs, kd=kd)
        assert_close(vdot, answer.vdot, "Pinocchio's v̇ under the answer's τ", rtol=1e-7)
        assert_close(np.concatenate(forces), np.concatenate(answer.forces),
                     "Pinocchio's contact forces", rtol=1e-7)
        J_c = oracle.contact_jacobian(q, pairs)
        generalised = oracle.rnea(q, v, answer.vdot) - J_c.T @ np.concatenate(answer.forces)
        assert np.abs(generalised[:6]).max() <= 1e-9 * weight, "the base's rows: no effort"
        assert_close(generalised[6:], answer.tau[6:], "the joints' efforts", rtol=1e-7)
    assert on_a_bound >= 3


def test_a_soles_rows_admit_the_wrenches_of_corner_forces_in_its_pyramids() -> None:
    """cone_rows on a 6-D contact with a sole (length 0.2, width 0.1, μ = 0.6), its frame
    turned and tilted: of 3000 random wrenches (sums of corner forces along the edges of the
    pyramids inscribed in the cones, perturbed for half of them), the rows hold exactly those
    that forces at the four corners inside those pyramids give (NNLS on the edges, Caron et
    al.'s statement); and a 3-D contact's rows are the pyramid's with the normal force's."""
    ground = Ground(0.6, normal=(0.1, -0.2, 1.0), min_normal_force=0.0,
                    soles={"sole": SoleRectangle(0.2, 0.1)})
    rng = np.random.default_rng(3)
    turn = rotation_matrix(np.array([0.1, 0.05, np.sin(0.4), np.cos(0.4)])
                           / np.linalg.norm([0.1, 0.05, np.sin(0.4), np.cos(0.4)]))
    rows = cone_rows(Contact("sole", "6d"), turn, ground)
    assert rows.rows.shape == (17, 6)
    n, (t1, t2) = np.array(ground.normal), tangents(ground, turn)
    inscribed = ground.friction / np.sqrt(2.0)
    edges = [n + inscribed * (a * t1 + b * t2) for a in (-1, 1) for b in (-1, 1)]
    corners = [a * 0.1 * t1 + b * 0.05 * t2 for a in (-1, 1) for b in (-1, 1)]
    generators = np.array([np.concatenate([edge, np.cross(corner, edge)])
                           for corner in corners for edge in edges]).T
    checked = agreed = inside = 0
    for k in range(3000):
        wrench = generators @ (rng.exponential(size=16) * (rng.random(16) < 0.5))
        if k % 2:
            wrench += rng.normal(scale=0.05 * np.abs(wrench).max() + 1e-3, size=6)
        margin = rows.rows @ wrench - rows.lower
        if abs(margin).min() < 1e-9:  # on the boundary: either answer is right
            continue
        by_rows = bool((margin > 0.0).all())
        by_corners = nnls(generators, wrench)[1] < 1e-9 * max(np.abs(wrench).max(), 1.0)
        checked += 1
        agreed += by_rows == by_corners
        inside += by_rows
    assert agreed == checked > 2900
    assert 1000 < inside < 2500
    point = cone_rows(Contact("foot", "3d"), np.eye(3), ground)
    surface = np.vstack([tangents(ground, np.eye(3)), n])
    expected = np.array([[-1, 0, inscribed], [1, 0, inscribed], [0, -1, inscribed],
                         [0, 1, inscribed], [0, 0, 1]]) @ surface
    np.testing.assert_allclose(point.rows, expected, atol=1e-15)


def test_contacts_that_cannot_be_held_are_an_error_naming_them() -> None:
    """FL_FOOT held both as a point and whole while the robot moves: the two ask its origin
    for different accelerations (classical and spatial), so no v̇ holds both; the answer is a
    WholeBodyError naming the contacts, never a v̇. A non-finite state is refused."""
    robot, _ = robot_and_oracle("solo12")
    q = robot.standing(SOLO_FEET)
    contacts = (Contact("FL_FOOT", "3d"), Contact("FL_FOOT", "6d"), Contact("HR_FOOT", "3d"))
    targets = WholeBodyTargets(com=robot.centre_of_mass(q), frame="base_link",
                               position=q[:3], orientation=np.eye(3), posture=q[7:])
    controller = WholeBodyController(robot, contacts, targets)
    v = np.random.default_rng(0).normal(size=robot.nv)
    with pytest.raises(WholeBodyError, match=r"contacts 'FL_FOOT' \(3d\), 'FL_FOOT' \(6d\), "
                                             r"'HR_FOOT' \(3d\): .*infeasible"):
        controller.solve(q, v)
    v[3] = np.nan
    with pytest.raises(ValueError, match="v must be 18 finite numbers"):
        controller.solve(q, v)


def test_a_state_whose_programme_overflows_is_an_error_and_the_next_is_answered() -> None:
    """A finite state so fast that the programme's terms overflow: a WholeBodyError saying it
    is not finite, never a τ; the controller then answers at rest as a fresh one does."""
    robot, _ = robot_and_oracle("solo12")
    q = robot.standing(SOLO_FEET)
    targets = WholeBodyTargets(com=robot.centre_of_mass(q), frame="base_link",
                               position=q[:3], orientation=np.eye(3), posture=q[7:])
    feet = tuple(Contact(foot, "3d") for foot in SOLO_FEET)
    controller = WholeBodyController(robot, feet, targets)
    with pytest.raises(WholeBodyError, match="not finite"):
        controller.solve(q, np.full(robot.nv, 1e200))
    at_rest = controller.solve(q, np.zeros(robot.nv))
    fresh = WholeBodyController(robot, feet, targets).solve(q, np.zeros(robot.nv))
    np.testing.assert_allclose(at_rest.tau, fresh.tau, rtol=0, atol=1e-9)


# -- standing in the world ----------------------------------------------------------------------


class Record(NamedTuple):
    """What a run measured: the centre of mass's largest drift before the push and anywhere,
    and at the end (m); per contact frame the distance its loaded points slid on the ground
    (∫ |tangential velocity| dt, the fastest point each step) and the largest distance its
    origin moved in the ground's plane while in contact (m), and the largest of those before
    the push; the base's height change and its z axis's tilt (rad) at the end; the ground's
    vertical force at the end (N); the frames touching at the end."""

    drift_before: float
    drift_most: float
    drift_end: float
    slid: dict[str, float]
    moved: dict[str, float]
    moved_before: float
    sagged: float
    tilt: float
    vertical: float
    touching: set[str]


def stand_and_push(stand: Stand, push: np.ndarray, standing: float = 5.0, pushed: float = 0.1,
                   after: float = 1.0) -> Record:
    """The plugin holds the robot where it stands for `standing` s, then a push on the base
    (world axes, N) for `pushed` s, then `after` s."""
    robot = stand.robot
    controller = load_controller("whole_body")()
    controller.configure(robot, stand.parameters)
    simulation = SimulatedRobot(robot, "semi_implicit_euler", DT, q=stand.q, world=GROUND,
                                collision_shapes=stand.shapes)
    com = robot.centre_of_mass(stand.q)
    start = {frame: robot.frame_pose(stand.q, frame)[:3, 3] for frame in stand.frame_of.values()}
    slid, moved = dict.fromkeys(start, 0.0), dict.fromkeys(start, 0.0)
    drifts, steps = [], round((standing + pushed + after) / DT)
    before = round(standing / DT)
    for k in range(steps):
        if k == before:
            moved_before = max(moved.values())
            simulation.apply_wrench("base_link", [*push, 0.0, 0.0, 0.0])
        if k == round((standing + pushed) / DT):
            simulation.apply_wrench("base_link", np.zeros(6))
        q = simulation.q
        simulation.step(controller.update(ControllerState(simulation.time, q, simulation.qd)))
        speeds = sliding_speeds(robot, q, simulation)
        for link, speed in speeds.items():
            frame = stand.frame_of[link]
            slid[frame] += speed * DT
            shift = robot.frame_pose(simulation.q, frame)[:3, 3] - start[frame]
            moved[frame] = max(moved[frame], float(np.linalg.norm(shift[:2])))
        drifts.append(float(np.linalg.norm(robot.centre_of_mass(simulation.q) - com)))
    end = simulation.q
    return Record(max(drifts[:before]), max(drifts), drifts[-1], slid, moved, moved_before,
                  float(end[2] - stand.q[2]), float(np.arccos(rotation_matrix(end[3:7])[2, 2])),
                  float(sum(contact.force[2] for contact in simulation.world_contacts)),
                  {stand.frame_of[link] for link in sliding_speeds(robot, end, simulation)})


def sliding_speeds(robot: Robot, q: np.ndarray, simulation: SimulatedRobot) -> dict[str, float]:
    """Link → the largest speed along the ground, after the last step, of its points that
    carried a force in it (the step's contacts, found at q)."""
    speeds: dict[str, float] = {}
    v = simulation.qd
    for contact in simulation.world_contacts:
        if not contact.force.any():
            continue
        twist = robot.jacobian(q, contact.link) @ v
        lever = contact.point - robot.frame_pose(q, contact.link)[:3, 3]
        velocity = twist[:3] + np.cross(twist[3:], lever)
        along = velocity - (velocity @ contact.normal) * contact.normal
        speeds[contact.link] = max(speeds.get(contact.link, 0.0), float(np.linalg.norm(along)))
    return speeds


def test_solo12_stands_on_its_point_feet_and_takes_a_push() -> None:
    """Solo12 (2.5 kg) 5 s on its four ball feet (μ = 0.8), then pushed forward with 20 N for
    0.1 s (an impulse that would send it off at 0.8 m/s): before the push its centre of mass
    drifts under 1 cm and its feet stay within 2 mm; no foot slides 2 mm; 1 s after the push
    it stands on all four feet, upright, its centre of mass back within 1 cm, the ground
    carrying its weight. A ball foot rolls where the shank turns: its centre, the contact's
    frame, moves a few millimetres under the push while its points on the ground stay put,
    which is why the slide, not the frame's path, is held to 2 mm after the push."""
    stand = solo_standing()
    record = stand_and_push(stand, np.array([20.0, 0.0, 0.0]))
    assert record.drift_before < 1e-2
    assert record.moved_before < 2e-3
    assert record.drift_end < 1e-2
    assert max(record.slid.values()) < 2e-3, record.slid
    assert max(record.moved.values()) < 1e-2, record.moved
    assert record.touching == set(SOLO_FEET)
    assert abs(record.sagged) < 1e-2 and record.tilt < 0.05
    assert record.vertical == pytest.approx(stand.robot.mass * 9.81, rel=0.05)


def test_talos_stands_on_its_soles_and_takes_a_push() -> None:
    """TALOS (90 kg) 5 s on its two soles (μ = 0.8, each sole's centre of pressure in its
    rectangle), then pushed forward with 150 N for 0.1 s: before the push its centre of mass
    drifts under 1 cm; no sole slides or moves 2 mm; 1 s after the push it stands on both
    soles, upright, its centre of mass back within 1 cm, the ground carrying its weight."""
    stand = talos_standing()
    record = stand_and_push(stand, np.array([150.0, 0.0, 0.0]))
    assert record.drift_before < 1e-2
    assert record.drift_end < 1e-2
    assert max(record.slid.values()) < 2e-3, record.slid
    assert max(record.moved.values()) < 2e-3, record.moved
    assert record.touching == set(TALOS_SOLES)
    assert abs(record.sagged) < 1e-2 and record.tilt < 0.05
    assert record.vertical == pytest.approx(stand.robot.mass * 9.81, rel=0.05)


# -- parameters ---------------------------------------------------------------------------------


def test_the_plugin_takes_the_ground_from_its_parameters() -> None:
    robot, _ = robot_and_oracle("talos_reduced")
    controller = load_controller("whole_body")()
    controller.configure(robot, {"contacts": ["left_sole_link", "right_sole_link:3d"],
                                 "friction": 0.5, "min_normal_force": 3, "sole_size": [0.2, 0.1]})
    assert controller.ground == Ground(0.5, min_normal_force=3.0)
    assert controller.ground.soles == {"left_sole_link": SoleRectangle(0.2, 0.1)}


@pytest.mark.parametrize(("parameters", "message"), [
    ({"friction": 0.0}, "parameter 'friction' must be a finite number > 0"),
    ({"friction": -0.5}, "parameter 'friction' must be a finite number > 0"),
    ({"friction": "rough"}, "parameter 'friction' must be 1 finite number"),
    ({"friction": [0.5, 0.6]}, "parameter 'friction' must be 1 finite number"),
    ({"friction": float("nan")}, "parameter 'friction' must be 1 finite number"),
    ({"min_normal_force": -1.0}, "parameter 'min_normal_force' must be a finite number of "
                                 "newtons ≥ 0"),
    ({"min_normal_force": float("inf")}, "parameter 'min_normal_force' must be 1 finite"),
    ({"sole_size": [0.2]}, "parameter 'sole_size' must be 2 finite numbers"),
    ({"sole_size": [0.2, 0.0]}, "parameter 'sole_size' must be a length and a width > 0"),
    ({"sole_size": [0.2, 0.1], "contacts": ["left_sole_link:3d"]},
     "parameter 'sole_size': no contact is 6d"),
])
def test_bad_ground_parameters_are_named(parameters: dict[str, object], message: str) -> None:
    robot, _ = robot_and_oracle("talos_reduced")
    with pytest.raises(ValueError, match=message):
        load_controller("whole_body")().configure(
            robot, {"contacts": ["left_sole_link", "right_sole_link"], **parameters})


def test_a_bad_ground_or_sole_is_named() -> None:
    robot, _ = robot_and_oracle("solo12")
    q = robot.standing(SOLO_FEET)
    targets = WholeBodyTargets(com=robot.centre_of_mass(q), frame="base_link", position=q[:3],
                               orientation=np.eye(3), posture=q[7:])
    for make, message in (
        (lambda: Ground(friction=0.0), "Ground: friction must be a finite number > 0"),
        (lambda: Ground(normal=(0.0, 0.0, 0.0)), "Ground: normal must be 3 finite numbers"),
        (lambda: Ground(min_normal_force=-2.0), "Ground: min_normal_force must be"),
        (lambda: Ground(soles={"FL_FOOT": (0.1, 0.1)}), r"Ground: soles\['FL_FOOT'\] must be a"),
        (lambda: SoleRectangle(0.2, -0.1), "SoleRectangle: width must be a finite number"),
        (lambda: WholeBodyController(robot, [Contact("FL_FOOT", "3d")], targets,
                                     Ground(soles={"FL_FOOT": SoleRectangle(0.1, 0.1)})),
         r"soles\['FL_FOOT'\]: 'FL_FOOT' is not a 6d contact"),
        (lambda: WholeBodyController(robot, [Contact("FL_FOOT", "3d")],
                                     dataclasses.replace(targets, force_weight=0.0)),
         "force_weight must be a finite number > 0"),
    ):
        with pytest.raises(ValueError, match=message):
            make()
