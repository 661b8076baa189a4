"""The `robodyn` command: the demo runs on the bundled robot and prints its summary."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from robodyn_ros.cli import main
from robodyn_ros.resources import bundled_urdf, share_directory
from robodyn_ros.robot import Robot


@pytest.mark.parametrize("ament_prefix", [None, "/nonexistent"], ids=["plain", "ros-sourced"])
def test_demo_prints_the_dynamics_summary(ament_prefix) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AMENT_PREFIX_PATH"}
    if ament_prefix:
        env["AMENT_PREFIX_PATH"] = ament_prefix
    result = subprocess.run(
        [sys.executable, "-m", "robodyn_ros.cli", "demo"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr
    for line in ("robot 'panda'", "7 joints", "joint-space inertia M(q)",
                 "max |ABA(RNEA(q̈)) - q̈|", "timing, one call from Python"):
        assert line in result.stdout, f"'{line}' missing from:\n{result.stdout}"


def test_warmup_makes_every_step_and_refuses_a_negative_helper_count(capsys) -> None:
    """On the cache the suite has filled, `robodyn warmup` makes every step it lists (each
    Robot function, a simulation step, each built-in controller and a preview) and says so."""
    from robodyn_ros.ros.warmup import package_steps

    assert main(["warmup"]) == 0
    steps = len(package_steps(Robot.from_urdf(bundled_urdf("panda")), "panda_hand_tcp"))
    assert f"warm: {steps} steps" in capsys.readouterr().err
    assert main(["warmup", "--helpers", "-1"]) == 1
    assert "--helpers must be a number of processes >= 0; got -1" in capsys.readouterr().err


def test_demo_names_a_missing_urdf(tmp_path, capsys) -> None:
    missing = tmp_path / "nowhere.urdf"
    assert main(["demo", "--urdf", str(missing)]) == 1
    assert str(missing) in capsys.readouterr().err


def test_demo_takes_a_gravity_vector_and_refuses_a_short_one(capsys) -> None:
    """No gravity: g(q) is zero at every configuration the demo prints."""
    assert main(["demo", "--gravity", "0,0,0"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "gravity torques" in line]
    assert lines and all("[0. 0. 0. 0. 0. 0. 0.]" in line for line in lines), lines
    with pytest.raises(SystemExit):
        main(["demo", "--gravity", "1,2"])
    assert "three numbers GX,GY,GZ" in capsys.readouterr().err


def test_preview_prints_metrics_and_writes_plots(tmp_path, capsys) -> None:
    """The bundled scenarios file, cut to 0.2 s: a table row per scenario, two PNGs."""
    scenarios = share_directory() / "config" / "preview.yaml"
    code = main(["preview", str(bundled_urdf("panda")), str(scenarios), "--horizon", "0.2",
                 "--output", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "horizon 0.2 s" in out and "peak |τ|/limit" in out
    for name in ("reach_forward", "reach_left", "wave", "go_limp"):
        assert name in out
    for plot in ("preview_joints.png", "preview_paths.png"):
        assert (tmp_path / plot).read_bytes().startswith(b"\x89PNG")


def test_preview_of_a_floating_base_prints_and_plots_its_joints(tmp_path, capsys) -> None:
    """--floating-base: the bundled Solo12 standing on its held feet under whole-body control,
    pushed aside, and floating free under a torque profile; a row each, a panel per joint of
    one coordinate (the base's pose is in the paths)."""
    robot = Robot.from_urdf(bundled_urdf("solo12"), floating_base=True)
    start = robot.standing(["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"], robot.default_positions())
    scenarios = tmp_path / "solo.yaml"
    scenarios.write_text(yaml.safe_dump({"horizon": 0.05, "start": start.tolist(), "scenarios": [
        {"name": "shoved", "whole_body_pose": {
            "frame": "base_link", "position": start[:3].tolist(),
            "contacts": [{"frame": foot, "kind": "3d"}
                         for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]},
         "pushes": [{"frame": "base_link", "wrench": [0, 5, 0, 0, 0, 0], "duration": 0.02}]},
        {"name": "floating", "torque_profile": {"times": [0.0], "efforts": [[0.0] * 18]}},
    ]}))
    code = main(["preview", str(bundled_urdf("solo12")), str(scenarios), "--floating-base",
                 "--output", str(tmp_path / "plots")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "\nshoved " in out and "\nfloating " in out
    for plot in ("preview_joints.png", "preview_paths.png"):
        assert (tmp_path / "plots" / plot).read_bytes().startswith(b"\x89PNG")


def test_preview_names_a_bad_scenario_field(tmp_path, capsys) -> None:
    scenarios = tmp_path / "bad.yaml"
    scenarios.write_text("scenarios:\n  - name: up\n    pose_target: {frame: nowhere, "
                         "position: [0.3, 0.0, 0.5]}\n")
    assert main(["preview", str(bundled_urdf("panda")), str(scenarios), "--no-plots"]) == 1
    assert "scenario 'up': pose_target.frame 'nowhere' is not a frame" in capsys.readouterr().err


BRICK = """<robot name="brick"><link name="brick">
  <inertial><mass value="2"/><inertia ixx="0.0083" ixy="0" ixz="0" iyy="0.0083" iyz="0"
    izz="0.0133"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link></robot>"""


def test_preview_puts_its_scenarios_in_the_world_of_a_file(tmp_path, capsys) -> None:
    """--world gives every scenario without a world of its own the file's planes; the brick,
    pushed 20 N for 0.2 s on μ 0.5, slides 0.21 m (test/sim/test_preview_world.py), and the
    contact table says so; a bad world file is refused naming the field."""
    urdf, world = tmp_path / "brick.urdf", tmp_path / "ground.yaml"
    urdf.write_text(BRICK)
    world.write_text("planes:\n  - {normal: [0, 0, 1], point: [0, 0, 0], friction: 0.5}\n")
    scenarios = tmp_path / "push.yaml"
    scenarios.write_text(
        "start: [0, 0, 0.05, 0, 0, 0, 1]\nhorizon: 0.7\nscenarios:\n"
        "  - name: push\n    torque_profile: {frame: brick, times: [0], efforts: [[0, 0, 0, "
        "0, 0, 0]]}\n    pushes: [{frame: brick, wrench: [20, 0, 0, 0, 0, 0], start: 0.05, "
        "duration: 0.2}]\n")
    code = main(["preview", str(urdf), str(scenarios), "--floating-base", "--world", str(world),
                 "--no-plots"])
    out = capsys.readouterr().out
    assert code == 0, out
    row = out.split("contacts with the world")[1].splitlines()[3].split()
    assert row[0] == "push" and float(row[2]) == pytest.approx(207.7, abs=2.0)  # slip, mm
    world.write_text("planes:\n  - {normal: [0, 0, 0], point: [0, 0, 0], friction: 0.5}\n")
    assert main(["preview", str(urdf), str(scenarios), "--floating-base", "--world",
                 str(world), "--no-plots"]) == 1
    assert "planes[0].normal" in capsys.readouterr().err


def test_an_output_folder_of_an_earlier_run_is_refused(tmp_path, capsys) -> None:
    """One rule for every command that writes a folder (excite, preview, bag analyze and bag
    identify): a folder an earlier run wrote is refused, naming it, before any work, and its
    files are left as they were."""
    (tmp_path / "preview_joints.png").write_bytes(b"earlier")
    (tmp_path / "excitation.yaml").write_text("earlier\n")
    scenarios = share_directory() / "config" / "preview.yaml"
    commands = {
        "preview": ["preview", str(bundled_urdf("panda")), str(scenarios),
                    "--output", str(tmp_path)],
        "excite": ["excite", "--duration", "1", "--output", str(tmp_path)],
    }
    for command, arguments in commands.items():
        assert main(arguments) == 1, command
        err = capsys.readouterr().err
        assert f"output folder {tmp_path} already holds" in err, err
    assert (tmp_path / "preview_joints.png").read_bytes() == b"earlier"
    assert (tmp_path / "excitation.yaml").read_text() == "earlier\n"
