"""URDF → Model: validation errors and warnings, the flattening rules, and agreement with
Pinocchio on real robots from example-robot-data and on the bundled panda."""

from __future__ import annotations

import functools
import sysconfig
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from robodyn_ros.model import GRAVITY, Model, ModelError, URDFWarning, load_urdf, load_urdf_string

SOURCE = "test_robot.urdf"
ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
ERD_PANDA = ROBOTS / "panda_description/urdf/panda.urdf"
BUNDLED_PANDA = Path(__file__).resolve().parents[2] / "urdf" / "panda.urdf"
PANDA_FINGERS = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
REAL_ROBOTS = {
    "panda": ERD_PANDA,
    "ur5": ROBOTS / "ur_description/urdf/ur5_robot.urdf",
    "xarm7": ROBOTS / "xarm_description/urdf/xarm7.urdf",
    "kinova": ROBOTS / "kinova_description/robots/kinova.urdf",
    "talos_full": ROBOTS / "talos_data/robots/talos_full_v2.urdf",
    "bundled_panda": BUNDLED_PANDA,
}
LIMITS = '<limit lower="-1" upper="1" velocity="2" effort="3"/>'


# --- inline URDF builders ---------------------------------------------------------------------


def robot(*elements: str, name: str = "testbot") -> str:
    return f'<robot name="{name}">{"".join(elements)}</robot>'


def inertial(
    mass: object = 1.0,
    moments: tuple[object, object, object] = (0.02, 0.03, 0.04),
    products: tuple[object, object, object] = (0.0, 0.0, 0.0),
    xyz: str = "0 0 0",
    rpy: str = "0 0 0",
) -> str:
    (ixx, iyy, izz), (ixy, ixz, iyz) = moments, products
    return (
        f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
        f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/>'
        "</inertial>"
    )


def link(name: str, body: str = "") -> str:
    return f'<link name="{name}">{body}</link>'


def joint(
    name: str,
    parent: str,
    child: str,
    kind: str = "revolute",
    body: str = '<axis xyz="0 0 1"/>' + LIMITS,
    origin: str = 'xyz="0 0 0.1" rpy="0 0 0"',
) -> str:
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f"<origin {origin}/>{body}</joint>"
    )


ARM = (link("base"), link("upper", inertial()), joint("shoulder", "base", "upper"))


def load(*elements: str, **options: object) -> Model:
    return load_urdf_string(robot(*elements), source=SOURCE, **options)


def model_error(*elements: str, names: tuple[str, ...], **options: object) -> str:
    """Load, expect a ModelError naming the source and ``names``; return its message."""
    with pytest.raises(ModelError) as info:
        load(*elements, **options)
    message = str(info.value)
    assert SOURCE in message
    for name in names:
        assert name in message, f"{name!r} missing from: {message}"
    return message


# --- validation errors ------------------------------------------------------------------------


def test_malformed_xml_names_the_source_and_the_position() -> None:
    message = model_error("<link name='base'>", names=("malformed XML", "line 1"))
    assert "column" in message


def test_a_document_that_is_not_a_robot_is_rejected() -> None:
    with pytest.raises(ModelError, match=rf"{SOURCE}: .*<sdf>"):
        load_urdf_string("<sdf/>", source=SOURCE)


def test_parse_errors_from_urdf_parser_py_become_model_errors() -> None:
    model_error(
        link("base"), joint("hinge", "base", "base", kind="screw"), names=("'hinge'", "screw")
    )


def test_several_roots_are_named() -> None:
    model_error(*ARM, link("floating_tool"), names=("'base'", "'floating_tool'", "root"))


def test_a_robot_without_a_root_reports_the_loop() -> None:
    message = model_error(
        link("a", inertial()),
        link("b", inertial()),
        joint("a_to_b", "a", "b"),
        joint("b_to_a", "b", "a"),
        names=("no root", "loop", "a_to_b", "b_to_a"),
    )
    assert "a → b" in message


def test_a_kinematic_loop_beside_the_tree_is_named() -> None:
    model_error(
        *ARM,
        link("c", inertial()),
        link("d", inertial()),
        joint("c_to_d", "c", "d"),
        joint("d_to_c", "d", "c"),
        names=("loop", "c_to_d", "d_to_c"),
    )


def test_a_link_with_two_parent_joints_is_named_with_both_joints() -> None:
    model_error(
        *ARM,
        link("elbow_link", inertial()),
        joint("elbow", "upper", "elbow_link"),
        joint("second_parent", "base", "elbow_link"),
        names=("'elbow_link'", "'elbow'", "'second_parent'", "two parent joints"),
    )


@pytest.mark.parametrize(("parent", "child"), [("nowhere", "upper"), ("base", "ghost")])
def test_a_joint_naming_an_unknown_link_is_rejected(parent: str, child: str) -> None:
    missing = parent if parent == "nowhere" else child
    model_error(
        link("base"),
        link("upper", inertial()),
        joint("shoulder", parent, child),
        names=("'shoulder'", f"'{missing}'", "not defined"),
    )


def test_duplicate_link_names_are_rejected() -> None:
    model_error(*ARM, link("upper"), names=("link 'upper'", "twice"))


def test_duplicate_elements_are_rejected_not_silently_dropped() -> None:
    body = '<origin xyz="0 0 1"/><axis xyz="0 0 1"/>' + LIMITS
    model_error(
        link("base"),
        link("upper", inertial()),
        joint("shoulder", "base", "upper", body=body),
        names=("joint 'shoulder'", "<origin>"),
    )


def test_negative_mass_is_rejected() -> None:
    model_error(link("base"), link("upper", inertial(mass=-1.5)), ARM[2], names=("'upper'", "-1.5"))


def arm_with_shoulder(**options: str) -> tuple[str, ...]:
    return link("base"), link("upper", inertial()), joint("shoulder", "base", "upper", **options)


def arm_with_upper(upper_inertial: str) -> tuple[str, ...]:
    return link("base"), link("upper", upper_inertial), ARM[2]


BAD_NUMBERS = {
    "joint origin xyz": (arm_with_shoulder(origin='xyz="nan 0 0"'), "shoulder"),
    "joint origin rpy": (arm_with_shoulder(origin='rpy="0 inf 0"'), "shoulder"),
    "axis": (arm_with_shoulder(body='<axis xyz="0 nan 1"/>' + LIMITS), "shoulder"),
    "limit": (arm_with_shoulder(body='<limit upper="1" velocity="inf" effort="3"/>'), "shoulder"),
    "dynamics": (arm_with_shoulder(body=LIMITS + '<dynamics damping="NaN"/>'), "shoulder"),
    "mass": (arm_with_upper(inertial(mass="nan")), "upper"),
    "inertia": (arm_with_upper(inertial(moments=(0.1, "inf", 0.1))), "upper"),
    "inertial origin": (arm_with_upper(inertial(xyz="0 0 -inf")), "upper"),
    "not a number": (arm_with_upper(inertial(mass="heavy")), "upper"),
    "two numbers for xyz": (arm_with_shoulder(origin='xyz="0 1"'), "shoulder"),
}


@pytest.mark.parametrize("case", BAD_NUMBERS)
def test_non_finite_or_malformed_numbers_are_rejected(case: str) -> None:
    elements, culprit = BAD_NUMBERS[case]
    model_error(*elements, names=(f"'{culprit}'", "finite number"))


def test_a_zero_length_axis_is_rejected() -> None:
    body = '<axis xyz="0 0 0"/>' + LIMITS
    model_error(
        link("base"),
        link("upper", inertial()),
        joint("shoulder", "base", "upper", body=body),
        names=("'shoulder'", "zero length"),
    )


def test_an_indefinite_inertia_is_rejected() -> None:
    indefinite = inertial(moments=(0.1, 0.1, 0.1), products=(0.2, 0.0, 0.0))
    model_error(link("base"), link("upper", indefinite), ARM[2], names=("'upper'", "semi-definite"))


def test_cad_noise_merged_into_a_possible_body_or_the_base_warns_and_loads() -> None:
    noise = inertial(mass=0.01, moments=(3.5e-8, 3.5e-8, 9.1e-8), products=(7e-8, 0.0, 0.0))
    sensor_on_arm = joint("sensor_mount", "upper", "sensor", kind="fixed", body="")
    with pytest.warns(URDFWarning, match=r"link 'sensor'.*semi-definite.*joint 'shoulder'"):
        load(*ARM, link("sensor", noise), sensor_on_arm)
    antenna_on_base = joint("antenna_mount", "base", "antenna", kind="fixed", body="")
    with pytest.warns(URDFWarning, match=r"link 'antenna'.*semi-definite.*fixed base"):
        load(*ARM, link("antenna", noise), antenna_on_base)
    model_error(*ARM, link("antenna", noise), antenna_on_base, strict_inertia=True,
                names=("'antenna'", "strict_inertia"))


@pytest.mark.parametrize(
    ("element", "names"),
    [
        (link("upper", inertial(mass=1e300)), ("'upper'", "1e+300 kg", "at most 1e+06 kg")),
        (link("upper", inertial(mass=1e-300)), ("'upper'", "0 or at least 1e-12 kg")),
        (link("upper", inertial(moments=(1e12, 1e12, 1e12))), ("'upper'", "kg·m²")),
        (link("upper", inertial(xyz="0 0 1e5")), ("'upper'", "100000 m", "at most 10000 m")),
    ],
)
def test_magnitudes_outside_any_robot_are_refused(element: str, names: tuple[str, ...]) -> None:
    model_error(link("base"), element, ARM[2], names=names)


@pytest.mark.parametrize("length", ["1e300", "1e-300"])
def test_an_axis_of_any_length_is_its_direction(length: str) -> None:
    scaled = joint("shoulder", "base", "upper", body=f'<axis xyz="0 {length} {length}"/>' + LIMITS)
    unit = joint("shoulder", "base", "upper", body='<axis xyz="0 1 1"/>' + LIMITS)
    np.testing.assert_allclose(load(*ARM[:2], scaled).motion_subspace,
                               load(*ARM[:2], unit).motion_subspace, rtol=1e-15)


def test_a_joint_origin_outside_any_robot_is_refused() -> None:
    far = joint("shoulder", "base", "upper", origin='xyz="0 0 2e4" rpy="0 0 0"')
    model_error(link("base"), ARM[1], far, names=("'shoulder'", "20000 m"))


def test_a_singular_inertia_of_a_massive_link_warns() -> None:
    point_mass = inertial(mass=0.5, moments=(0.0, 0.0, 0.0))
    with pytest.warns(URDFWarning, match=rf"{SOURCE}: link 'upper' .*singular"):
        model = load(link("base"), link("upper", point_mass), ARM[2])
    assert model.total_mass == 0.5


def test_the_triangle_inequality_warning_gives_the_principal_moments() -> None:
    impossible = inertial(moments=(0.01, 0.01, 0.05))
    with pytest.warns(URDFWarning, match=r"link 'upper'.*0\.01, 0\.01, 0\.05.*triangle"):
        load(link("base"), link("upper", impossible), ARM[2])


def test_a_flat_plate_is_on_the_triangle_boundary_and_does_not_warn() -> None:
    plate = inertial(moments=(0.01, 0.03, 0.04))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load(link("base"), link("upper", plate), ARM[2])


def test_a_robot_without_moving_joints_is_rejected() -> None:
    model_error(
        link("base"),
        link("plate", inertial()),
        joint("bolted", "base", "plate", kind="fixed", body=""),
        names=("'testbot'", "no moving"),
    )


@pytest.mark.parametrize(("kind", "nq", "suffixes"), [
    ("floating", 7, ("x", "y", "z", "rx", "ry", "rz")),
    ("planar", 4, ("x", "y", "rz")),
])
def test_floating_and_planar_joints_load_as_one_joint(kind: str, nq: int,
                                                      suffixes: tuple[str, ...]) -> None:
    """A row per velocity coordinate, named after the joint, the body on the last (the
    dynamics against Pinocchio: test/dynamics/test_tree_multi_dof_joints.py)."""
    model = load(
        link("world"),
        link("body", inertial()),
        joint("free", "world", "body", kind=kind, body=""),
    )
    assert model.joint_names == tuple(f"free_{suffix}" for suffix in suffixes)
    assert model.joint_kinds == (kind,) * len(suffixes)
    assert (model.nq, model.nv) == (nq, len(suffixes))
    assert model.frame_body[model.frame_names.index("body")] == len(suffixes) - 1
    assert list(model.parent) == list(range(-1, len(suffixes) - 1))


def test_an_unknown_option_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "arm.urdf"
    path.write_text(robot(*ARM))
    with pytest.raises(TypeError, match=r"'floatng_base'.*floating_base"):
        load(*ARM, floatng_base=True)
    with pytest.raises(TypeError, match=r"arm\.urdf.*'lock'"):
        load_urdf(path, lock={"shoulder": 0.0})


def test_locking_an_unknown_joint_names_it() -> None:
    model_error(*ARM, locked_joints={"wrist": 0.0}, names=("'wrist'", "shoulder"))


def test_locking_a_fixed_joint_is_rejected() -> None:
    model_error(
        *ARM,
        link("tool"),
        joint("tool_mount", "upper", "tool", kind="fixed", body=""),
        locked_joints={"tool_mount": 0.0},
        names=("'tool_mount'", "fixed"),
    )


def test_mimic_false_loads_mimic_joints_as_independent_joints_with_a_warning() -> None:
    body = '<axis xyz="0 0 1"/>' + LIMITS + '<mimic joint="shoulder" multiplier="-1"/>'
    elements = (*ARM, link("follower", inertial()), joint("elbow", "upper", "follower", body=body))
    with pytest.warns(URDFWarning, match=r"joint 'elbow' mimics joint 'shoulder'"):
        model = load(*elements, mimic=False)
    assert model.joint_names == ("shoulder", "elbow") and model.mimic == ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load(*elements, mimic=False, locked_joints={"elbow": 0.0}).nv == 1
        followed = load(*elements)  # by default the elbow follows, silently
    assert followed.joint_names == ("shoulder", "elbow")
    assert [(m.joint, m.leader, m.multiplier, m.offset) for m in followed.mimic] == [
        ("elbow", "shoulder", -1.0, 0.0)]


# --- input forms and parser noise -----------------------------------------------------------


def test_strings_with_an_encoding_declaration_and_bytes_load() -> None:
    xml = '<?xml version="1.0" encoding="UTF-8"?>' + robot(*ARM)
    assert load_urdf_string(xml).joint_names == ("shoulder",)
    assert load_urdf_string(xml.encode()).joint_names == ("shoulder",)


def test_errors_from_a_file_name_the_path(tmp_path: Path) -> None:
    path = tmp_path / "broken.urdf"
    path.write_text(robot(link("base")))
    with pytest.raises(ModelError, match=str(path)):
        load_urdf(path)


def test_unknown_tags_do_not_print(capsys: pytest.CaptureFixture[str]) -> None:
    extras = '<safety_controller k_velocity="1" vendor_gain="2"/><sensor_hint/>'
    body = '<axis xyz="0 0 1"/>' + LIMITS + extras
    load(link("base"), link("upper", inertial()), joint("shoulder", "base", "upper", body=body))
    assert capsys.readouterr().err == ""


def test_broken_visual_material_does_not_block_the_dynamics() -> None:
    visual = (
        '<visual><geometry><box size="1 1 1"/></geometry>'
        '<material name="m"><texture/></material></visual>'
    )
    model = load(link("base", visual), link("upper", inertial()), ARM[2], "<transmission/>")
    assert model.nv == 1


# --- flattening rules -------------------------------------------------------------------------


def test_joints_are_numbered_depth_first_with_children_in_file_order() -> None:
    model = load(
        link("base"),
        link("a", inertial()),
        link("b", inertial()),
        link("c", inertial()),
        joint("j_a", "base", "a"),
        joint("j_b", "base", "b"),
        joint("j_c", "a", "c"),
    )
    assert model.joint_names == ("j_a", "j_c", "j_b")
    assert model.parent.tolist() == [-1, 0, -1]
    assert model.frame_names == ("base", "a", "b", "c")
    assert model.frame_body.tolist() == [-1, 0, 2, 1]


def test_fixed_links_merge_into_the_moving_parent_and_stay_frames() -> None:
    mount = 'xyz="0.1 0.2 0.3" rpy="0 0 1.5707963267948966"'
    model = load(
        *ARM,
        link("tool", inertial(mass=2.0, moments=(0.01, 0.01, 0.01), xyz="0 0 0.5")),
        joint("tool_mount", "upper", "tool", kind="fixed", body="", origin=mount),
    )
    tool = model.frame_index("tool")
    assert model.frame_body[tool] == 0
    expected_placement = np.eye(4)
    expected_placement[:3, :3] = Rotation.from_euler("z", np.pi / 2).as_matrix()
    expected_placement[:3, 3] = (0.1, 0.2, 0.3)
    np.testing.assert_allclose(model.frame_placement[tool], expected_placement, atol=1e-15)
    # The merged body: upper (1 kg at the origin) and tool (2 kg at 0.1, 0.2, 0.8).
    assert model.total_mass == pytest.approx(3.0)
    first_moment = model.spatial_inertia[0][3:, :3]  # m [c]x
    np.testing.assert_allclose(first_moment[[2, 0, 1], [1, 2, 0]], 2.0 * np.array([0.1, 0.2, 0.8]))


def test_a_chain_of_fixed_links_offsets_the_next_joint() -> None:
    model = load(
        *ARM,
        link("spacer"),
        link("forearm", inertial()),
        joint("spacer_mount", "upper", "spacer", kind="fixed", body="", origin='xyz="0 0 0.5"'),
        joint("elbow", "spacer", "forearm", origin='xyz="0.1 0 0"'),
    )
    assert model.parent.tolist() == [-1, 0]
    np.testing.assert_allclose(model.joint_placement[1][:3, 3], (0.1, 0.0, 0.5))


def test_origin_rpy_is_fixed_axis_roll_pitch_yaw() -> None:
    rpy = (0.3, -0.7, 1.9)
    model = load(
        link("base"),
        link("upper", inertial()),
        joint("shoulder", "base", "upper", origin=f'xyz="1 2 3" rpy="{" ".join(map(str, rpy))}"'),
    )
    expected = Rotation.from_euler("xyz", rpy).as_matrix()  # extrinsic x, y, z
    np.testing.assert_allclose(model.joint_placement[0][:3, :3], expected, atol=1e-15)
    np.testing.assert_allclose(model.joint_placement[0][:3, 3], (1, 2, 3))


def test_axes_subspaces_limits_and_defaults() -> None:
    model = load(
        link("base"),
        link("a", inertial()),
        link("b", inertial()),
        link("c", inertial()),
        joint("slide", "base", "a", kind="prismatic", body='<axis xyz="0 3 4"/>' + LIMITS),
        joint("spin", "a", "b", kind="continuous", body='<limit effort="5" velocity="6"/>'),
        joint("free_turn", "b", "c", body='<dynamics damping="0.5"/>'),
    )
    assert model.joint_kinds == ("prismatic", "continuous", "revolute")
    np.testing.assert_allclose(model.motion_subspace[0], [0, 0.6, 0.8, 0, 0, 0])
    np.testing.assert_allclose(model.motion_subspace[1], [0, 0, 0, 1, 0, 0])  # default axis
    assert model.lower.tolist() == [-1, -np.inf, -np.inf]
    assert model.upper.tolist() == [1, np.inf, np.inf]
    assert model.velocity_limit.tolist() == [2, 6, np.inf]
    assert model.effort_limit.tolist() == [3, 5, np.inf]
    assert model.damping.tolist() == [0, 0, 0.5]
    assert model.friction.tolist() == [0, 0, 0]


def test_model_arrays_have_the_documented_types() -> None:
    model = load(*ARM)
    assert model.parent.dtype == model.frame_body.dtype == np.int64
    for array in (model.joint_placement, model.spatial_inertia, model.lower, model.gravity):
        assert array.dtype == np.float64
    assert model.spatial_inertia.shape == (1, 6, 6)
    assert model.gravity.tolist() == list(GRAVITY) == [0, 0, -9.81]
    assert model.root_link == "base" and model.name == "testbot"


def test_a_locked_joint_becomes_fixed_at_its_position() -> None:
    elements = (*ARM, link("forearm", inertial()), joint("elbow", "upper", "forearm"))
    model = load(*elements, locked_joints={"shoulder": 0.4})
    assert model.joint_names == ("elbow",)
    upper = model.frame_index("upper")
    assert model.frame_body[upper] == -1
    expected = Rotation.from_rotvec([0, 0, 0.4]).as_matrix()
    np.testing.assert_allclose(model.frame_placement[upper][:3, :3], expected, atol=1e-15)
    np.testing.assert_allclose(model.joint_placement[0][:3, 3], (0, 0, 0.2))


def test_an_inline_tree_with_rotated_inertials_matches_pinocchio() -> None:
    xml = robot(
        link("base"),
        link("a", inertial(xyz="0.1 -0.2 0.3", rpy="0.4 0.5 0.6", products=(0.001, 0.002, 0.003))),
        link("a_tip", inertial(mass=0.7, xyz="0 0.1 0", rpy="1 0 0")),
        link("b", inertial(mass=2.5, rpy="0 0.3 0")),
        joint("j_a", "base", "a", origin='xyz="0 0 0.2" rpy="0.1 0.2 0.3"'),
        joint("tip", "a", "a_tip", kind="fixed", body="", origin='xyz="0.3 0 0" rpy="0 1 0"'),
        joint("j_b", "a_tip", "b", kind="prismatic", body='<axis xyz="1 1 0"/>' + LIMITS),
    )
    compare_with_pinocchio(load_urdf_string(xml), pin.buildModelFromXML(xml))


# --- real robots against Pinocchio ----------------------------------------------------------


@functools.cache
def quiet_load(path: Path) -> Model:
    """Load without the warnings real robots deserve (tested separately)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        return load_urdf(path)


@functools.cache
def pinocchio_model(path: Path) -> pin.Model:
    return pin.buildModelFromUrdf(str(path))


def compare_with_pinocchio(model: Model, oracle: pin.Model) -> None:
    assert sorted(model.joint_names) == sorted(oracle.names[1:])
    assert model.total_mass == pytest.approx(sum(i.mass for i in oracle.inertias[1:]), abs=1e-12)
    for i, name in enumerate(model.joint_names):
        j = oracle.getJointId(name)
        assert model.parent[i] < i
        parent = oracle.parents[j]
        assert (model.joint_names[model.parent[i]] if model.parent[i] >= 0 else "universe") == (
            oracle.names[parent]
        )
        expected = oracle.inertias[j].matrix()
        scale = np.abs(expected).max()
        np.testing.assert_allclose(model.spatial_inertia[i], expected, rtol=0, atol=1e-12 * scale)
        placement = oracle.jointPlacements[j].homogeneous
        np.testing.assert_allclose(model.joint_placement[i], placement, rtol=0, atol=1e-12)


def frames_match_pinocchio(model: Model, oracle: pin.Model) -> None:
    for f, name in enumerate(model.frame_names):
        frame = oracle.frames[oracle.getFrameId(name, pin.FrameType.BODY)]
        body = model.frame_body[f]
        assert oracle.names[frame.parentJoint] == (
            model.joint_names[body] if body >= 0 else "universe"
        )
        expected = frame.placement.homogeneous
        np.testing.assert_allclose(model.frame_placement[f], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", REAL_ROBOTS)
def test_real_robots_match_pinocchio(name: str) -> None:
    path = REAL_ROBOTS[name]
    model, oracle = quiet_load(path), pinocchio_model(path)
    assert model.nv == oracle.njoints - 1
    compare_with_pinocchio(model, oracle)
    frames_match_pinocchio(model, oracle)


@pytest.mark.parametrize("name", REAL_ROBOTS)
def test_real_robot_limits_match_pinocchio(name: str) -> None:
    model, oracle = quiet_load(REAL_ROBOTS[name]), pinocchio_model(REAL_ROBOTS[name])
    for i, joint_name in enumerate(model.joint_names):
        j = oracle.joints[oracle.getJointId(joint_name)]
        assert model.velocity_limit[i] == oracle.velocityLimit[j.idx_v]
        assert model.effort_limit[i] == oracle.effortLimit[j.idx_v]
        if model.joint_kinds[i] == "continuous":  # Pinocchio stores (cos, sin)
            assert j.nq == 2 and model.lower[i] == -np.inf and model.upper[i] == np.inf
        else:
            assert model.lower[i] == oracle.lowerPositionLimit[j.idx_q]
            assert model.upper[i] == oracle.upperPositionLimit[j.idx_q]


def test_kinova_has_continuous_joints() -> None:
    assert quiet_load(REAL_ROBOTS["kinova"]).joint_kinds.count("continuous") == 3


def test_talos_is_a_44_joint_tree_with_point_masses_and_mimic_joints() -> None:
    with pytest.warns(URDFWarning) as record:
        model = load_urdf(REAL_ROBOTS["talos_full"], mimic=False)
    assert model.nv == 44
    assert len(set(model.parent.tolist())) > 5  # branches: legs, arms, head, grippers
    messages = [str(w.message) for w in record]
    assert any("'wrist_left_ft_tool_link'" in m and "singular" in m for m in messages)
    assert any("'gripper_left_inner_double_joint' mimics" in m for m in messages)


def test_panda_with_locked_fingers_matches_pinocchio_reduced_model() -> None:
    model = load_urdf(ERD_PANDA, locked_joints=PANDA_FINGERS)
    full = pinocchio_model(ERD_PANDA)
    locked_ids = [full.getJointId(name) for name in PANDA_FINGERS]
    reduced = pin.buildReducedModel(full, locked_ids, pin.neutral(full))
    assert model.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    compare_with_pinocchio(model, reduced)


# --- the bundled panda ----------------------------------------------------------------------


def frame_pose(model: Model, q: np.ndarray, frame: str) -> np.ndarray:
    """World pose of a frame: joint placements composed with the revolute joint rotations."""
    world: list[np.ndarray] = []
    for i in range(model.nv):
        motion = np.eye(4)
        motion[:3, :3] = Rotation.from_rotvec(model.motion_subspace[i, 3:] * q[i]).as_matrix()
        local = model.joint_placement[i] @ motion
        world.append(local if model.parent[i] < 0 else world[model.parent[i]] @ local)
    f = model.frame_index(frame)
    body = model.frame_body[f]
    return (world[body] if body >= 0 else np.eye(4)) @ model.frame_placement[f]


def test_bundled_panda_has_seven_joints_and_the_controller_frames() -> None:
    model = load_urdf(BUNDLED_PANDA)
    assert model.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert set(model.joint_kinds) == {"revolute"}
    frames = ("panda_link8", "panda_hand", "panda_hand_tcp")
    flange, hand, tcp = (model.frame_index(frame) for frame in frames)
    assert model.frame_body[[flange, hand, tcp]].tolist() == [6, 6, 6]
    np.testing.assert_allclose(model.frame_placement[flange][:3, 3], (0, 0, 0.107))
    tcp_in_hand = np.linalg.solve(model.frame_placement[hand], model.frame_placement[tcp])
    np.testing.assert_allclose(tcp_in_hand[:3, :3], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(tcp_in_hand[:3, 3], (0, 0, 0.1034), atol=1e-15)
    assert (model.damping > 0).all() and (model.friction > 0).all()


def test_bundled_panda_kinematics_agree_with_example_robot_data() -> None:
    bundled = load_urdf(BUNDLED_PANDA)
    reference = load_urdf(ERD_PANDA, locked_joints=PANDA_FINGERS)
    oracle = pinocchio_model(BUNDLED_PANDA)
    data = oracle.createData()
    rng = np.random.default_rng(7)
    for q in rng.uniform(bundled.lower, bundled.upper, size=(5, 7)):
        pin.framesForwardKinematics(oracle, data, q)
        for frame in ("panda_link8", "panda_hand", "panda_hand_tcp"):
            pose = frame_pose(bundled, q, frame)
            np.testing.assert_allclose(pose, frame_pose(reference, q, frame), atol=1e-12)
            pinocchio_pose = data.oMf[oracle.getFrameId(frame)].homogeneous
            np.testing.assert_allclose(pose, pinocchio_pose, atol=1e-12)
    np.testing.assert_array_equal(bundled.lower, reference.lower)
    np.testing.assert_array_equal(bundled.upper, reference.upper)
    # Same arm and hand inertias; the reference also carries the two 15 g fingers.
    assert bundled.total_mass == pytest.approx(reference.total_mass - 0.03, abs=1e-12)
