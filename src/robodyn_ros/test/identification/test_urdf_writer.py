"""identified_urdf: identified parameters written into a URDF load back as the identified robot
(its parameters, mass matrix and inverse dynamics) on real and generated robots, with fixed,
locked and mimic joints; the rest of the document is kept, fixed links' inertials give way to
a comment naming the body link, and bad parameters or a URDF without the model's links are
refused naming them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.identification.urdf_writer import identified_urdf
from robodyn_ros.model import ModelError
from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf
from robodyn_ros.model.inertia import inertia_about_com
from robodyn_ros.model.inertial_parameters import (
    ARMATURE,
    COULOMB,
    PARAMETERS_PER_BODY,
    PARAMETERS_PER_JOINT,
    VISCOUS,
)
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.example_robots import PANDA_FINGERS
from robodyn_ros.testing.perturbed_robot import perturbed_parameters

from helpers.robots import PANDA, with_mimic
from helpers.tolerances import assert_close

ERD_PANDA = example_robot_urdf("panda").read_text()
LOCKED_FINGERS = {"locked_joints": dict.fromkeys(PANDA_FINGERS, 0.0)}
ROBOTS = {  # name → URDF text, load options
    "bundled_panda": (PANDA, {}),
    "panda_locked_fingers": (ERD_PANDA, LOCKED_FINGERS),
    "panda_mimic_fingers": (ERD_PANDA, {}),
    "ur5": (example_robot_urdf("ur5").read_text(), {}),
    "kinova": (example_robot_urdf("kinova").read_text(), {}),
    "chain8": (random_chain_urdf(8, seed=3), {}),
    "tree10": (random_tree_urdf(10, seed=5), {}),
    "chain6_mimic": (with_mimic(random_chain_urdf(6, seed=4), "joint_3", "joint_2", -0.7, 0.1),
                     {}),
}
HEADER = "inertial and dynamics values identified by robodyn bag identify from run.mcap"
MERGED = "inertial merged into link '{}' by identification"


def bodies(parameters: np.ndarray, joints: int) -> np.ndarray:
    return parameters[: PARAMETERS_PER_BODY * joints].reshape(joints, PARAMETERS_PER_BODY)


def joint_parameters(parameters: np.ndarray, joints: int) -> np.ndarray:
    return parameters[PARAMETERS_PER_BODY * joints :].reshape(joints, PARAMETERS_PER_JOINT)


def expect_same_bodies(actual: np.ndarray, expected: np.ndarray, links: tuple[str, ...]) -> None:
    """Each body's ten parameters within 1e-9 of that body's largest one."""
    for link, ours, reference in zip(links, actual, expected, strict=True):
        error = np.abs(ours - reference).max()
        assert error <= 1e-9 * np.abs(reference).max(), f"body of {link}: {ours} ≠ {reference}"


def link_element(text: str, name: str) -> ET.Element:
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    link = ET.fromstring(text, parser=parser).find(f"link[@name='{name}']")
    assert link is not None, name
    return link


def comments(element: ET.Element) -> list[str]:
    return [str(child.text) for child in element if child.tag is ET.Comment]


@pytest.mark.parametrize("name", ROBOTS)
def test_the_written_urdf_loads_as_the_identified_robot(name: str) -> None:
    urdf, options = ROBOTS[name]
    robot = Robot.from_urdf_string(urdf, **options)
    model, n = robot.model, robot.model.nv
    parameters = perturbed_parameters(robot, seed=7)
    text = identified_urdf(urdf, model, parameters)
    armature = dict(zip(model.joint_names, joint_parameters(parameters, n)[:, ARMATURE],
                        strict=True))
    reloaded = Robot.from_urdf_string(text, strict_inertia=True, armature=armature, **options)
    assert reloaded.model.body_links == model.body_links
    expect_same_bodies(bodies(reloaded.inertial_parameters(), n), bodies(parameters, n),
                       model.body_links)
    joints = joint_parameters(parameters, n)
    np.testing.assert_array_equal(reloaded.model.damping, joints[:, VISCOUS])
    np.testing.assert_array_equal(reloaded.model.friction, joints[:, COULOMB])
    identified = robot.with_inertial_parameters(parameters)
    rng = np.random.default_rng(11)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, 4, robot.nv))
    assert_close(reloaded.mass_matrix(q), identified.mass_matrix(q), "M(q)")
    assert_close(reloaded.inverse_dynamics(q, qd, qdd), identified.inverse_dynamics(q, qd, qdd),
                 "inverse dynamics")


def test_the_declaration_and_every_comment_survive_and_the_header_follows_the_robot_tag() -> None:
    robot = Robot.from_urdf_string(ERD_PANDA, **LOCKED_FINGERS)
    text = identified_urdf(ERD_PANDA, robot.model, perturbed_parameters(robot, seed=1),
                           header=HEADER)
    prolog = ERD_PANDA[: ERD_PANDA.index("<robot")]
    assert prolog.startswith("<?xml") and text.startswith(prolog)
    for comment in re.findall(r"<!--.*?-->", ERD_PANDA, flags=re.S):
        assert comment in text
    assert re.search(rf'<robot name="panda"[^>]*>\n    <!-- {HEADER} -->\n    <link ', text)


def test_a_header_with_a_double_hyphen_stays_a_well_formed_comment() -> None:
    robot = Robot.from_urdf_string(PANDA)
    text = identified_urdf(PANDA, robot.model, robot.inertial_parameters(),
                           header="from run--2.mcap -")
    assert "<!-- from run- -2.mcap - -->" in text
    ET.fromstring(text)


def test_fixed_and_locked_links_inertials_become_a_comment_naming_the_body_link() -> None:
    robot = Robot.from_urdf_string(ERD_PANDA, **LOCKED_FINGERS)
    text = identified_urdf(ERD_PANDA, robot.model, perturbed_parameters(robot, seed=2))
    for name in ("panda_link8", "panda_hand", "panda_hand_tcp", "panda_leftfinger",
                 "panda_rightfinger"):
        link = link_element(text, name)
        assert link.find("inertial") is None, name
        assert any(MERGED.format("panda_link7") in comment for comment in comments(link)), name
    base, original = link_element(text, "panda_link0"), link_element(ERD_PANDA, "panda_link0")
    assert [(e.tag, e.attrib) for e in base.iter()] == [(e.tag, e.attrib) for e in original.iter()]


def test_a_fixed_link_without_inertial_gets_no_comment() -> None:
    robot = Robot.from_urdf_string(PANDA)
    text = identified_urdf(PANDA, robot.model, perturbed_parameters(robot, seed=3))
    assert MERGED.format("panda_link7") in comments(link_element(text, "panda_hand"))[0]
    assert list(link_element(text, "panda_hand_tcp")) == []


def test_a_body_link_without_inertial_gets_one_on_lines_of_its_own() -> None:
    bare = re.sub(r'(<link name="panda_link3">)\s*<inertial>.*?</inertial>\s*', r"\1", PANDA,
                  flags=re.S)
    parameters = perturbed_parameters(Robot.from_urdf_string(PANDA), seed=4)
    model = Robot.from_urdf_string(bare).model
    text = identified_urdf(bare, model, parameters)
    assert re.search(r'<link name="panda_link3">\n    <inertial>\n      <origin [^>]*/>\n'
                     r'      <mass [^>]*/>\n      <inertia [^>]*/>\n    </inertial>\n  </link>',
                     text)
    reloaded = Robot.from_urdf_string(text, strict_inertia=True)
    expect_same_bodies(bodies(reloaded.inertial_parameters(), model.nv),
                       bodies(parameters, model.nv), model.body_links)


def test_a_massless_body_gets_mass_zero_and_its_rotational_inertia() -> None:
    urdf = random_chain_urdf(5, seed=6)
    robot = Robot.from_urdf_string(urdf)
    parameters = robot.inertial_parameters()
    inertia = inertia_about_com(robot.model.spatial_inertia[2])
    body = bodies(parameters, robot.nv)[2]  # a view of parameters
    body[:4] = 0.0
    body[4:] = inertia[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    text = identified_urdf(urdf, robot.model, parameters)
    inertial = link_element(text, robot.model.body_links[2]).find("inertial")
    assert inertial is not None
    assert [(e.tag, e.attrib) for e in inertial][:2] == [
        ("origin", {"xyz": "0.0 0.0 0.0", "rpy": "0 0 0"}), ("mass", {"value": "0.0"}),
    ]
    written = [float(inertial[2].attrib[k]) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")]
    assert written == inertia[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]].tolist()
    reloaded = Robot.from_urdf_string(text, strict_inertia=True)
    expect_same_bodies(bodies(reloaded.inertial_parameters(), robot.nv),
                       bodies(parameters, robot.nv), robot.model.body_links)


def test_a_missing_dynamics_element_is_created_and_other_attributes_kept() -> None:
    urdf = PANDA.replace('<dynamics damping="0.1" friction="0.2"/>', "", 1).replace(
        '<dynamics damping="0.1" friction="0.2"/>', '<dynamics damping="0.1" friction="0.2" '
        'spring_stiffness="3"/>', 1)
    robot = Robot.from_urdf_string(urdf)
    parameters = perturbed_parameters(robot, seed=5)
    text = identified_urdf(urdf, robot.model, parameters)
    joints = joint_parameters(parameters, robot.nv)
    root = ET.fromstring(text)
    for k, expected in ((0, {}), (1, {"spring_stiffness": "3"})):
        dynamics = root.find(f"joint[@name='panda_joint{k + 1}']/dynamics")
        assert dynamics is not None
        assert dynamics.attrib == {**expected, "damping": repr(float(joints[k, VISCOUS])),
                                   "friction": repr(float(joints[k, COULOMB]))}


@pytest.mark.parametrize(("change", "message"), [
    pytest.param(lambda p: p[:-1], r"98 finite numbers .* got shape \(97,\)", id="length"),
    pytest.param(lambda p: np.where(np.arange(p.size) == 12, np.nan, p),
                 r"panda_link2\.mcy are not finite", id="nan"),
    pytest.param(lambda p: np.where(np.arange(p.size) == 71, -1.0, p),
                 r"joint 'panda_joint1': viscous", id="negative_friction"),
])
def test_bad_parameters_are_refused_naming_what_is_wrong(change, message) -> None:
    robot = Robot.from_urdf_string(PANDA)
    with pytest.raises(ModelError, match=message):
        identified_urdf(PANDA, robot.model, change(robot.inertial_parameters()))


@pytest.mark.parametrize(("change", "message"), [
    pytest.param(lambda u: re.sub(r'<link name="panda_hand">.*?</link>', "", u, flags=re.S),
                 r"no link 'panda_hand'", id="missing_link"),
    pytest.param(lambda u: u.replace('<joint name="panda_joint3"', '<joint name="elbow"'),
                 r"no joint 'panda_joint3'", id="missing_joint"),
    pytest.param(lambda u: u.replace("</robot>", ""), r"not well-formed XML", id="broken_xml"),
])
def test_a_urdf_without_the_models_links_or_joints_is_refused_naming_them(change, message) -> None:
    robot = Robot.from_urdf_string(PANDA)
    with pytest.raises(ModelError, match=message):
        identified_urdf(change(PANDA), robot.model, robot.inertial_parameters())
