"""Random URDF robots: deterministic, well-formed, physically valid in two parsers."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from urdf_parser_py.urdf import URDF

from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf

GENERATORS = {"chain": random_chain_urdf, "tree": random_tree_urdf}
MOVING = ("revolute", "continuous", "prismatic")


def parse(xml: str) -> URDF:
    return URDF.from_xml_string(xml)


def moving_joints(robot: URDF) -> list:
    return [joint for joint in robot.joints if joint.type in MOVING]


def symmetric(upper: np.ndarray) -> np.ndarray:
    return np.triu(upper) + np.triu(upper, 1).T


@pytest.mark.parametrize("kind", GENERATORS)
def test_same_seed_gives_the_same_robot(kind: str) -> None:
    generate = GENERATORS[kind]
    assert generate(40, seed=7) == generate(40, seed=7)
    assert generate(40, seed=7) != generate(40, seed=8)
    assert not generate(3).startswith("<?xml")


@pytest.mark.parametrize("kind", GENERATORS)
def test_exact_joint_count_and_a_mix_of_kinds(kind: str) -> None:
    robot = parse(GENERATORS[kind](200, seed=1, prismatic_fraction=0.25))
    joints = moving_joints(robot)
    kinds = [joint.type for joint in joints]
    assert len(joints) == 200
    assert kinds.count("prismatic") == 50
    assert kinds.count("revolute") > 50 and kinds.count("continuous") > 30
    for joint in joints:
        axis = np.array(joint.axis)
        assert np.linalg.norm(axis) == pytest.approx(1.0, abs=1e-15)
        assert joint.limit.velocity > 0 and joint.limit.effort > 0
        if joint.type != "continuous":
            assert -np.inf < joint.limit.lower < 0 < joint.limit.upper < np.inf
    axes = np.array([joint.axis for joint in joints])
    assert np.sum(np.count_nonzero(axes, axis=1) == 3) > 100  # mostly not along x, y or z
    assert np.sum(np.count_nonzero(axes, axis=1) == 1) > 10  # but some are
    assert sum(joint.dynamics is not None for joint in joints) > 20


@pytest.mark.parametrize("kind", GENERATORS)
def test_fixed_links_some_massless(kind: str) -> None:
    robot = parse(GENERATORS[kind](100, seed=2, fixed_fraction=0.2))
    fixed = [joint for joint in robot.joints if joint.type == "fixed"]
    fixed_links = [robot.link_map[joint.child] for joint in fixed]
    assert len(fixed) == 20
    assert len(robot.links) == 1 + 100 + 20
    assert any(link.inertial is None for link in fixed_links)
    assert any(link.inertial is not None for link in fixed_links)
    assert any(robot.link_map[joint.parent] in fixed_links for joint in moving_joints(robot))


@pytest.mark.parametrize("kind", GENERATORS)
def test_moving_links_have_valid_mass_and_inertia(kind: str) -> None:
    robot = parse(GENERATORS[kind](100, seed=3))
    for joint in moving_joints(robot):
        inertial = robot.link_map[joint.child].inertial
        i = inertial.inertia
        tensor = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])
        moments = np.linalg.eigvalsh(tensor)
        assert 0.5 <= inertial.mass <= 5.0
        assert moments[0] > 0
        assert moments[0] + moments[1] >= moments[2] * (1 - 1e-12)  # triangle inequality
        assert np.count_nonzero(inertial.origin.rpy) == 3


@pytest.mark.parametrize(
    ("kind", "n"),
    [
        ("chain", 1),
        ("tree", 2),
        ("chain", 7),
        ("tree", 33),
        ("chain", 100),
        ("tree", 128),
        ("chain", 256),
    ],
)
def test_pinocchio_mass_matrix_is_spd(kind: str, n: int) -> None:
    xml = GENERATORS[kind](n, seed=n)
    model = pin.buildModelFromXML(xml)
    data = model.createData()
    assert model.njoints == n + 1 and model.nv == n
    pin.seed(n)
    for _ in range(2):
        mass = symmetric(pin.crba(model, data, pin.randomConfiguration(model)))
        np.linalg.cholesky(mass)  # raises unless positive definite


@pytest.mark.parametrize("kind", GENERATORS)
def test_1024_joints_load_in_both_parsers_with_positive_definite_bodies(kind: str) -> None:
    # pin.Data allocates four nv³ tensors (second-order derivatives): ~34 GB at nv = 1024, so
    # crba cannot run here. Positive-definite spatial inertias of all bodies make M(q) SPD for
    # every q, which is what the mass-matrix test checks at smaller sizes.
    xml = GENERATORS[kind](1024, seed=5)
    model = pin.buildModelFromXML(xml)
    assert model.njoints == 1025 and model.nv == 1024
    smallest = min(np.linalg.eigvalsh(inertia.matrix())[0] for inertia in model.inertias[1:])
    assert smallest > 0
    assert len(moving_joints(parse(xml))) == 1024


def test_trees_branch_and_chains_do_not() -> None:
    tree = parse(random_tree_urdf(64, seed=4, max_children=3))
    moving_children = [joint.parent for joint in moving_joints(tree)]
    all_children = [joint.parent for joint in tree.joints]
    assert max(moving_children.count(link) for link in moving_children) >= 2
    assert max(all_children.count(link) for link in all_children) <= 3

    chain = pin.buildModelFromXML(random_chain_urdf(64, seed=4))
    parents = list(chain.parents)[1:]
    assert parents == list(range(64))


@pytest.mark.parametrize(
    "kwargs", [{"n": 0}, {"n": 3, "prismatic_fraction": 1.5}, {"n": 3, "fixed_fraction": -0.1}]
)
def test_invalid_arguments_are_rejected(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        random_chain_urdf(**kwargs)
    with pytest.raises(ValueError, match="max_children"):
        random_tree_urdf(3, max_children=0)
