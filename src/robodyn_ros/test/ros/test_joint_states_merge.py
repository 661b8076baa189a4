"""JointStateMerge against a dense reference, property-based: any sequence of JointState
messages, each carrying any subset of the robot's joints (in any order, with joints of other
robots), arriving at any times, gives each joint the values of the last message that carried
it, and is refused exactly while some joint was not heard within max_age, naming those."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sensor_msgs.msg import JointState

from robodyn_ros.ros.conversions import JointStateError, JointStateMap
from robodyn_ros.ros.joint_states import JointStateMerge

JOINTS = [f"j{k}" for k in range(5)]
OTHERS = ["gripper", "wheel"]
MAX_AGE = 0.5  # s
MS = 1_000_000  # ns


@st.composite
def messages(draw):
    """(message, arrival ms) in arrival order: each a shuffled subset of the robot's joints
    and others, positions and velocities drawn, efforts in some."""
    count = draw(st.integers(1, 12))
    arrivals = sorted(draw(st.lists(st.integers(0, 2000), min_size=count, max_size=count)))
    drawn = []
    for arrival in arrivals:
        names = draw(st.lists(st.sampled_from(JOINTS + OTHERS), min_size=1, unique=True))
        values = st.floats(-10.0, 10.0, allow_nan=False)
        position = draw(st.lists(values, min_size=len(names), max_size=len(names)))
        velocity = draw(st.one_of(st.just([]), st.lists(values, min_size=len(names),
                                                        max_size=len(names))))
        effort = draw(st.one_of(st.just([]), st.lists(values, min_size=len(names),
                                                      max_size=len(names))))
        drawn.append((JointState(name=names, position=position, velocity=velocity,
                                 effort=effort), arrival))
    return drawn


@settings(max_examples=300, deadline=None)
@given(messages(), st.integers(0, 600))
def test_each_joint_holds_its_last_message_and_stale_joints_are_named(sequence, wait) -> None:
    merge = JointStateMerge(JointStateMap(JOINTS), MAX_AGE)
    last: dict[str, tuple[float, float, float | None, int]] = {}  # the reference
    for message, arrival in sequence:
        merge.add(message, arrival * MS)
        for k, name in enumerate(message.name):
            if name in JOINTS:
                last[name] = (message.position[k],
                              message.velocity[k] if message.velocity else 0.0,
                              message.effort[k] if message.effort else None, arrival)
    final, final_arrival = sequence[-1]
    now = (final_arrival + wait) * MS
    stale = [name for name in JOINTS
             if name not in last or now - last[name][3] * MS > MAX_AGE * 1e9]
    if stale:
        with pytest.raises(JointStateError) as error:
            merge.update(final, final_arrival * MS, now)
        named = str(error.value).split("within")[0]
        assert all(f"{name} (" in named for name in stale), (stale, str(error.value))
        assert not any(f"{name} (" in named for name in JOINTS if name not in stale)
        return
    q, qd, effort = merge.update(final, final_arrival * MS, now)
    np.testing.assert_array_equal(q, [last[name][0] for name in JOINTS])
    np.testing.assert_array_equal(qd, [last[name][1] for name in JOINTS])
    efforts = [last[name][2] for name in JOINTS]
    if any(value is None for value in efforts):
        assert effort is None
    else:
        np.testing.assert_array_equal(effort, efforts)


def test_a_malformed_message_is_refused_and_merges_nothing() -> None:
    merge = JointStateMerge(JointStateMap(JOINTS), MAX_AGE)
    merge.add(JointState(name=JOINTS, position=[1.0] * 5), 0)
    bad = JointState(name=["j1", "j2"], position=[2.0, float("nan")])
    with pytest.raises(JointStateError, match=r"position is non-finite .* for joint.s. j2"):
        merge.add(bad, MS)
    short = JointState(name=["j1", "j2"], position=[2.0, 3.0], velocity=[0.0])
    with pytest.raises(JointStateError, match="velocity has 1 entries for 2 names"):
        merge.add(short, MS)
    q, _, _ = merge.update(JointState(name=["j0"], position=[1.0]), 2 * MS, 2 * MS)
    np.testing.assert_array_equal(q, np.ones(5))
