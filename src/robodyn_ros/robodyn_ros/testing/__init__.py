"""Helpers for the tests and benchmarks, never imported by the library itself.

``robodyn_ros.testing.pinocchio_oracle`` needs Pinocchio (``pip install pin``), a test and
benchmark dependency only; import it from its module. The example-robot helpers re-exported here
need nothing beyond the standard library.
"""

from robodyn_ros.testing.example_robots import EXAMPLE_ROBOTS, PANDA_FINGERS, example_robot_urdf

__all__ = ["EXAMPLE_ROBOTS", "PANDA_FINGERS", "example_robot_urdf"]
