"""Identified dynamic parameters π written back into the URDF the model was loaded from.

The dynamics see one rigid body per moving joint: its child link with every link fixed (or
locked) to it. Identification finds that body as a whole, so its inertia goes to the
``<inertial>`` of the joint's child link and the inertials of the links merged into it give way
to a comment. Viscous and Coulomb friction become the joints' ``<dynamics damping friction>``;
armature and torque offsets have no URDF element and are left to the caller.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from typing import Any, cast
from xml.parsers import expat

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.model.inertia import inertia_about_com
from robodyn_ros.model.inertial_parameters import (
    body_parameters,
    model_with_parameters,
    parameter_names,
)
from robodyn_ros.model.model import MULTI_DOF_JOINTS, Model, ModelError

__all__ = ["identified_urdf"]

_DEFAULT_STEP = "  "  # one level of indentation when the document shows none
# <inertia> attribute → entry of the 3x3 rotational inertia.
_INERTIA_ENTRIES = {
    "ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2), "izz": (2, 2),
}


def identified_urdf(
    urdf: str, model: Model, parameters: ArrayLike, *, header: str | None = None
) -> str:
    """The URDF with the inertias and friction of identified parameters π.

    Body i's inertia goes to the ``<inertial>`` of its link ``model.body_links[i]`` (created
    when the link has none): ``<mass>``, ``<origin>`` at the centre of mass in the link frame
    with ``rpy="0 0 0"``, and ``<inertia>`` about the centre of mass in the link axes; a
    massless body gets mass 0 and its rotational inertia. Every other link of the body (fixed
    or locked to it) has its ``<inertial>`` replaced by a comment naming the body link, since
    identification sees only the rigid body as a whole; links of the fixed base are left as
    they are. Each moving joint of the model gets ``<dynamics damping friction>`` (created
    when absent, its other attributes kept) from π's viscous and Coulomb friction; armature
    and offsets are not URDF quantities and are left out.

    Everything else is kept: element order, other attributes, comments, and the text before
    and after the ``<robot>`` element (XML declaration, leading comments) verbatim. The rest
    is written as ``xml.etree.ElementTree`` does: attributes in double quotes, ``<a />`` for
    an empty element, namespace declarations only where used (prefixes kept). New elements
    are indented like their neighbours. Numbers have the digits to read back exactly.

    A link behind a locked joint sits in its body where the locked position puts it, and the
    whole body's inertia goes to the body link; the URDF so written describes the robot with
    the joint at that position only: unlocked, or locked elsewhere, the link carries no mass.
    Likewise the loads a model carried (``Model.payloads``) are part of π's bodies and end up
    in their links.

    Args:
        urdf: the URDF text the model was loaded from (xacro already expanded).
        model: its Model, with locked joints and mimic joints as it was loaded.
        parameters: π in the layout of ``robodyn_ros.model.inertial_parameters``: ten per body,
            about the body origin in body axes, then four per joint (armature, viscous,
            Coulomb, offset).
        header: a comment put right after the ``<robot>`` start tag, e.g. where and when the
            values were identified; none when None.

    Returns:
        The URDF text.

    Raises:
        ModelError: π is not ten numbers per body and four per joint, all finite, or has a
            body no rigid body can be or a negative friction (the message names the link or
            joint); the text is not well-formed XML with a ``<robot>`` root, or lacks a link
            or joint of the model (the message names them).
    """
    identified = _identified_model(model, parameters)
    root = _parsed_robot(urdf, model.name)
    _require_massless_inner_rows(model, identified)
    joint_rows = [joint.v.stop - 1 for joint in model.configuration_joints]
    links = _named_children(root, "link", model.frame_names, model.name)
    one_dof = [row for row in joint_rows if model.joint_kinds[row] not in MULTI_DOF_JOINTS]
    joints = _named_children(root, "joint", [model.joint_names[row] for row in one_dof],
                             model.name)
    step = _indentation_step(root)
    for row in joint_rows:
        link = links[model.body_links[row]]
        _write_inertial(link, _line_before(root, link), identified.spatial_inertia[row], step)
    for frame, body in zip(model.frame_names, model.frame_body.tolist(), strict=True):
        if body >= 0 and frame != model.body_links[body]:
            _replace_merged_inertial(links[frame], model.body_links[body])
    for row in one_dof:
        joint = joints[model.joint_names[row]]
        _write_dynamics(joint, _line_before(root, joint), identified.damping[row],
                        identified.friction[row], step)
    if header is not None:
        _insert(root, 0, _comment(header), "\n", step)
    before, after = _text_around_root(urdf)
    _keep_namespace_prefixes(urdf)
    return before + ET.tostring(root, encoding="unicode") + after


def _require_massless_inner_rows(model: Model, identified: Model) -> None:
    """A ModelError unless the inner rows of a multi-DOF joint (Model.inner_rows), which have
    no link of their own, carry no mass in π."""
    heavy = [model.joint_names[row] for row in np.flatnonzero(model.inner_rows)
             if np.abs(identified.spatial_inertia[row]).max() > 0.0]
    if heavy:
        raise ModelError(f"robot '{model.name}': π gives the rows {', '.join(heavy)} a body; "
                         "a multi-DOF joint's body is on its last row, the others carry none")


def _identified_model(model: Model, parameters: ArrayLike) -> Model:
    """model_with_parameters(model, π), with the entries of π that are not finite named."""
    try:
        values = np.asarray(parameters, dtype=float)
    except (TypeError, ValueError):  # not numbers, or ragged: model_with_parameters says so
        values = np.empty(0)
    names = parameter_names(model)
    if values.shape == (len(names),) and not np.isfinite(values).all():
        invalid = ", ".join(np.array(names)[~np.isfinite(values)])
        raise ModelError(f"robot '{model.name}': parameters {invalid} are not finite numbers")
    return model_with_parameters(model, parameters)


# --- the document -----------------------------------------------------------------------------


def _parsed_robot(urdf: str, robot: str) -> ET.Element:
    """The ``<robot>`` element of the text, comments included."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    try:
        root = ET.fromstring(urdf, parser=parser)
    except ET.ParseError as error:
        raise ModelError(f"robot '{robot}': the URDF is not well-formed XML: {error}") from None
    if root.tag != "robot":
        raise ModelError(f"robot '{robot}': the URDF's root element is <{root.tag}>, not <robot>")
    return root


def _named_children(
    root: ET.Element, tag: str, names: Iterable[str], robot: str
) -> dict[str, ET.Element]:
    """The ``<tag>`` children of the robot by name; ModelError naming those the model has and
    the text lacks."""
    found = {element.get("name", ""): element for element in root.findall(tag)}
    missing = [name for name in names if name not in found]
    if missing:
        raise ModelError(
            f"robot '{robot}': the URDF has no {tag} {', '.join(map(repr, missing))} of the "
            "model; give the URDF text the model was loaded from"
        )
    return found


def _text_around_root(urdf: str) -> tuple[str, str]:
    """The text before the root element's start tag and after its end tag, verbatim."""
    parser = expat.ParserCreate()
    offsets: list[int] = []  # UTF-8 byte offsets of the root's start and end tags
    depth = 0

    def start(_name: str, _attributes: dict[str, str]) -> None:
        nonlocal depth
        if depth == 0:
            offsets.append(parser.CurrentByteIndex)
        depth += 1

    def end(_name: str) -> None:
        nonlocal depth
        depth -= 1
        if depth == 0:
            offsets.append(parser.CurrentByteIndex)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.Parse(urdf, True)
    data = urdf.encode()
    start_tag, end_tag = offsets
    return data[:start_tag].decode(), data[data.index(b">", end_tag) + 1 :].decode()


def _keep_namespace_prefixes(urdf: str) -> None:
    """Register the document's namespace prefixes (xacro:, gazebo extensions) with
    ElementTree, so that it writes them by their names instead of ns0, ns1, …"""
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start-ns",))
    parser.feed(urdf)
    for event in parser.read_events():
        prefix, uri = cast("tuple[str, tuple[str, str]]", event)[1]  # ("start-ns", (p, uri))
        if prefix and not re.fullmatch(r"ns\d+", prefix):
            ET.register_namespace(prefix, uri)


def _comment(text: str) -> ET.Element[Any]:
    """An XML comment of the text; "--", which no comment may hold, becomes "- -"."""
    return ET.Comment(" " + re.sub(r"-(?=-)", "- ", text) + " ")


# --- layout -----------------------------------------------------------------------------------


def _line_of(gap: str | None) -> str | None:
    """The line break and indentation that whitespace ends with ("\\n    "); None when it has
    no line break (the element shares the line of what precedes it)."""
    if gap is None or "\n" not in gap:
        return None
    return "\n" + gap.rpartition("\n")[2]


def _line_before(parent: ET.Element, child: ET.Element) -> str | None:
    """The line break and indentation in front of a child element (see _line_of)."""
    index = list(parent).index(child)
    return _line_of(parent.text if index == 0 else parent[index - 1].tail)


def _indentation_step(root: ET.Element) -> str:
    """One level of the document's indentation: that of the robot's children."""
    line = _line_of(root.text)
    return line[1:] if line and line[1:] else _DEFAULT_STEP


def _insert(
    parent: ET.Element, index: int, child: ET.Element[Any], parent_line: str | None, step: str
) -> None:
    """Insert a leaf element at `index` of `parent`, on a line of its own at its siblings'
    indentation (or one step in from `parent_line`, the line of `parent`, when it has no
    children) unless the document runs them on one line."""
    line = _line_of(parent.text) if len(parent) else (
        None if parent_line is None else parent_line + step
    )
    if line is not None:
        if index == 0:
            child.tail = parent.text if len(parent) else parent_line
            parent.text = line
        else:
            child.tail, parent[index - 1].tail = parent[index - 1].tail, line
    parent.insert(index, child)


# --- values -----------------------------------------------------------------------------------


def _number(value: float) -> str:
    """The shortest decimal that reads back as the same double."""
    return repr(float(value))


def _numbers(values: Sequence[float] | np.ndarray) -> str:
    return " ".join(map(_number, values))


def _write_inertial(
    link: ET.Element, link_line: str | None, spatial_inertia: np.ndarray, step: str
) -> None:
    """Set the link's ``<inertial>`` to a body's 6x6 inertia about the link frame origin."""
    mass = float(spatial_inertia[0, 0])
    first_moment = body_parameters(spatial_inertia)[1:4]
    com = first_moment / mass if mass > 0.0 else np.zeros(3)
    inertia = inertia_about_com(spatial_inertia)
    attributes = {
        "origin": {"xyz": _numbers(com), "rpy": "0 0 0"},
        "mass": {"value": _number(mass)},
        "inertia": {name: _number(inertia[entry]) for name, entry in _INERTIA_ENTRIES.items()},
    }
    inertial = link.find("inertial")
    if inertial is None:
        inertial = ET.Element("inertial")
        _insert(link, 0, inertial, link_line, step)
    inertial_line = _line_before(link, inertial)
    position = 0  # where the next missing child goes: after the one before it
    for tag, values in attributes.items():
        element = inertial.find(tag)
        if element is None:
            element = ET.Element(tag)
            _insert(inertial, position, element, inertial_line, step)
        element.attrib.update(values)
        position = list(inertial).index(element) + 1


def _replace_merged_inertial(link: ET.Element, body_link: str) -> None:
    """Put a comment in place of the ``<inertial>`` of a link merged into `body_link`'s body."""
    inertial = link.find("inertial")
    if inertial is None:
        return
    note = _comment(
        f"inertial merged into link '{body_link}' by identification, which sees only the "
        "rigid body as a whole"
    )
    note.tail = inertial.tail
    index = list(link).index(inertial)
    link.remove(inertial)
    link.insert(index, note)


def _write_dynamics(
    joint: ET.Element, joint_line: str | None, damping: float, friction: float, step: str
) -> None:
    """Set the joint's ``<dynamics damping friction>``, appending the element when absent."""
    dynamics = joint.find("dynamics")
    if dynamics is None:
        dynamics = ET.Element("dynamics")
        _insert(joint, len(joint), dynamics, joint_line, step)
    dynamics.set("damping", _number(damping))
    dynamics.set("friction", _number(friction))
