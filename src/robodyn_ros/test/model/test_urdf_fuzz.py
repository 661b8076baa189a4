"""Property-based fuzzing of robot descriptions: random mutations of valid URDFs (masses,
inertias, axes, origins, joint kinds, topology, massless subtrees, huge and tiny numbers).
Each load either raises ModelError, or gives a Robot whose every answer is finite and right:
M, τ and b match Pinocchio wherever Pinocchio loads the file (helpers.tolerances: 1e-9 of the
answer's scale, an answer of rounding size held to 1e-12 absolute), and q̈ and M⁻¹ either solve
M q̈ = τ − b (the dense reference) or raise SingularMassMatrixError naming joints. No other
exception, no garbage."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from robodyn_ros import ModelError, Robot
from robodyn_ros.errors import SingularMassMatrixError
from robodyn_ros.model.generate import random_chain_urdf, random_tree_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle
from robodyn_ros.testing.pinocchio_twin import Twin, twin_of

from helpers.tolerances import assert_close

BASES = [random_chain_urdf(5, seed=seed) for seed in (1, 2)] + [
    random_tree_urdf(7, seed=seed) for seed in (1, 2)
]
NUMBERS = st.sampled_from(
    [0.0, -1.0, 1e-300, 1e-13, 1e-6, 0.01, 0.3, 2.0, 1e5, 1e7, 1e300, float("nan")]
)
# An axis is a direction: any length but zero. Pinocchio's own normalisation overflows beyond
# about 1e150 (test_urdf checks such axes against the unit one instead).
AXIS_NUMBERS = st.sampled_from([0.0, -1.0, 1e-30, 0.5, 2.0, 1e30])
INERTIA_ATTRIBUTES = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
KINDS = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
RESIDUAL_RTOL = 1e-6


def _text(value: float) -> str:
    return repr(float(value))


@st.composite
def mutated_urdfs(draw) -> str:
    """A generated chain or tree with one to four random mutations."""
    document = ET.fromstring(draw(st.sampled_from(BASES)))
    links, joints = document.findall("link"), document.findall("joint")
    for _ in range(draw(st.integers(1, 4))):
        mutation = draw(st.sampled_from(
            ("mass", "inertia", "drop_inertial", "massless_subtree", "axis", "origin", "kind",
             "reparent")
        ))
        link = draw(st.sampled_from(links))
        joint = draw(st.sampled_from(joints))
        inertial = link.find("inertial")
        if mutation == "mass" and inertial is not None:
            inertial.find("mass").set("value", _text(draw(NUMBERS)))
        elif mutation == "inertia" and inertial is not None:
            attribute = draw(st.sampled_from(INERTIA_ATTRIBUTES))
            inertial.find("inertia").set(attribute, _text(draw(NUMBERS)))
        elif mutation == "drop_inertial" and inertial is not None:
            link.remove(inertial)
        elif mutation == "massless_subtree":
            for later in links[links.index(link):]:
                if later.find("inertial") is not None:
                    later.remove(later.find("inertial"))
        elif mutation in ("axis", "origin"):
            element = joint.find(mutation)
            if element is None:
                element = ET.SubElement(joint, mutation)
            numbers = AXIS_NUMBERS if mutation == "axis" else NUMBERS
            element.set("xyz", " ".join(_text(draw(numbers)) for _ in range(3)))
        elif mutation == "kind":
            kind = draw(st.sampled_from(KINDS))
            joint.set("type", kind)
            if kind == "planar" and draw(st.booleans()):  # else its axis refuses it, mostly
                element = joint.find("axis")
                if element is None:
                    element = ET.SubElement(joint, "axis")
                element.set("xyz", "0 0 1")
        elif mutation == "reparent":
            joint.find("parent").set("link", draw(st.sampled_from(links)).get("name"))
    return ET.tostring(document, encoding="unicode")


def load_or_refuse(xml: str) -> Robot | None:
    """The robot, or None when the description is refused with a ModelError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return Robot.from_urdf_string(xml)
        except ModelError as error:
            assert str(error).startswith("<string>: "), f"the error names no source: {error}"
            return None


def pinocchio_or_none(xml: str, robot: Robot) -> PinocchioOracle | Twin | None:
    """Pinocchio's model of the text: the oracle of one coordinate per joint, or for a robot
    with a free flyer or planar joint, the twin that Pinocchio parses the same text into."""
    try:
        if robot.nq != robot.nv:
            return twin_of(xml)
        return PinocchioOracle(xml, robot.joint_names, is_string=True)
    except Exception:  # Pinocchio refuses some descriptions robodyn_ros loads
        return None


def pinocchio_mass_matrix_and_bias(oracle: PinocchioOracle | Twin, q: np.ndarray,
                                   qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M(q) and b(q, q̇) by Pinocchio, in robodyn's order."""
    if isinstance(oracle, PinocchioOracle):
        return oracle.mass_matrix(q), oracle.bias_forces(q, qd)
    data = oracle.model.createData()
    q_pin, v_pin = oracle.q_pin(q), qd[oracle.v_order]
    M = pin.crba(oracle.model, data, q_pin)
    M = oracle.matrix_ours(np.triu(M) + np.triu(M, 1).T)
    return M, oracle.v_ours(pin.nonLinearEffects(oracle.model, data, q_pin, v_pin))


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xml=mutated_urdfs(), seed=st.integers(0, 2**16))
def test_a_mutated_description_is_refused_or_answered_right(xml: str, seed: int) -> None:
    robot = load_or_refuse(xml)
    if robot is None:
        event("refused")
        return
    rng = np.random.default_rng(seed)
    step, qd = rng.uniform(-1.0, 1.0, (2, robot.nv))
    q = robot.integrate(robot.neutral(), step)  # a free flyer's or planar joint's q is larger
    tau = rng.uniform(-10.0, 10.0, robot.nv)
    M, b = robot.mass_matrix(q), robot.bias_forces(q, qd)
    tau_of_qdd = robot.inverse_dynamics(q, qd, tau)
    for name, value in (("M", M), ("b", b), ("τ", tau_of_qdd)):
        assert np.isfinite(value).all(), f"{name} is not finite"
    oracle = pinocchio_or_none(xml, robot)
    if oracle is not None:
        M_pin, b_pin = pinocchio_mass_matrix_and_bias(oracle, q, qd)
        assert_close(M, M_pin, "M")
        assert_close(b, b_pin, "b")
        event("checked against Pinocchio" + (" (free flyer or planar)" if robot.nq != robot.nv
                                               else ""))
    try:
        qdd = robot.forward_dynamics(q, qd, tau)
    except SingularMassMatrixError as error:
        assert error.joints and set(error.joints) <= set(robot.joint_names)
        event("singular M")
        return
    event("answered")
    assert np.isfinite(qdd).all()
    residual = np.abs(M @ qdd + b - tau).max()
    scale = np.abs(tau).max() + np.abs(b).max() + np.abs(M).max() * np.abs(qdd).max()
    assert residual <= RESIDUAL_RTOL * scale, f"M q̈ + b - τ = {residual:.1e} of {scale:.1e}"
    Minv = robot.mass_matrix_inverse(q)
    assert np.isfinite(Minv).all()
    np.testing.assert_allclose(Minv @ (tau - b), qdd, rtol=0,
                               atol=RESIDUAL_RTOL * np.abs(Minv).max() * np.abs(tau - b).max())
