"""The intake of a subscription: a controller wants the latest state, not a backlog.

Each callback takes the message the executor took and whatever else the middleware holds for
the subscription at that moment, so a flood is answered with its latest state at once instead
of message by message behind it:

- `NewestFirst` (commands, targets) keeps only the newest message; superseded = sent −
  handled (less a message still held for its turn).
- `InArrivalOrder` (joint states, which may each carry some of the joints) gives every message
  in arrival order, so that each is merged; the consumer computes the newest merged state and
  counts merged states, not messages, as handled or superseded (robodyn_ros.robot.state_merge).

The message counts are exact: each publisher numbers its messages (MessageInfo's
publication_sequence_number, per publisher_gid), so the messages sent are known, including any
the middleware dropped before they were taken. The age of an answered message runs from its
arrival in the middleware (received_timestamp), so the time it waited in the queue counts.
"""

from __future__ import annotations

import struct
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from rclpy.serialization import deserialize_message
from rclpy.subscription import Subscription

from robodyn_ros.robot.state_merge import StateGrouping

if TYPE_CHECKING:
    from rclpy.subscription import MessageInfo

AGES_KEPT = 20_000  # ages kept for one diagnostics period's percentiles (2 s at 10 kHz)
# Share of a period's messages superseded above which the node says it does not keep up (WARN).
# A stream it keeps up with still has a few states that arrive together (the sender's jitter),
# which the counts report without a WARN in every report.
SUPERSEDED_WARN_SHARE = 0.05
# s: how long a take whose newest state lacks the rest of its messages polls the middleware
# for them before the callback returns: a driver sends a cycle's second half right behind the
# first, and taking it here saves the executor a whole turn (ros.joint_states.HeldStates
# waits longer, on a timer).
REST_POLL = 2e-4


@dataclass(frozen=True)
class Arrival:
    """A message taken and when it arrived (ns, system clock)."""

    message: Any
    received_ns: int


@dataclass(frozen=True)
class Taken:
    """A message as the subscription took it: the message, or its serialized bytes where this
    intake took it from the middleware itself, and its MessageInfo."""

    message: Any
    info: MessageInfo


class Intake:
    """What the intakes of a subscription share: the subscription, the messages its publishers
    sent (numbered), the messages taken, and the ages of the answered ones.

    Args:
        topic: the topic's name, for the diagnostics' keys.
    """

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.subscription: Subscription[Any] | None = None  # set once the node has created it
        self._lock = threading.Lock()
        self._streams: dict[bytes, tuple[int, int]] = {}  # publisher → (first, last) number
        self._unnumbered = 0  # messages whose middleware gives no sequence number
        self.taken = 0
        self._ages: deque[float] = deque(maxlen=AGES_KEPT)
        self._period = (time.monotonic(), 0, 0, 0, 0)  # start, sent, begun, handled, superseded

    @property
    def sent(self) -> int:
        """Messages the publishers sent since the first of each reached this node."""
        with self._lock:
            streams = sum(last - first + 1 for first, last in self._streams.values())
            return streams + self._unnumbered

    def mark_answered(self, arrival: Arrival) -> None:
        """Record the age of a message whose answer goes out now."""
        self._ages.append((time.time_ns() - arrival.received_ns) * 1e-6)

    def _drain(self, message: Any, info: MessageInfo) -> list[Taken]:
        """`message` (just taken by the executor, with its MessageInfo) and every message the
        middleware holds behind it, in arrival order, each counted; those taken here are
        serialized bytes (see `_arrival`)."""
        self._count(info)
        taken = [Taken(message, info)]
        while (held := self._take_held()) is not None:
            taken.append(held)
        return taken

    def _take_held(self) -> Taken | None:
        """The next message the middleware holds for the subscription (serialized), counted;
        None when it holds none."""
        subscription = self.subscription
        if subscription is None:
            return None
        with subscription.handle:
            held = subscription.handle.take_message(subscription.msg_type, True)
        if held is None:
            return None
        message, info = held  # rclpy's (serialized message, MessageInfo)
        self._count(info)
        return Taken(message, info)

    def _arrival(self, taken: Taken) -> Arrival:
        """A taken message, deserialized if it was taken serialized."""
        message = taken.message
        if isinstance(message, bytes):
            assert self.subscription is not None  # only a subscription's take gives bytes
            message = deserialize_message(message, self.subscription.msg_type)
        return Arrival(message, received_ns(taken.info))

    def _report(self, begun: int, handled: int, superseded: int) -> tuple[bool, dict[str, str]]:
        """Whether more than SUPERSEDED_WARN_SHARE of what began in the period since the last
        call (a message, or a merged state) was superseded, and the period's input and handled
        rates, the totals and the age percentiles (ms)."""
        now, sent = time.monotonic(), self.sent
        start, sent0, begun0, handled0, superseded0 = self._period
        self._period = (now, sent, begun, handled, superseded)
        elapsed = max(now - start, 1e-9)
        ages = np.array([self._ages.popleft() for _ in range(len(self._ages))])
        topic = self.topic
        values = {
            f"{topic} input rate (Hz)": f"{(sent - sent0) / elapsed:.1f}",
            f"{topic} handled rate (Hz)": f"{(handled - handled0) / elapsed:.1f}",
            f"{topic} sent": str(sent),
            f"{topic} handled": str(handled),
            f"{topic} superseded": str(superseded),
            f"{topic} dropped by the middleware": str(sent - self.taken),
            f"{topic} age p50 (ms)": f"{np.percentile(ages, 50):.3f}" if ages.size else "",
            f"{topic} age p99 (ms)": f"{np.percentile(ages, 99):.3f}" if ages.size else "",
        }
        return superseded - superseded0 > SUPERSEDED_WARN_SHARE * (begun - begun0), values

    def _count(self, info: MessageInfo) -> None:
        self.taken += 1
        number, publisher = info.get("publication_sequence_number"), info.get("publisher_gid")
        if number is None or publisher is None:
            with self._lock:
                self._unnumbered += 1
            return
        key = bytes(publisher["data"])
        with self._lock:
            first, last = self._streams.get(key, (number, number))
            self._streams[key] = (min(first, number), max(last, number))


class NewestFirst(Intake):
    """The newest-first intake of one subscription (a command, a target): the newest message
    taken is the one that counts; superseded = sent − handled (less a message still held for
    its turn)."""

    def __init__(self, topic: str) -> None:
        super().__init__(topic)
        self.handled = 0

    def take(self, message: Any, info: MessageInfo) -> Arrival:
        """The newest of `message` (just taken by the executor, with its MessageInfo) and what
        the middleware holds behind it; the older ones are counted and dropped undeserialized.

        Args:
            message, info: the subscription callback's arguments.
        """
        return self._arrival(self._drain(message, info)[-1])

    def mark_handled(self) -> None:
        """Count one taken message as handled (answered, applied or rejected)."""
        self.handled += 1

    def diagnostic_values(self, pending: int = 0) -> tuple[bool, dict[str, str]]:
        """Whether more than SUPERSEDED_WARN_SHARE of the messages sent in the period since
        the last call were superseded (the node does not keep up), and the period's input and
        handled rates, the totals and the age percentiles (ms).

        Args:
            pending: messages taken and kept but not handled yet (a command held for the
                next step), which are not superseded.
        """
        sent = self.sent
        return self._report(sent, self.handled, sent - self.handled - pending)


class InArrivalOrder(Intake):
    """The intake of a JointState subscription whose every message counts (partial states
    merged by joint name): the messages taken, in arrival order, grouped into merged states
    by their names (state_merge.StateGrouping), which are what is counted as handled or
    superseded. A message whose every joint a later message of the same take carries would
    only be overwritten before the state is computed: it is counted, not deserialized."""

    def __init__(self, topic: str) -> None:
        super().__init__(topic)
        self.states = StateGrouping()

    def take(self, message: Any, info: MessageInfo) -> list[Arrival]:
        """`message` (just taken by the executor, with its MessageInfo) and the messages the
        middleware holds behind it, and while the newest state lacks the rest of its messages
        those that arrive within REST_POLL, less those a later one overwrites, in arrival
        order.

        Args:
            message, info: the subscription callback's arguments.
        """
        taken = self._drain(message, info)
        names = [joint_state_names(held.message) if isinstance(held.message, bytes)
                 else held.message.name for held in taken]
        for joints in names:
            self.states.join(joints)
        deadline = time.perf_counter() + REST_POLL
        while not self.states.ready and time.perf_counter() < deadline:
            if (held := self._take_held()) is not None:
                taken.append(held)
                names.append(joint_state_names(held.message))
                self.states.join(names[-1])
        kept: list[Taken] = []
        later: set[str] = set()
        for held, joints in zip(reversed(taken), reversed(names), strict=True):
            if not joints or not later.issuperset(joints):  # none: refused by the merge
                kept.append(held)
            later.update(joints)
        return [self._arrival(held) for held in reversed(kept)]

    def mark_handled(self) -> None:
        """Count the newest merged state as handled (computed or refused)."""
        self.states.mark_handled()

    def diagnostic_values(self) -> tuple[bool, dict[str, str]]:
        """Whether more than SUPERSEDED_WARN_SHARE of the merged states begun in the period
        since the last call were superseded (the computations fall behind), and the period's
        message rate and handled rate (states), the totals (messages sent and dropped; states
        begun, handled and superseded) and the age percentiles (ms)."""
        counts = self.states.counts
        behind, values = self._report(counts.begun, counts.handled, counts.superseded)
        return behind, {**values, f"{self.topic} states": str(counts.begun)}


def joint_state_names(raw: bytes) -> tuple[str, ...]:
    """The names of a serialized sensor_msgs/JointState (CDR, either byte order), read
    without deserializing the rest; () when the bytes are not one."""
    order = "<" if raw[1:2] == b"\x01" else ">"
    data = memoryview(raw)[4:]  # past the encapsulation header; CDR aligns from here
    try:
        cursor = 8  # past header.stamp
        frame_id = struct.unpack_from(f"{order}I", data, cursor)[0]
        cursor = _aligned(cursor + 4 + frame_id)
        (count,) = struct.unpack_from(f"{order}I", data, cursor)
        cursor += 4
        names = []
        for _ in range(count):
            cursor = _aligned(cursor)
            (size,) = struct.unpack_from(f"{order}I", data, cursor)
            names.append(bytes(data[cursor + 4 : cursor + 3 + size]).decode())
            cursor += 4 + size
    except (struct.error, UnicodeDecodeError):
        return ()
    return tuple(names)


def _aligned(cursor: int) -> int:
    """The next multiple of 4 (the alignment of CDR's lengths)."""
    return -(-cursor // 4) * 4


def received_ns(info: MessageInfo) -> int:
    """When a message arrived in the middleware (ns, system clock; now where the middleware
    does not say)."""
    return info.get("received_timestamp") or time.time_ns()


