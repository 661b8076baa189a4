"""Random robots as URDF text: chains and trees to test and benchmark the dynamics on.

Every generated robot has a massless fixed base ``base_link``, exactly ``n`` moving joints
(``joint_0`` … ``joint_{n-1}``, each moving ``link_i``) mixing revolute, continuous and prismatic
kinds, and about ``fixed_fraction * n`` extra links (``fixed_k``, attached by ``fixed_k_joint``),
half of them massive, half without ``<inertial>`` (tool frames), some inserted between two moving
joints and some hanging off as leaves, so that a loader's fixed-link merging is exercised.

Joint origins, axes, limits, masses and inertias are drawn from ``numpy.random.default_rng(seed)``:
the same arguments always give the same text. Numbers are written with 17 significant digits, so
every parser reads exactly the values that were drawn.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

_OFFSET = 0.3  # m, half-range of each joint origin coordinate
_COM_OFFSET = 0.1  # m, half-range of each centre-of-mass coordinate
_MOVING_MASS = (0.5, 5.0)  # kg
_FIXED_MASS = (0.1, 1.0)  # kg
_BODY_SIZE = (0.05, 0.4)  # m, edge lengths (box) or diameters (ellipsoid) of the mass shape
_CONTINUOUS_SHARE = 1 / 3  # of the non-prismatic joints
_ALIGNED_AXIS_SHARE = 0.25  # joints whose axis is ±x, ±y or ±z
_DYNAMICS_SHARE = 0.3  # joints with a <dynamics> tag
_MASSLESS_FIXED_SHARE = 0.5  # fixed links without <inertial>
_INLINE_FIXED_SHARE = 0.5  # chain fixed links inserted between moving joints (rest are leaves)


def random_chain_urdf(
    n: int,
    *,
    seed: int = 0,
    prismatic_fraction: float = 0.25,
    fixed_fraction: float = 0.2,
    name: str | None = None,
) -> str:
    """URDF of a random serial chain with exactly ``n`` moving joints.

    Each moving joint attaches to the current tip of the chain. Fixed links either extend the
    tip (the next moving joint then hangs from a fixed link) or hang off a random earlier link.

    Args:
        n: number of moving joints, at least 1.
        seed: seed of ``numpy.random.default_rng``; the output is a function of all arguments.
        prismatic_fraction: share of prismatic joints (rounded to a count); the rest are
            revolute and continuous.
        fixed_fraction: extra fixed links per moving joint (rounded to a count).
        name: robot name, ``random_chain_{n}_seed{seed}`` by default.

    Returns:
        The URDF document as a string, without an XML declaration.
    """
    builder = _RobotBuilder(
        name or f"random_chain_{n}_seed{seed}", n, seed, prismatic_fraction, fixed_fraction
    )
    tip = builder.root
    for event in builder.events():
        if event == "moving":
            tip = builder.add_moving_link(tip)
        elif builder.rng.random() < _INLINE_FIXED_SHARE:
            tip = builder.add_fixed_link(tip)
        else:
            builder.add_fixed_link(builder.random_link())
    return builder.to_xml()


def random_tree_urdf(
    n: int,
    *,
    seed: int = 0,
    prismatic_fraction: float = 0.25,
    fixed_fraction: float = 0.2,
    max_children: int = 3,
    name: str | None = None,
) -> str:
    """URDF of a random kinematic tree with exactly ``n`` moving joints.

    Each new joint, moving or fixed, attaches to a random existing link that has fewer than
    ``max_children`` children, so the tree branches (from ``max_children >= 2``).

    Args:
        n, seed, prismatic_fraction, fixed_fraction: as ``random_chain_urdf``'s.
        max_children: most child joints (moving or fixed) any link gets, at least 1.
        name: robot name, ``random_tree_{n}_seed{seed}`` by default.

    Returns:
        The URDF document as a string, without an XML declaration.
    """
    builder = _RobotBuilder(
        name or f"random_tree_{n}_seed{seed}",
        n,
        seed,
        prismatic_fraction,
        fixed_fraction,
        max_children,
    )
    for event in builder.events():
        parent = builder.random_link()
        if event == "moving":
            builder.add_moving_link(parent)
        else:
            builder.add_fixed_link(parent)
    return builder.to_xml()


class _RobotBuilder:
    """Grows one random robot link by link and writes it as URDF."""

    def __init__(
        self,
        name: str,
        n: int,
        seed: int,
        prismatic_fraction: float,
        fixed_fraction: float,
        max_children: int | None = None,
    ) -> None:
        if n < 1:
            raise ValueError(f"a random robot needs at least one moving joint, got n={n}")
        for label, fraction in (
            ("prismatic_fraction", prismatic_fraction),
            ("fixed_fraction", fixed_fraction),
        ):
            if not 0.0 <= fraction <= 1.0:
                raise ValueError(f"{label} must be in [0, 1], got {fraction}")
        if max_children is not None and max_children < 1:
            raise ValueError(f"max_children must be at least 1, got {max_children}")
        self.rng = np.random.default_rng(seed)
        self.root = "base_link"
        self._kinds = _moving_joint_kinds(self.rng, n, prismatic_fraction)
        self._n_fixed = round(fixed_fraction * n)
        self._max_children = max_children
        self._robot = ET.Element("robot", name=name)
        ET.SubElement(self._robot, "link", name=self.root)
        self._open_links = [self.root]  # links that may still get a child
        self._children = {self.root: 0}
        self._moving_added = 0
        self._fixed_added = 0

    def events(self) -> list[str]:
        """The order in which moving and fixed links are added: "moving" or "fixed" each."""
        events = np.array(["moving"] * len(self._kinds) + ["fixed"] * self._n_fixed)
        return [str(event) for event in self.rng.permutation(events)]

    def random_link(self) -> str:
        """A uniformly drawn existing link that has room for another child."""
        return self._open_links[self.rng.integers(len(self._open_links))]

    def add_moving_link(self, parent: str) -> str:
        """Attach the next moving joint and its massive link to ``parent``; return the link name."""
        index = self._moving_added
        self._moving_added += 1
        kind = self._kinds[index]
        link, joint = self._add_link(f"link_{index}", f"joint_{index}", kind, parent)
        ET.SubElement(joint, "axis", xyz=_numbers(_random_axis(self.rng)))
        _add_limit(joint, kind, self.rng)
        if self.rng.random() < _DYNAMICS_SHARE:
            damping, friction = self.rng.uniform(0.0, 0.5, size=2)
            ET.SubElement(joint, "dynamics", damping=_number(damping), friction=_number(friction))
        self._add_inertial(link, self.rng.uniform(*_MOVING_MASS))
        return link.attrib["name"]

    def add_fixed_link(self, parent: str) -> str:
        """Attach a new link to ``parent`` by a fixed joint, massive or not; return its name."""
        name = f"fixed_{self._fixed_added}"
        self._fixed_added += 1
        link, _ = self._add_link(name, f"{name}_joint", "fixed", parent)
        if self.rng.random() >= _MASSLESS_FIXED_SHARE:
            self._add_inertial(link, self.rng.uniform(*_FIXED_MASS))
        return name

    def to_xml(self) -> str:
        """The robot as indented URDF text."""
        ET.indent(self._robot)
        return ET.tostring(self._robot, encoding="unicode") + "\n"

    def _add_link(
        self, child: str, joint_name: str, kind: str, parent: str
    ) -> tuple[ET.Element, ET.Element]:
        link = ET.SubElement(self._robot, "link", name=child)
        joint = ET.SubElement(self._robot, "joint", name=joint_name, type=kind)
        xyz = self.rng.uniform(-_OFFSET, _OFFSET, size=3)
        rpy = self.rng.uniform(-np.pi, np.pi, size=3)
        ET.SubElement(joint, "origin", xyz=_numbers(xyz), rpy=_numbers(rpy))
        ET.SubElement(joint, "parent", link=parent)
        ET.SubElement(joint, "child", link=child)
        self._open_links.append(child)
        self._children[child] = 0
        self._children[parent] += 1
        if self._max_children is not None and self._children[parent] >= self._max_children:
            self._open_links.remove(parent)
        return link, joint

    def _add_inertial(self, link: ET.Element, mass: float) -> None:
        inertial = ET.SubElement(link, "inertial")
        com = self.rng.uniform(-_COM_OFFSET, _COM_OFFSET, size=3)
        rpy = self.rng.uniform(-np.pi, np.pi, size=3)
        ET.SubElement(inertial, "origin", xyz=_numbers(com), rpy=_numbers(rpy))
        ET.SubElement(inertial, "mass", value=_number(mass))
        inertia = _random_rotated_inertia(self.rng, mass)
        ET.SubElement(
            inertial,
            "inertia",
            ixx=_number(inertia[0, 0]),
            ixy=_number(inertia[0, 1]),
            ixz=_number(inertia[0, 2]),
            iyy=_number(inertia[1, 1]),
            iyz=_number(inertia[1, 2]),
            izz=_number(inertia[2, 2]),
        )


def with_joint_kinds(urdf: str, kinds: dict[str, str]) -> str:
    """The URDF with the named joints made floating or planar (its plane the joint frame's
    x-y plane, as URDF and Pinocchio's JointModelPlanar take it), their limits dropped.

    Raises:
        ValueError: a name that is not a joint of the URDF, or a kind that is neither.
    """
    root = ET.fromstring(urdf)
    joints = {joint.get("name"): joint for joint in root.iter("joint")}
    for name, kind in kinds.items():
        if name not in joints or kind not in ("floating", "planar"):
            raise ValueError(f"with_joint_kinds: no joint {name!r} to make {kind!r}")
        joint = joints[name]
        joint.set("type", kind)
        for tag in ("axis", "limit", "dynamics"):
            for element in joint.findall(tag):
                joint.remove(element)
        if kind == "planar":
            ET.SubElement(joint, "axis", xyz="0 0 1")
    return ET.tostring(root, encoding="unicode")


def with_root_joint(urdf: str, kind: str, xyz: str = "0 0 0", rpy: str = "0 0 0") -> str:
    """The URDF with a massless link ``world`` as its root and a floating or planar joint
    ``root_joint`` (at `xyz`, `rpy`) from it to the URDF's root link."""
    root = ET.fromstring(urdf)
    children = {child.get("link") for child in root.iter("child")}
    base = next(name for link in root.iter("link")
                if (name := link.get("name")) is not None and name not in children)
    ET.SubElement(root, "link", name="world")
    joint = ET.SubElement(root, "joint", name="root_joint", type="fixed")
    ET.SubElement(joint, "origin", xyz=xyz, rpy=rpy)
    ET.SubElement(joint, "parent", link="world")
    ET.SubElement(joint, "child", link=base)
    return with_joint_kinds(ET.tostring(root, encoding="unicode"), {"root_joint": kind})


def _moving_joint_kinds(rng: np.random.Generator, n: int, prismatic_fraction: float) -> list[str]:
    """``n`` joint kinds: ``round(prismatic_fraction * n)`` prismatic, the rest rotational."""
    n_prismatic = round(prismatic_fraction * n)
    rotational = np.where(
        rng.random(n - n_prismatic) < _CONTINUOUS_SHARE, "continuous", "revolute"
    ).tolist()
    kinds = np.array(["prismatic"] * n_prismatic + rotational)
    return [str(kind) for kind in rng.permutation(kinds)]


def _random_axis(rng: np.random.Generator) -> np.ndarray:
    """A unit axis: sometimes ±x, ±y or ±z, otherwise uniformly distributed on the sphere."""
    if rng.random() < _ALIGNED_AXIS_SHARE:
        axis = np.zeros(3)
        axis[rng.integers(3)] = rng.choice((-1.0, 1.0))
        return axis
    axis = rng.standard_normal(3)
    return axis / np.linalg.norm(axis)


def _add_limit(joint: ET.Element, kind: str, rng: np.random.Generator) -> None:
    """Velocity and effort limits, plus finite position limits unless the joint is continuous."""
    limit = ET.SubElement(
        joint,
        "limit",
        effort=_number(rng.uniform(10.0, 200.0)),
        velocity=_number(rng.uniform(1.0, 10.0)),
    )
    if kind == "revolute":
        limit.set("lower", _number(rng.uniform(-np.pi, -0.5)))
        limit.set("upper", _number(rng.uniform(0.5, np.pi)))
    elif kind == "prismatic":
        limit.set("lower", _number(rng.uniform(-0.5, -0.05)))
        limit.set("upper", _number(rng.uniform(0.05, 0.5)))


def _random_rotated_inertia(rng: np.random.Generator, mass: float) -> np.ndarray:
    """Rotational inertia (3x3, about the COM) of a random solid box or ellipsoid.

    The shape is turned by a random rotation, so the tensor has off-diagonal terms; it is
    positive definite and its principal moments satisfy the triangle inequality.
    """
    a, b, c = rng.uniform(*_BODY_SIZE, size=3) ** 2
    factor = 1 / 12 if rng.random() < 0.5 else 1 / 20  # box of edges, ellipsoid of diameters
    principal = mass * factor * np.array([b + c, a + c, a + b])
    rotation, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    inertia = rotation @ np.diag(principal) @ rotation.T
    symmetric: np.ndarray = (inertia + inertia.T) / 2
    return symmetric


def _number(x: float) -> str:
    return f"{float(x):.17g}"


def _numbers(values: np.ndarray) -> str:
    return " ".join(_number(x) for x in values)
