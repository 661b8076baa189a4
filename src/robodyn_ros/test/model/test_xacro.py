"""Xacro input: a xacro file that includes a macro file and takes an argument expands to the
robot of the equivalent plain URDF (and agrees with Pinocchio on it); ``$(find pkg)`` resolves
through the ament index; every failure is a ModelError naming the xacro file; the ``robodyn``
command takes a .xacro file with NAME:=VALUE arguments.

The fixtures are the bundled panda turned into a macro ``panda_arm(prefix)`` in a file of its
own, and a top file that includes it and instantiates it with the argument ``prefix``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros import ModelError, Robot
from robodyn_ros.cli import main
from robodyn_ros.model import description_file, expand_xacro, read_robot_description
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

BUNDLED_PANDA = Path(__file__).resolve().parents[2] / "urdf" / "panda.urdf"
XACRO_NAMESPACE = "http://www.ros.org/wiki/xacro"
FIXTURE_PACKAGE = "robodyn_xacro_fixture"  # a package of the temporary ament index
PANDA_ROBOT = '<robot name="panda">'
PANDA_NAME_REFERENCES = re.compile(r'((?:name|link)=")panda_')  # link and joint names
PREFIX = "left_"


def prefixed_panda(prefix: str) -> str:
    """The bundled panda's URDF with `prefix` before every link and joint name."""
    return PANDA_NAME_REFERENCES.sub(rf"\g<1>{prefix}panda_", BUNDLED_PANDA.read_text())


def panda_arm_macro() -> str:
    """A xacro file defining the macro panda_arm(prefix): the panda's links and joints."""
    urdf = prefixed_panda("${prefix}")
    links_and_joints = urdf[urdf.index(PANDA_ROBOT) + len(PANDA_ROBOT) : urdf.rindex("</robot>")]
    return (
        f'<robot xmlns:xacro="{XACRO_NAMESPACE}">\n'
        f'  <xacro:macro name="panda_arm" params="prefix">{links_and_joints}</xacro:macro>\n'
        "</robot>\n"
    )


def top_file(folder: Path, include: str, name: str = "panda.urdf.xacro") -> Path:
    """A xacro file that includes `include` and makes the arm with the argument prefix
    (declared by no <xacro:arg>, so it must be given)."""
    path = folder / name
    path.write_text(
        f'<robot name="panda" xmlns:xacro="{XACRO_NAMESPACE}">\n'
        f'  <xacro:include filename="{include}"/>\n'
        '  <xacro:panda_arm prefix="$(arg prefix)"/>\n'
        "</robot>\n"
    )
    return path


def ament_prefix(folder: Path) -> Path:
    """An install prefix whose ament index lists FIXTURE_PACKAGE, sharing the macro file."""
    prefix = folder / "install"
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages" / FIXTURE_PACKAGE
    marker.parent.mkdir(parents=True)
    marker.touch()
    share = prefix / "share" / FIXTURE_PACKAGE / "urdf"
    share.mkdir(parents=True)
    (share / "panda_arm.xacro").write_text(panda_arm_macro())
    return prefix


@pytest.fixture
def panda_xacro(tmp_path: Path) -> Path:
    """The top file, including the macro file beside it by a relative name."""
    (tmp_path / "panda_arm.xacro").write_text(panda_arm_macro())
    return top_file(tmp_path, "panda_arm.xacro")


def states(robot: Robot, count: int = 4) -> np.ndarray:
    return np.random.default_rng(7).uniform(-1.5, 1.5, (count, robot.nv))


def test_xacro_gives_the_robot_of_the_plain_urdf(panda_xacro) -> None:
    robot = Robot.from_xacro(panda_xacro, {"prefix": PREFIX})
    plain = Robot.from_urdf_string(prefixed_panda(PREFIX))
    assert robot.joint_names == plain.joint_names
    assert robot.joint_names[0] == f"{PREFIX}panda_joint1" and robot.nv == 7
    assert robot.frame_names == plain.frame_names
    for q in states(robot):
        np.testing.assert_allclose(robot.mass_matrix(q), plain.mass_matrix(q), rtol=0, atol=1e-12)
        np.testing.assert_allclose(robot.gravity_torques(q), plain.gravity_torques(q), rtol=0,
                                   atol=1e-12)


def test_xacro_robot_agrees_with_pinocchio(panda_xacro) -> None:
    urdf = expand_xacro(panda_xacro, {"prefix": PREFIX})
    robot = Robot.from_urdf_string(urdf)
    oracle = PinocchioOracle(urdf, robot.joint_names, is_string=True)
    for q in states(robot):
        for ours, expected in ((robot.mass_matrix(q), oracle.mass_matrix(q)),
                               (robot.gravity_torques(q), oracle.gravity_torques(q))):
            error = np.abs(ours - expected).max() / np.abs(expected).max()
            assert error <= 1e-9, f"relative error {error:.1e} at q = {q}"


def test_find_resolves_a_package_of_the_ament_index(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(ament_prefix(tmp_path)))
    path = top_file(tmp_path, f"$(find {FIXTURE_PACKAGE})/urdf/panda_arm.xacro")
    robot = Robot.from_xacro(path, {"prefix": ""})
    assert robot.joint_names == Robot.from_urdf(BUNDLED_PANDA).joint_names


def test_a_package_uri_resolves_through_the_ament_index(tmp_path, monkeypatch) -> None:
    """package://pkg/path is pkg's share folder / path, as robot_state_publisher reads it; a
    package the index lacks, or a URI without a path, is named."""
    prefix = ament_prefix(tmp_path)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    assert description_file(f"package://{FIXTURE_PACKAGE}/urdf/panda_arm.xacro") == (
        prefix / "share" / FIXTURE_PACKAGE / "urdf" / "panda_arm.xacro")
    assert description_file("urdf/arm.urdf") == Path("urdf/arm.urdf")
    with pytest.raises(ModelError, match=r"^package://robodyn_no_such_package/a\.urdf: package "
                       r"'robodyn_no_such_package' is not in the ament index"):
        description_file("package://robodyn_no_such_package/a.urdf")
    with pytest.raises(ModelError, match=r"package://<package>/<path"):
        description_file(f"package://{FIXTURE_PACKAGE}")


def test_a_missing_argument_is_named_with_the_file(panda_xacro) -> None:
    with pytest.raises(ModelError, match=r"xacro argument 'prefix' has no value") as error:
        Robot.from_xacro(panda_xacro)
    assert str(error.value).startswith(f"{panda_xacro}: ")


def test_a_missing_include_is_named_with_the_file(tmp_path) -> None:
    path = top_file(tmp_path, "nowhere.xacro")
    with pytest.raises(ModelError, match=r"cannot read \S*nowhere\.xacro") as error:
        Robot.from_xacro(path, {"prefix": ""})
    assert str(error.value).startswith(f"{path}: ")


def test_an_unknown_package_is_named_with_the_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(ament_prefix(tmp_path)))
    path = top_file(tmp_path, "$(find robodyn_no_such_package)/urdf/arm.xacro")
    with pytest.raises(ModelError, match=r"package 'robodyn_no_such_package' is not in the "
                       r"ament index .* add its install prefix to AMENT_PREFIX_PATH") as error:
        Robot.from_xacro(path, {"prefix": ""})
    assert str(error.value).startswith(f"{path}: $(find robodyn_no_such_package): ")


def test_find_without_an_ament_index_names_the_package_and_the_file(tmp_path,
                                                                    monkeypatch) -> None:
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    path = top_file(tmp_path, f"$(find {FIXTURE_PACKAGE})/urdf/panda_arm.xacro")
    with pytest.raises(ModelError, match=rf"AMENT_PREFIX_PATH is not set, .* package "
                       rf"'{FIXTURE_PACKAGE}' in: source the setup file") as error:
        Robot.from_xacro(path, {"prefix": ""})
    assert str(error.value).startswith(f"{path}: ")


def test_a_bad_macro_is_named_with_its_file(tmp_path) -> None:
    (tmp_path / "arm.xacro").write_text(
        f'<robot xmlns:xacro="{XACRO_NAMESPACE}"><xacro:macro name="panda_arm" params="prefix">'
        '<link name="${length}"/></xacro:macro></robot>'
    )
    path = top_file(tmp_path, "arm.xacro")
    with pytest.raises(ModelError, match=r"name 'length' is not defined .*\(in macro "
                       r"'panda_arm' of \S*arm\.xacro\)") as error:
        Robot.from_xacro(path, {"prefix": ""})
    assert str(error.value).startswith(f"{path}: ")


def test_malformed_xml_is_named_with_the_included_file(tmp_path) -> None:
    (tmp_path / "arm.xacro").write_text(panda_arm_macro().replace("</xacro:macro>", ""))
    path = top_file(tmp_path, "arm.xacro")
    with pytest.raises(ModelError, match=r"malformed XML: .*\(in included file \S*arm\.xacro\)"
                       ) as error:
        Robot.from_xacro(path, {"prefix": ""})
    assert str(error.value).startswith(f"{path}: ")


def test_errors_of_the_expanded_urdf_name_the_xacro_file(panda_xacro) -> None:
    """The joint 'panda_joint1' of the prefixed arm hangs from a link the file never made."""
    (panda_xacro.parent / "panda_arm.xacro").write_text(
        panda_arm_macro().replace('link="${prefix}panda_link0"', 'link="base"')
    )
    with pytest.raises(ModelError, match=r"names parent link 'base', which is not defined"
                       ) as error:
        Robot.from_xacro(panda_xacro, {"prefix": PREFIX})
    assert str(error.value).startswith(f"{panda_xacro}: ")


def test_xacro_arguments_for_a_plain_urdf_are_refused() -> None:
    with pytest.raises(ModelError, match=r"xacro arguments \(prefix\) are given, but the file "
                       "is a URDF"):
        read_robot_description(BUNDLED_PANDA, {"prefix": PREFIX})


def test_demo_takes_a_xacro_file_and_its_arguments(panda_xacro, capsys) -> None:
    assert main(["demo", "--urdf", str(panda_xacro), f"prefix:={PREFIX}"]) == 0
    out = capsys.readouterr().out
    assert f"robot 'panda' from {panda_xacro}" in out
    assert f"7 joints: {PREFIX}panda_joint1, " in out


def test_demo_names_the_xacro_file_and_a_missing_argument(panda_xacro, capsys) -> None:
    assert main(["demo", "--urdf", str(panda_xacro)]) == 1
    assert f"{panda_xacro}: xacro argument 'prefix' has no value" in capsys.readouterr().err


def test_xacro_arguments_are_refused_where_no_description_is_read(capsys) -> None:
    for argv in (["demo", ":=left_"], ["bag", "replay", "some_bag", "prefix:=left_"]):
        with pytest.raises(SystemExit):
            main(argv)
    err = capsys.readouterr().err
    assert "a xacro argument is NAME:=VALUE; got ':=left_'" in err
    assert "robodyn bag: NAME:=VALUE items are the arguments of a .xacro" in err
