"""dynamics.tree: the packed joint rows the kernels read."""

from __future__ import annotations

import numpy as np

from robodyn_ros.dynamics.tree import frame_axes


def test_frame_axes_name_the_frame_axis_of_each_revolute_joint_about_one() -> None:
    subspaces = np.array([
        [0, 0, 0, 1, 0, 0],        # about +x
        [0, 0, 0, 0, -1, 0],       # about −y
        [0, 0, 0, 0, 0, -1],       # about −z
        [0, 0, 0, 0.6, 0.8, 0],    # about an axis of no frame
        [0, 0, 1, 0, 0, 0],        # prismatic along z
        [0, 0, 0, 0, 0, 0],        # fixed
    ], dtype=float)
    assert frame_axes(subspaces).tolist() == [0, 1, 2, -1, -1, -1]
