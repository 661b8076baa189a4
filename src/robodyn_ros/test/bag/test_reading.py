"""bag.reading: a bag whose metadata says its efforts lag its states (EFFORT_LAG_KEY, what
`robodyn sim --record` writes) is read with each effort interpolated at its stamp plus the
lag; a lag that is not seconds ≥ 0 is refused naming the key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from robodyn_ros.bag.errors import BagError
from robodyn_ros.bag.reading import EFFORT_LAG_KEY, read_joint_states
from robodyn_ros.bag.writing import JointStateSeries, write_joint_states

JOINTS = ("a", "b")
PERIOD = 10_000_000  # ns


def lagged_bag(path: Path, lag: str | None) -> Path:
    """Ten states 10 ms apart whose efforts are the commands held over the period before each
    stamp: joint a's ramp 0, 1, ..., joint b's a step; the lag in the metadata when given."""
    stamps = PERIOD * np.arange(1, 11)
    effort = np.column_stack([np.arange(10.0), np.where(np.arange(10) < 5, 0.0, 2.0)])
    write_joint_states(path, "sqlite3",
                       JointStateSeries(JOINTS, stamps, np.zeros((10, 2)), np.zeros((10, 2)),
                                        effort))
    if lag is not None:
        metadata = path / "metadata.yaml"
        document = yaml.safe_load(metadata.read_text())
        document["rosbag2_bagfile_information"]["custom_data"] = {EFFORT_LAG_KEY: lag}
        metadata.write_text(yaml.safe_dump(document))
    return path


def test_efforts_are_read_at_their_stamps_plus_the_lag(tmp_path) -> None:
    run = read_joint_states(lagged_bag(tmp_path / "run", "0.005"), "/joint_states", JOINTS)
    assert run.effort is not None
    np.testing.assert_allclose(run.effort[:-1, 0], np.arange(9.0) + 0.5)  # halfway to the next
    np.testing.assert_allclose(run.effort[3:7, 1], [0.0, 1.0, 2.0, 2.0])
    np.testing.assert_allclose(run.effort[-1], [9.0, 2.0])  # past the end: the last recorded


def test_a_bag_without_a_lag_is_read_as_recorded(tmp_path) -> None:
    run = read_joint_states(lagged_bag(tmp_path / "run", None), "/joint_states", JOINTS)
    assert run.effort is not None
    np.testing.assert_array_equal(run.effort[:, 0], np.arange(10.0))


@pytest.mark.parametrize("lag", ["-0.005", "soon", "nan"])
def test_a_lag_that_is_not_seconds_is_named(tmp_path, lag) -> None:
    with pytest.raises(BagError, match=f"custom_data {EFFORT_LAG_KEY} must be seconds ≥ 0; "
                       f"got '{lag}'"):
        read_joint_states(lagged_bag(tmp_path / "run", lag), "/joint_states", JOINTS)
