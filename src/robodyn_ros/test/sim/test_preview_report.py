"""The preview's figures (sim.preview_report), as `robodyn preview` writes them: a panel per
joint with every scenario in the legend, the joint's limits as lines and units on the axes;
the frame paths with each scenario's start and target where the scenario has one, and the
frame named."""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.figures.plotting import LIMIT, START, TARGET, pyplot
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.preview_report import joints_figure, paths_figure, scenario_target

from helpers.figures import drawn, legend_labels
from helpers.preview_scenarios import FRAME, HORIZON, Q0, scenarios


@pytest.fixture(scope="module")
def previewed():
    """The bundled Panda and its shared scenarios (pose target, joint trajectory, torque
    profile) with their results."""
    robot = Robot.from_urdf(bundled_urdf("panda"))
    chosen = scenarios(robot)
    return robot, chosen, preview(robot, chosen, PreviewSettings(horizon=HORIZON), Q0)


def test_joints_figure_has_a_legend_limits_and_units(previewed) -> None:
    robot, chosen, results = previewed
    figure = joints_figure(robot, results)
    try:
        shown = [axes for axes in figure.axes if axes.get_visible()]
        by_joint = {axes.get_title(loc="left"): axes for axes in shown}
        assert sorted(by_joint) == sorted(robot.joint_names) and len(shown) == robot.nv
        for k, joint in enumerate(robot.joint_names):
            axes = by_joint[joint]
            assert axes.get_ylabel() == "q [rad]"
            limits = sorted(line.get_ydata()[0] for line in drawn(axes, LIMIT))
            assert limits == [robot.model.lower[k], robot.model.upper[k]]
            assert "rad" in axes.get_title(loc="right")
            for line, result in zip(axes.get_lines(), results, strict=False):
                np.testing.assert_array_equal(line.get_ydata(), result.q[:, k])
        assert {"time [s]"} == {axes.get_xlabel() for axes in shown if axes.get_xlabel()}
        assert {scenario.name for scenario in chosen} | {"limit"} <= legend_labels(figure)
    finally:
        pyplot().close(figure)


def test_paths_figure_marks_start_and_target_and_names_the_frame(previewed) -> None:
    robot, chosen, results = previewed
    figure = paths_figure(robot, chosen, results)
    try:
        top, side = figure.axes
        assert FRAME in figure.get_suptitle()
        assert (top.get_xlabel(), top.get_ylabel()) == ("x [m]", "y [m]")
        assert (side.get_xlabel(), side.get_ylabel()) == ("x [m]", "z [m]")
        assert {"start", "target", *(scenario.name for scenario in chosen)} <= legend_labels(
            figure)
        targets = [scenario_target(robot, scenario) for scenario in chosen]
        reach, wave, push = targets
        np.testing.assert_array_equal(reach, chosen[0].position)
        np.testing.assert_allclose(wave, robot.frame_pose(chosen[1].positions[-1], FRAME)[:3, 3])
        assert push is None  # a torque profile has no target
        for axes, vertical in ((top, 1), (side, 2)):
            starts = [(line.get_xdata()[0], line.get_ydata()[0]) for line in drawn(axes, START)]
            assert starts == [(r.frame_path[0, 0, 3], r.frame_path[0, vertical, 3])
                              for r in results]
            marked = [(line.get_xdata()[0], line.get_ydata()[0]) for line in drawn(axes, TARGET)]
            assert marked == [(target[0], target[vertical]) for target in targets
                              if target is not None]
    finally:
        pyplot().close(figure)
