"""URDF → Model: parse with urdf_parser_py, validate, and flatten the tree into arrays.

Fixed joints (and joints named in ``locked_joints``) are merged into their moving parent body;
every URDF link stays a frame. Every error is a ``ModelError`` whose message starts with the
file (or string source) and names the link or joint at fault.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TypedDict, Unpack

import numpy as np
import urdf_parser_py.xml_reflection.core as xml_reflection_core
from urdf_parser_py.urdf import URDF, Joint, Link, Pose

from robodyn_ros.errors import RobodynWarning, check_keywords
from robodyn_ros.model.armature import Armature, armature_vector
from robodyn_ros.model.inertia import (
    MASS_BOUNDS,
    MAX_INERTIA,
    MAX_LENGTH,
    impossible_inertia,
    inertia_about_com,
    inertia_tolerance,
    joint_transform,
    placed_spatial_inertia,
    pose_from_xyz_rpy,
    principal_moments,
)
from robodyn_ros.model.mimic import lock_followers, mimic_rules
from robodyn_ros.model.model import (
    FREE_FLYER_JOINT,
    FREE_FLYER_JOINTS,
    JOINT_KINDS,
    MULTI_DOF_JOINTS,
    MULTI_DOF_SUFFIXES,
    SINGLE_DOF_KINDS,
    Model,
    ModelError,
)

__all__ = ["GRAVITY", "URDFWarning", "load_urdf", "load_urdf_string"]

GRAVITY = (0.0, 0.0, -9.81)
"""Gravitational acceleration in the root frame, m/s² (REP 103: z up)."""

_DEFAULT_AXIS = (1.0, 0.0, 0.0)  # URDF spec: the axis when <axis> is absent
# Numeric attributes (name → how many numbers) of the elements that matter to the dynamics.
_NUMBER_ATTRIBUTES = {
    "origin": {"xyz": 3, "rpy": 3},
    "axis": {"xyz": 3},
    "mass": {"value": 1},
    "inertia": dict.fromkeys(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), 1),
    "limit": dict.fromkeys(("lower", "upper", "velocity", "effort"), 1),
    "dynamics": dict.fromkeys(("damping", "friction"), 1),
    "mimic": dict.fromkeys(("multiplier", "offset"), 1),
}
# Magnitudes past any robot, refused at load (model.inertia).
_MAGNITUDE_BOUNDS = {
    ("mass", "value"): (*MASS_BOUNDS, "kg"),
    **{("inertia", name): (0.0, MAX_INERTIA, "kg·m²")
       for name in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
    ("origin", "xyz"): (0.0, MAX_LENGTH, "m"),
}
# Children that must appear at most once; urdf_parser_py keeps the first and only prints.
_SINGLE_CHILDREN = {
    "link": ("inertial",),
    "inertial": ("origin", "mass", "inertia"),
    "joint": ("origin", "axis", "parent", "child", "limit", "dynamics", "mimic"),
}
# What urdf_parser_py needs to see: the rest (visuals, materials, transmissions, gazebo tags)
# does not affect the dynamics and is dropped, so a broken mesh material cannot block a load.
_KEPT_ROBOT_CHILDREN = ("link", "joint")
_DROPPED_LINK_CHILDREN = ("visual", "collision")

_LOG = logging.getLogger(__name__)
_PARSER_LOCK = threading.Lock()  # urdf_parser_py reports through a module-global hook


class URDFWarning(RobodynWarning):
    """A URDF that loads but is physically doubtful (mimic joints, odd inertias)."""


class UrdfOptions(TypedDict, total=False):
    """How load_urdf and load_urdf_string make a Model, each key optional.

    Keys:
        locked_joints: joint name → position (rad or m); those joints become fixed at that
            position, e.g. the fingers of a gripper. None (the default): none.
        strict_inertia: refuse any link whose own inertia no rigid body can have (load_urdf's
            Warns). Default False.
        armature: joint name → reflected rotor inertia (kg·m² revolute, kg prismatic), or the
            path of a YAML file holding that mapping at its top level or under the key
            ``armature`` (robodyn_ros.model.armature); added to M's diagonal, zero where not
            named. None (the default): zero.
        mimic: joints with a ``<mimic>`` follow their leader (``Model.mimic``, chains
            resolved; a follower of a locked leader is locked where its rule puts it); False
            loads them as independent joints, with a warning, as Pinocchio does without
            ``mimic=True``. Default True.
        floating_base: the root link floats: a free flyer (``FREE_FLYER_JOINT``, its rows
            ``FREE_FLYER_JOINTS``) comes first, and the root link with its fixed links is its
            body. Default False.
    """

    locked_joints: Mapping[str, float] | None
    strict_inertia: bool
    armature: Armature | None
    mimic: bool
    floating_base: bool


def load_urdf(path: str | os.PathLike[str], **options: Unpack[UrdfOptions]) -> Model:
    """Load a URDF file into a ``Model``, fixed to the world or floating.

    Revolute, continuous and prismatic joints become degrees of freedom, numbered depth-first
    from the root link (children in file order, so ``parent[i] < i``); fixed joints merge
    their child link into the moving parent body. Position limits come from ``<limit>``
    (absent attributes are 0, as the URDF spec says; continuous joints and joints without
    ``<limit>`` get ±inf), velocity and effort limits are +inf without ``<limit>``, damping
    and friction 0 without ``<dynamics>``. Visuals, collisions, materials, transmissions and
    extension tags are ignored.

    Args:
        path: the URDF file; its name prefixes every error message.
        options: locked joints, armature, mimic rules, a floating base (UrdfOptions).

    Returns:
        The Model.

    Raises:
        ModelError: the file is not a valid URDF tree (the message says where); a
            moving body (a link with its fixed links merged in) whose inertia no rigid body
            can have; a magnitude outside any robot (a mass above 1e6 kg or nonzero below
            1e-12 kg, an inertia entry above 1e9 kg·m², an origin coordinate above 1e4 m); an
            armature that names a joint that is not a moving joint or has a value that is not
            a finite number ≥ 0; a mimic of a joint that is not a moving joint, a loop of
            mimics, or a locked follower of a leader that is not locked; a floating base
            whose URDF has a joint named like a free-flyer joint.
        OSError: the file (or the armature file) cannot be read.
        TypeError: a keyword that is not one of UrdfOptions'.

    Warns:
        URDFWarning: mimic joints loaded as independent joints (mimic=False), singular
            inertias, and a
            link whose own inertia is impossible (not positive semi-definite, or breaking the
            triangle inequality: CAD noise) but merges into the fixed base or into a moving
            body that is possible.
    """
    with open(path, "rb") as file:
        xml = file.read()
    return _load(xml, os.fspath(path), options)


def load_urdf_string(
    xml: str | bytes, *, source: str = "<string>", **options: Unpack[UrdfOptions]
) -> Model:
    """Load a URDF document (e.g. the ``robot_description`` parameter) into a ``Model``.

    ``source`` names the document in error messages. Everything else is as ``load_urdf``.
    """
    return _load(xml, source, options)


def _load(xml: str | bytes, source: str, options: UrdfOptions) -> Model:
    check_keywords(source, options, UrdfOptions.__optional_keys__)
    document = _parse_xml(xml, source)
    robot = _parse_robot(document, source)
    model, notes = _build_model(robot, source, dict(options.get("locked_joints") or {}),
                                options.get("strict_inertia", False), options.get("mimic", True),
                                options.get("floating_base", False))
    armature = options.get("armature")
    if armature is not None:
        model = replace(model, armature=armature_vector(armature, model.joint_names, source=source))
    for note in notes:
        warnings.warn(note, URDFWarning, stacklevel=3)  # the caller of load_urdf*
    return model


# --- XML ------------------------------------------------------------------------------------


def _parse_xml(xml: str | bytes, source: str) -> ET.Element:
    """The XML tree, checked for what urdf_parser_py misses, prints or reports without a name:
    repeated elements and numbers that are not finite."""
    try:
        document = ET.fromstring(xml)
    except ET.ParseError as error:
        raise ModelError(f"{source}: malformed XML: {error}") from None
    if document.tag != "robot":
        raise ModelError(f"{source}: the root element is <{document.tag}>, a URDF needs <robot>")
    for element in document:
        if element.tag in _KEPT_ROBOT_CHILDREN:
            owner = f"{element.tag} '{element.get('name')}'"
            _check_single_children(element, owner, f"<{element.tag}>", source)
            for child in element:
                if child.tag not in _DROPPED_LINK_CHILDREN:
                    _check_element(child, owner, "", source)
    return document


def _check_element(element: ET.Element, owner: str, path: str, source: str) -> None:
    """Check an element of a link or joint and its children; ``path`` is the chain of
    enclosing elements below the link or joint, e.g. ``<inertial>``."""
    _check_single_children(element, owner, f"{path}<{element.tag}>", source)
    for attribute, count in _NUMBER_ATTRIBUTES.get(element.tag, {}).items():
        text = element.get(attribute)
        if text is None:
            continue
        where = f'{source}: {owner}: {path}<{element.tag} {attribute}="{text}">'
        if not _are_finite_numbers(text, count):
            raise ModelError(
                f"{where} must be "
                + ("a finite number" if count == 1 else f"{count} finite numbers")
            )
        bounds = _MAGNITUDE_BOUNDS.get((element.tag, attribute))
        if bounds is not None:
            _check_magnitudes(text, bounds, where)
    for child in element:
        _check_element(child, owner, f"{path}<{element.tag}>", source)


def _check_single_children(element: ET.Element, owner: str, where: str, source: str) -> None:
    for tag in _SINGLE_CHILDREN.get(element.tag, ()):
        count = len(element.findall(tag))
        if count > 1:
            raise ModelError(
                f"{source}: {owner}: {where} has {count} <{tag}> elements; one is allowed "
                "(parsers silently keep the first): remove the others"
            )


def _check_magnitudes(text: str, bounds: tuple[float, float, str], where: str) -> None:
    """ModelError unless every nonzero number of `text` has a magnitude within `bounds`
    (smallest nonzero, largest, unit)."""
    smallest, largest, unit = bounds
    for value in map(float, text.split()):
        if value != 0.0 and not smallest <= abs(value) <= largest:
            limit = f"at most {largest:g} {unit}" if abs(value) > largest else (
                f"0 or at least {smallest:g} {unit}"
            )
            raise ModelError(
                f"{where}: {value:g} {unit} is outside any robot; a magnitude must be {limit} "
                "(check the units)"
            )


def _are_finite_numbers(text: str, count: int) -> bool:
    words = text.split()
    try:
        return len(words) == count and all(np.isfinite(float(word)) for word in words)
    except ValueError:
        return False


def _dynamics_only(document: ET.Element) -> bytes:
    pruned = ET.Element(document.tag, document.attrib)
    for child in document:
        if child.tag in _KEPT_ROBOT_CHILDREN:
            pruned.append(child)
            for dropped in [c for c in child if c.tag in _DROPPED_LINK_CHILDREN]:
                child.remove(dropped)
    pruned_urdf: bytes = ET.tostring(pruned, encoding="utf-8")
    return pruned_urdf


@contextmanager
def _parser_messages() -> Iterator[list[str]]:
    """Collect what urdf_parser_py would print to stderr (it reports through ``on_error``)."""
    messages: list[str] = []
    with _PARSER_LOCK:
        printer = xml_reflection_core.on_error
        xml_reflection_core.on_error = messages.append
        try:
            yield messages
        finally:
            xml_reflection_core.on_error = printer


def _parse_robot(document: ET.Element, source: str) -> URDF:
    with _parser_messages() as messages:
        try:
            robot = URDF.from_xml_string(_dynamics_only(document))
        except Exception as error:  # urdf_parser_py raises Exception, AssertionError, ...
            reason = " ".join(str(error).split())  # ParseError spans lines
            raise ModelError(f"{source}: invalid URDF: {reason}") from None
    for message in messages:
        if message.startswith(("Unknown tag", "Unknown attribute")):
            _LOG.debug("%s: ignored %s", source, message[0].lower() + message[1:])
        else:
            raise ModelError(f"{source}: invalid URDF: {message}")
    return robot


# --- validation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tree:
    root: str
    parent_joint: dict[str, Joint]  # child link → the joint that carries it
    child_joints: dict[str, list[Joint]]  # link → joints leaving it, in URDF order


@dataclass(frozen=True)
class _Inertial:
    mass: float
    com_pose: np.ndarray  # 4x4, inertial frame in the link frame
    inertia: np.ndarray  # 3x3 about the COM, inertial frame axes
    impossible: str  # why no rigid body has this inertia, "" when one can


def _check_unique_names(robot: URDF, source: str) -> None:
    for kind, items in (("link", robot.links), ("joint", robot.joints)):
        seen: set[str] = set()
        for item in items:
            if item.name in seen:
                raise ModelError(f"{source}: {kind} '{item.name}' is defined twice")
            seen.add(item.name)


def _kinematic_tree(robot: URDF, source: str) -> _Tree:
    links = [link.name for link in robot.links]
    if not links:
        raise ModelError(f"{source}: robot '{robot.name}' has no links")
    known = set(links)
    parent_joint: dict[str, Joint] = {}
    child_joints: dict[str, list[Joint]] = {name: [] for name in links}
    for joint in robot.joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in known:
                raise ModelError(
                    f"{source}: joint '{joint.name}' names {role} link '{link}', "
                    "which is not defined"
                )
        if joint.child in parent_joint:
            raise ModelError(
                f"{source}: link '{joint.child}' has two parent joints, "
                f"'{parent_joint[joint.child].name}' and '{joint.name}'; a URDF is a tree, "
                "every link but the root has exactly one parent joint"
            )
        parent_joint[joint.child] = joint
        child_joints[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) > 1:
        raise ModelError(
            f"{source}: several root links ({', '.join(repr(r) for r in roots)}); exactly one "
            "link may have no parent joint: connect the others to the tree"
        )
    reached = set(_depth_first(roots[0], child_joints)) if roots else set()
    for name in links:
        if name not in reached:
            loop = _loop_through(name, parent_joint)
            prefix = "no root link, " if not roots else ""
            raise ModelError(f"{source}: {prefix}the joints form a kinematic loop: {loop}")
    return _Tree(roots[0], parent_joint, child_joints)


def _loop_through(link: str, parent_joint: Mapping[str, Joint]) -> str:
    """Describe the loop reached by walking up the parents of a link no root reaches."""
    path: list[str] = []
    while link not in path:
        path.append(link)
        link = parent_joint[link].parent
    loop = path[path.index(link) :][::-1]
    return ", ".join(
        f"joint '{parent_joint[child].name}' ({parent_joint[child].parent} → {child})"
        for child in loop
    )


def _depth_first(root: str, child_joints: Mapping[str, list[Joint]]) -> Iterator[str]:
    """Links in depth-first order from the root, children in URDF order."""
    stack = [root]
    while stack:
        link = stack.pop()
        yield link
        stack.extend(joint.child for joint in reversed(child_joints[link]))


def _check_joint(joint: Joint, source: str) -> None:
    subject = f"joint '{joint.name}'"
    if joint.type not in (*JOINT_KINDS, "fixed"):
        raise ModelError(f"{source}: {subject} has unsupported type '{joint.type}'")
    if joint.type == "planar" and joint.axis is not None \
            and not np.allclose(joint.axis, (0.0, 0.0, 1.0)):
        axis = " ".join(f"{x:g}" for x in joint.axis)
        raise ModelError(
            f"{source}: {subject} is planar with <axis xyz=\"{axis}\">: "
            "its plane must be the joint frame's x-y plane, the axis 0 0 1 (as Pinocchio's "
            "JointModelPlanar); turn the joint's <origin> so that the plane's normal is z"
        )


def _origin_pose(origin: Pose | None) -> np.ndarray:
    """4x4 transform of an ``<origin>``, identity when absent."""
    return np.eye(4) if origin is None else pose_from_xyz_rpy(origin.xyz, origin.rpy)


def _joint_axis(joint: Joint, source: str) -> np.ndarray:
    axis = np.array(joint.axis if joint.axis is not None else _DEFAULT_AXIS, dtype=float)
    largest = np.abs(axis).max()
    if largest > 0.0:
        axis = axis / largest  # so that the norm neither overflows (1e300) nor underflows
    norm = np.linalg.norm(axis)
    if norm == 0.0:
        raise ModelError(
            f"{source}: joint '{joint.name}': <axis xyz> has zero length; give the direction "
            'of motion, e.g. "0 0 1"'
        )
    unit_axis: np.ndarray = axis / norm
    return unit_axis


def _link_inertial(link: Link, source: str, notes: list[str]) -> _Inertial | None:
    """The inertial of a link (None when massless); doubts go to ``notes``, and what no rigid
    body can have to the inertial's ``impossible`` (judged with its body, _check_bodies)."""
    if link.inertial is None:
        return None
    subject = f"link '{link.name}'"
    inertial = link.inertial
    if inertial.inertia is None:
        raise ModelError(f"{source}: {subject}: <inertial> has a <mass> but no <inertia>")
    mass = float(inertial.mass)
    if mass < 0.0:
        raise ModelError(f"{source}: {subject} has negative mass {mass:g} kg")
    inertia = np.array(inertial.inertia.to_matrix(), dtype=float)
    moments = principal_moments(inertia)
    impossible = impossible_inertia(moments)
    if impossible:
        impossible = f"<inertia> {impossible}"
    elif mass > 0.0 and moments[0] <= inertia_tolerance(moments):
        notes.append(
            f"{source}: {subject} has mass {mass:g} kg but a singular <inertia> (principal "
            f"moments {', '.join(f'{m:.6g}' for m in moments)} kg·m²): loaded as a point mass "
            "or thin rod"
        )
    return _Inertial(mass, _origin_pose(inertial.origin), inertia, impossible)


def _check_bodies(
    flat: _Flattened,
    inertials: Mapping[str, _Inertial | None],
    bodies: np.ndarray,
    strict_inertia: bool,
    source: str,
    notes: list[str],
) -> None:
    """Judge what the dynamics use: each moving body with its fixed links merged in.

    A link whose own inertia is impossible is a ModelError with ``strict_inertia``; otherwise
    a note when it merges into the fixed base (it cannot affect the dynamics) or into a moving
    body that is physically possible, and a ModelError when that body is not.
    """
    impossible = {name: i.impossible for name, i in inertials.items() if i and i.impossible}
    for link, problem in impossible.items():
        if strict_inertia:
            raise ModelError(
                f"{source}: link '{link}': {problem} (refused: strict_inertia); fix ixx..izz"
            )
    for body, inertia in enumerate(bodies):
        moments = principal_moments(inertia_about_com(inertia))
        if moments[0] < -inertia_tolerance(moments):
            merged = [link for link, b in flat.link_body.items() if b == body]
            raise ModelError(
                f"{source}: the body moved by joint '{flat.joints[body].name}' (link(s) "
                f"{', '.join(map(repr, merged))} merged) has principal moments "
                f"{', '.join(f'{m:.6g}' for m in moments)} kg·m² about its centre of mass, not "
                "positive semi-definite: no body has a negative moment of inertia; fix ixx..izz "
                "of "
                + ", ".join(f"'{link}'" for link in merged if link in impossible)
            )
    for link, problem in impossible.items():
        body = flat.link_body[link]
        into = "the fixed base, so it cannot affect the dynamics" if body < 0 else (
            f"the body moved by joint '{flat.joints[body].name}', whose inertia is possible"
        )
        notes.append(f"{source}: link '{link}': {problem}; loaded, merged into {into}")


def _check_locked_joints(robot: URDF, locked: Mapping[str, float], source: str) -> None:
    joints = {joint.name: joint for joint in robot.joints}
    for name, position in locked.items():
        joint = joints.get(name)
        if joint is None:
            moving = ", ".join(j.name for j in robot.joints if j.type in JOINT_KINDS)
            raise ModelError(
                f"{source}: locked joint '{name}' is not a joint of robot '{robot.name}'; "
                f"its moving joints are: {moving}"
            )
        if joint.type not in SINGLE_DOF_KINDS:
            raise ModelError(
                f"{source}: locked joint '{name}' is {joint.type}; only revolute, continuous "
                "and prismatic joints can be locked"
            )
        if not np.isfinite(position):
            raise ModelError(f"{source}: locked joint '{name}': position {position} is not finite")


# --- flattening -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _MovingJoint:
    name: str
    kind: str
    child: str
    parent: int
    placement: np.ndarray
    motion_subspace: np.ndarray
    lower: float
    upper: float
    velocity_limit: float
    effort_limit: float
    damping: float
    friction: float


@dataclass
class _Flattened:
    """The tree with fixed and locked joints merged: moving joints and where each link sits."""

    joints: list[_MovingJoint]
    link_body: dict[str, int]  # -1 for the root body
    link_placement: dict[str, np.ndarray]  # in its body's frame


def _build_model(
    robot: URDF,
    source: str,
    locked: Mapping[str, float],
    strict_inertia: bool,
    mimic: bool,
    floating_base: bool,
) -> tuple[Model, list[str]]:
    """The Model of a parsed URDF, and the warnings it deserves."""
    notes: list[str] = []
    _check_unique_names(robot, source)
    tree = _kinematic_tree(robot, source)
    for joint in robot.joints:
        _check_joint(joint, source)
    _check_locked_joints(robot, locked, source)
    rules = mimic_rules(robot, source) if mimic else {}
    locked = lock_followers(rules, locked, source)
    inertials = {link.name: _link_inertial(link, source, notes) for link in robot.links}
    if floating_base:
        _check_floating_base(robot, source)
    flat = _flatten(tree, locked, source, floating_base)
    if not flat.joints:
        raise ModelError(
            f"{source}: robot '{robot.name}' has no moving (revolute, continuous, prismatic) "
            "joint left, so there is nothing to compute"
        )
    for joint in robot.joints:
        if joint.mimic is not None and joint.type in SINGLE_DOF_KINDS and not mimic \
                and joint.name not in locked:
            notes.append(
                f"{source}: joint '{joint.name}' mimics joint '{joint.mimic.joint}'; loaded as "
                "an independent joint (mimic=False): drive it yourself or lock it"
            )
    joints = flat.joints
    bodies = _body_inertias(flat, inertials)
    _check_bodies(flat, inertials, bodies, strict_inertia, source, notes)
    frame_names = tuple(link.name for link in robot.links)
    model = Model(
        name=robot.name,
        root_link=tree.root,
        joint_names=tuple(j.name for j in joints),
        joint_kinds=tuple(j.kind for j in joints),
        body_links=tuple(j.child for j in joints),
        parent=np.array([j.parent for j in joints], dtype=np.int64),
        joint_placement=np.array([j.placement for j in joints]),
        motion_subspace=np.array([j.motion_subspace for j in joints]),
        spatial_inertia=bodies,
        lower=np.array([j.lower for j in joints]),
        upper=np.array([j.upper for j in joints]),
        velocity_limit=np.array([j.velocity_limit for j in joints]),
        effort_limit=np.array([j.effort_limit for j in joints]),
        damping=np.array([j.damping for j in joints]),
        friction=np.array([j.friction for j in joints]),
        frame_names=frame_names,
        frame_body=np.array([flat.link_body[name] for name in frame_names], dtype=np.int64),
        frame_placement=np.array([flat.link_placement[name] for name in frame_names]),
        gravity=np.array(GRAVITY),
        mimic=tuple(rule for name, rule in rules.items() if name not in locked),
    )
    return model, notes


def _check_floating_base(robot: URDF, source: str) -> None:
    """Refuse a URDF joint named like a row of the free flyer."""
    taken = [joint.name for joint in robot.joints if joint.name in FREE_FLYER_JOINTS]
    if taken:
        raise ModelError(
            f"{source}: joint(s) {', '.join(map(repr, taken))} are named like the floating "
            f"base's free-flyer rows ({', '.join(FREE_FLYER_JOINTS)}); rename them"
        )


def _flatten(
    tree: _Tree, locked: Mapping[str, float], source: str, floating_base: bool
) -> _Flattened:
    """Number the moving joints depth-first and merge fixed (and locked) joints into bodies;
    with a floating base, the free flyer comes first and the root link is its body."""
    if floating_base:
        rows = _multi_dof_rows(FREE_FLYER_JOINT, "floating", tree.root, -1, np.eye(4), 0)
        flat = _Flattened(rows, {tree.root: len(rows) - 1}, {tree.root: np.eye(4)})
    else:
        flat = _Flattened([], {tree.root: -1}, {tree.root: np.eye(4)})
    for link in _depth_first(tree.root, tree.child_joints):
        if link == tree.root:
            continue
        joint = tree.parent_joint[link]
        parent_body = flat.link_body[joint.parent]
        placement = flat.link_placement[joint.parent] @ _origin_pose(joint.origin)
        if joint.name in locked:
            prismatic = joint.type == "prismatic"
            axis = _joint_axis(joint, source)
            placement = placement @ joint_transform(axis, locked[joint.name], prismatic=prismatic)
        if joint.type == "fixed" or joint.name in locked:
            flat.link_body[link], flat.link_placement[link] = parent_body, placement
        elif joint.type in MULTI_DOF_JOINTS:
            flat.joints.extend(_multi_dof_rows(joint.name, joint.type, joint.child, parent_body,
                                               placement, len(flat.joints)))
            flat.link_body[link], flat.link_placement[link] = len(flat.joints) - 1, np.eye(4)
        else:
            flat.link_body[link], flat.link_placement[link] = len(flat.joints), np.eye(4)
            flat.joints.append(_moving_joint(joint, parent_body, placement, source))
    return flat


def _multi_dof_rows(name: str, kind: str, child: str, parent: int, placement: np.ndarray,
                    first: int) -> list[_MovingJoint]:
    """A floating or planar joint (`kind`) as one row per velocity coordinate (dynamics.tree),
    the first numbered `first`: the first at the joint's placement, each next at the identity
    in the one before, their subspaces the unit motions of the joint's velocity in the joint
    frame; the last row's body is the link `child`."""
    axes = {"floating": range(6), "planar": (0, 1, 5)}[kind]
    rows = []
    for k, (axis, suffix) in enumerate(zip(axes, MULTI_DOF_SUFFIXES[kind], strict=True)):
        subspace = np.zeros(6)
        subspace[axis] = 1.0
        last = k == len(axes) - 1
        rows.append(_MovingJoint(
            name=f"{name}_{suffix}", kind=kind, child=child if last else f"{name}_{suffix}",
            parent=parent if k == 0 else first + k - 1,
            placement=placement if k == 0 else np.eye(4), motion_subspace=subspace,
            lower=-np.inf, upper=np.inf, velocity_limit=np.inf, effort_limit=np.inf,
            damping=0.0, friction=0.0,
        ))
    return rows


def _body_inertias(flat: _Flattened, inertials: Mapping[str, _Inertial | None]) -> np.ndarray:
    """(n, 6, 6) spatial inertia of each moving body, its fixed-attached links merged in."""
    inertias = np.zeros((len(flat.joints), 6, 6))
    for link, inertial in inertials.items():
        body = flat.link_body[link]
        if body >= 0 and inertial is not None:
            inertias[body] += placed_spatial_inertia(
                inertial.mass, inertial.com_pose, inertial.inertia, flat.link_placement[link]
            )
    return inertias


def _moving_joint(joint: Joint, parent: int, placement: np.ndarray, source: str) -> _MovingJoint:
    axis = _joint_axis(joint, source)
    zero = np.zeros(3)
    subspace = np.concatenate([axis, zero] if joint.type == "prismatic" else [zero, axis])
    limit, dynamics = joint.limit, joint.dynamics
    has_position_limits = limit is not None and joint.type != "continuous"
    return _MovingJoint(
        name=joint.name,
        kind=joint.type,
        child=joint.child,
        parent=parent,
        placement=placement,
        motion_subspace=subspace,
        lower=float(limit.lower) if has_position_limits else -np.inf,
        upper=float(limit.upper) if has_position_limits else np.inf,
        velocity_limit=float(limit.velocity) if limit is not None else np.inf,
        effort_limit=float(limit.effort) if limit is not None else np.inf,
        damping=float(dynamics.damping or 0.0) if dynamics is not None else 0.0,
        friction=float(dynamics.friction or 0.0) if dynamics is not None else 0.0,
    )
