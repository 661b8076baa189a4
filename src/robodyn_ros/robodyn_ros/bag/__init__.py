"""Rosbag analysis without ROS: joint states out of rosbag2 files (sqlite3 or mcap, with
rosbags), the dynamics of the recorded run, and the results as a bag, a CSV, plots and a report.

    run = read_joint_states("run_bag", "/joint_states", robot.joint_names)
    analysis = analyze(robot, run, frames=["tool0"], pool=backend("processes"))
    analysis.rms_residual()
"""

from robodyn_ros.bag.analysis import Analysis, FrameMeasures, analyze
from robodyn_ros.bag.errors import BagError, BagWarning
from robodyn_ros.bag.pipeline import AnalysisOptions, AnalysisOutputs, analyze_bag
from robodyn_ros.bag.reading import RecordedRun, read_joint_states
from robodyn_ros.bag.writing import JointStateSeries, write_dynamics, write_joint_states

__all__ = [
    "Analysis",
    "AnalysisOptions",
    "AnalysisOutputs",
    "BagError",
    "BagWarning",
    "FrameMeasures",
    "JointStateSeries",
    "RecordedRun",
    "analyze",
    "analyze_bag",
    "read_joint_states",
    "write_dynamics",
    "write_joint_states",
]
