"""Joint states merged by joint name from messages that each carry some of a robot's joints
(an arm and its gripper published apart, one driver publishing two groups one after the
other), as robot_state_publisher merges them: the rule the nodes (ros.joint_states) and the
bag analysis (bag.reading) share. No ROS here: a message is its names and fields.

Every message is merged on its own, in arrival order: each joint keeps the values of the last
message that carried it and when that message arrived. The messages form *states*: a state is
a run of consecutive messages in which no joint of the robot repeats. A message carrying every
joint is a state of its own; the two halves of one driver cycle, or an arm's message and its
gripper's, make one state; the message that repeats a joint begins the next state. A consumer
that computes less often than messages arrive computes the newest state and counts the states
it never computed as superseded (not the messages: the halves of one state supersede nothing).
A state is *ready* to compute once it holds every joint the state before it held: a driver's
first half waits for its second, so a cycle is computed once, whole, and not also as the mixed
state of a new first half and the last second half. A consumer that waits for a state's rest
bounds the wait, for a group that stops or comes late.

The merged state is complete while every joint was heard within max_age; otherwise it is
refused, naming the joints not heard and when each was last heard.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from robodyn_ros.errors import RobodynError

NEVER_NS = 2**62  # ns: "heard" this long before the clock's origin: never
DEFAULT_MAX_AGE = 0.5  # s: a joint not heard for longer makes the merged state incomplete
FIELDS = ("position", "velocity", "effort")
LAYOUTS_KEPT = 16  # name lists whose layout is kept: a driver's groups, not a flood of new ones


class StateMergeError(RobodynError, ValueError):
    """A message that cannot be merged, or a merged state that is incomplete; the message
    names the field or the joints."""


@dataclass(frozen=True)
class MergedState:
    """A merged state in the robot's joint order: position, velocity and effort (n,), velocity
    and effort NaN for the joints whose last message had none (a message's NaN is refused)."""

    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


@dataclass(frozen=True)
class StateCounts:
    """The states the messages formed so far: begun, handled (computed or refused) and
    superseded (a newer state began before any was computed from them)."""

    begun: int
    handled: int
    superseded: int


class _Layout(NamedTuple):
    """A message's names, and where the robot's joints among them are: their indices in the
    robot and in the message, and their names."""

    names: tuple[str, ...]
    robot_index: np.ndarray
    message_index: np.ndarray
    joints: tuple[str, ...]


class StateGrouping:
    """Messages grouped into states as they arrive (module docstring), and the states a
    consumer that computes the newest one handled or left superseded."""

    def __init__(self) -> None:
        self._in_state: set[Hashable] = set()  # the joints of the current state's messages
        self._previous: frozenset[Hashable] | None = None  # those of the state before it
        self._begun = self._handled = self._superseded = 0
        self._current_handled = True  # no state yet: none to supersede

    @property
    def counts(self) -> StateCounts:
        """The states begun, handled and superseded so far."""
        return StateCounts(self._begun, self._handled, self._superseded)

    def join(self, joints: Collection[Hashable]) -> bool:
        """Put the joints of the next message into the current state, or begin a new state
        when one of them is in it already (a message without joints is in no state).

        Returns:
            Whether the message began a new state (the previous one, if any, is complete).
        """
        if not joints:
            return False
        begins = self._begun == 0 or not self._in_state.isdisjoint(joints)
        if begins:
            if self._begun:
                self._previous = frozenset(self._in_state)
            self._superseded += not self._current_handled
            self._begun += 1
            self._current_handled = False
            self._in_state.clear()
        self._in_state.update(joints)
        return begins

    @property
    def ready(self) -> bool:
        """Whether the current state holds every joint the state before it held (the first
        state is ready): one that does not is waiting for the rest of its messages."""
        return self._previous is None or self._in_state >= self._previous

    def mark_handled(self) -> None:
        """Count the current state as handled (computed, or refused); once however often."""
        if not self._current_handled:
            self._current_handled = True
            self._handled += 1


class StateMerge:
    """The newest state of a robot's joints from messages that may each carry some of them.

    Args:
        joint_names: the robot's joints, in the order of the merged state.
        max_age: s; see the module docstring.
    """

    def __init__(self, joint_names: Sequence[str], max_age: float = DEFAULT_MAX_AGE) -> None:
        self.joint_names = tuple(joint_names)
        self.max_age = max_age
        n = len(self.joint_names)
        self._values = np.zeros((len(FIELDS), n))  # position, velocity, effort
        self._has = np.zeros((len(FIELDS), n), dtype=bool)  # whether the last message had it
        self._heard = np.full(n, -NEVER_NS, dtype=np.int64)  # ns
        self._layouts: dict[tuple[str, ...], _Layout] = {}

    @property
    def heard_all(self) -> bool:
        """Whether every joint was heard at least once."""
        return bool((self._heard > -NEVER_NS).all())

    def add(
        self,
        names: Sequence[str],
        fields: Sequence[Sequence[float]],
        received_ns: int,
        source: str = "joint_states",
    ) -> None:
        """Merge one message.

        Args:
            names: its joint names (any order; joints not of the robot are ignored).
            fields: its position, velocity and effort, each empty or one value per name
                (position never empty).
            received_ns: when it arrived (ns).
            source: what the messages are, first in an error.

        Raises:
            StateMergeError: no names, a field whose length is not the names', or a NaN or
                inf for a robot joint (naming the joint and the field); nothing is merged.
        """
        layout = self._index(tuple(names), source)
        picked = picked_fields(fields, len(names), layout.message_index, layout.joints, source)
        for row, values in enumerate(picked):
            self._has[row, layout.robot_index] = values is not None
            if values is not None:
                self._values[row, layout.robot_index] = values
        self._heard[layout.robot_index] = received_ns

    def state(self, now_ns: int, source: str = "joint_states") -> MergedState:
        """The merged state (copies).

        Args:
            now_ns: now (ns, the clock of received_ns), for the age of each joint.

        Raises:
            StateMergeError: a joint was not heard within max_age (naming each and when it
                was last heard).
        """
        stale = np.flatnonzero(self._heard < heard_since(now_ns, self.max_age))
        if stale.size:
            ages = [f"{self.joint_names[i]} ({heard_ago(now_ns - self._heard[i])})"
                    for i in stale]
            raise StateMergeError(
                f"{source}: no state of joint(s) {', '.join(ages)} within "
                f"joint_states_max_age ({self.max_age:g} s); the merged state is incomplete "
                "and nothing is computed from it"
            )
        return MergedState(*np.where(self._has, self._values, np.nan))

    def _index(self, names: tuple[str, ...], source: str) -> _Layout:
        """Where the robot's joints a message carries are, in the robot and in the message,
        and their names; kept per name list, since each publisher (or each of a driver's
        groups) sends the same names every time."""
        layout = self._layouts.get(names)
        if layout is None:
            if not names:
                raise StateMergeError(f"{source}: name is empty (a JointState without joints)")
            where = {name: k for k, name in enumerate(names)}
            present = [(i, where[name]) for i, name in enumerate(self.joint_names)
                       if name in where]
            layout = _Layout(names, np.array([i for i, _ in present], dtype=np.int64),
                             np.array([k for _, k in present], dtype=np.int64),
                             tuple(self.joint_names[i] for i, _ in present))
            if len(self._layouts) >= LAYOUTS_KEPT:
                self._layouts.clear()
            self._layouts[names] = layout
        return layout


def picked_fields(
    fields: Sequence[Sequence[float]],
    count: int,
    index: np.ndarray,
    joints: Sequence[str],
    source: str,
) -> list[np.ndarray | None]:
    """The entries of a message's position, velocity and effort at `index` (its joints
    `joints`), each checked; None for an empty velocity or effort.

    Args:
        fields: position, velocity and effort, each empty or one value per name.
        count: how many names the message has.

    Raises:
        StateMergeError: a field whose length is not the names', or a NaN or inf at `index`
            (naming the joints and the field).
    """
    picked: list[np.ndarray | None] = []
    for field, entries in zip(FIELDS, fields, strict=True):
        if len(entries) == 0 and field != "position":
            picked.append(None)
            continue
        if len(entries) != count:
            raise StateMergeError(f"{source}: {field} has {len(entries)} entries for {count} names")
        values = np.asarray(entries, dtype=float)[index]
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise StateMergeError(
                f"{source}: {field} is non-finite (NaN or inf) for joint(s) "
                f"{', '.join(joints[int(i)] for i in bad)}"
            )
        picked.append(values)
    return picked


def heard_since(now_ns: int, max_age: float) -> int:
    """The arrival time (ns) before which an input is older than `max_age` (s) at `now_ns`:
    the rule of joint_states_max_age."""
    return now_ns - round(max_age * 1e9)


def heard_ago(elapsed_ns: int) -> str:
    """How long ago an input (a joint, the odometry) was last heard, for an error."""
    return "never heard" if elapsed_ns > NEVER_NS // 2 else f"heard {elapsed_ns * 1e-9:.3g} s ago"
