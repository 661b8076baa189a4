"""The merge rule the nodes and the bag analysis share (robodyn_ros.robot.state_merge), without
ROS: messages merged by name in arrival order form states (runs in which no joint repeats),
and a consumer that computes the newest state counts the states it skipped, not messages."""

from __future__ import annotations

import numpy as np

from robodyn_ros.robot.state_merge import StateGrouping, StateMerge

ARM, HEAD, TAIL = ["j1", "j2", "j3", "j4"], ["j1", "j2"], ["j3", "j4"]


def test_the_halves_of_a_cycle_are_one_state_and_supersede_nothing() -> None:
    grouping = StateGrouping()
    for _ in range(3):  # each cycle computed once, after its second half
        assert grouping.join(HEAD)
        assert not grouping.join([*TAIL, "gripper"])
        grouping.mark_handled()
    counts = grouping.counts
    assert (counts.begun, counts.handled, counts.superseded) == (3, 3, 0)


def test_states_skipped_by_a_consumer_behind_are_superseded() -> None:
    """Two cycles of halves and one full message arrive before one computation: the first
    cycle and the second are superseded (the full message repeats their joints)."""
    grouping = StateGrouping()
    for joints in (HEAD, TAIL, HEAD, TAIL, ARM):
        grouping.join(joints)
    grouping.mark_handled()
    grouping.mark_handled()  # the same state computed again counts once
    counts = grouping.counts
    assert (counts.begun, counts.handled, counts.superseded) == (3, 1, 2)
    assert not grouping.join([])  # a message without joints is in no state


def test_a_state_is_ready_once_it_holds_the_joints_of_the_state_before() -> None:
    """A driver's halves: the first state is ready on its first half (nothing to compare
    with), later ones on their second. An arm that goes on alone after its gripper stopped is
    ready again from its second message on."""
    grouping = StateGrouping()
    grouping.join(HEAD)
    assert grouping.ready
    grouping.join(TAIL)
    assert grouping.ready
    for _ in range(3):
        grouping.join(HEAD)
        assert not grouping.ready
        grouping.join(TAIL)
        assert grouping.ready
    grouping.join(HEAD)
    assert not grouping.ready  # the state before held TAIL too
    grouping.join(HEAD)
    assert grouping.ready  # it held HEAD only
    grouping.join(ARM)
    assert grouping.ready


def test_each_joint_keeps_its_last_message() -> None:
    merge = StateMerge(ARM, max_age=0.5)
    merge.add(ARM, ([1.0] * 4, [0.1] * 4, []), 0)
    merge.add(["x", *TAIL], ([9.0, 3.0, 4.0], [], [5.0, 6.0, 7.0]), 10)
    state = merge.state(20)
    np.testing.assert_array_equal(state.position, [1.0, 1.0, 3.0, 4.0])
    np.testing.assert_array_equal(state.velocity, [0.1, 0.1, np.nan, np.nan])
    np.testing.assert_array_equal(state.effort, [np.nan, np.nan, 6.0, 7.0])
