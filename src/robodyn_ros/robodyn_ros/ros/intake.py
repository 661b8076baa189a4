"""Newest-first intake of a subscription: a controller wants the latest state, not a backlog.

`NewestFirst.take` is called with the message the executor took; it takes whatever else the
middleware holds for the subscription at that moment and keeps only the newest, so a flood is
answered with its latest message at once instead of message by message behind it. The
counts are exact: each publisher numbers its messages (MessageInfo's
publication_sequence_number, per publisher_gid), so the messages sent are known, including any
the middleware dropped before they were taken; superseded = sent − handled (less a message
still held for its turn). The age of an answered message runs from its arrival in the
middleware (received_timestamp), so the time it waited in the queue counts.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from rclpy.serialization import deserialize_message
from rclpy.subscription import Subscription

if TYPE_CHECKING:
    from rclpy.subscription import MessageInfo

AGES_KEPT = 20_000  # ages kept for one diagnostics period's percentiles (2 s at 10 kHz)
# Share of a period's messages superseded above which the node says it does not keep up (WARN).
# A stream it keeps up with still has a few states that arrive together (the sender's jitter),
# which the counts report without a WARN in every report.
SUPERSEDED_WARN_SHARE = 0.05


@dataclass(frozen=True)
class Arrival:
    """The newest message of a take and when it arrived (ns, system clock).

    others: the newest message of each other publisher in the same take, oldest first (a
        subscriber that merges partial messages, such as joint states of an arm and a gripper
        published apart, needs them; the rest superseded their own publisher's).
    """

    message: Any
    received_ns: int
    others: tuple[Arrival, ...] = ()


class NewestFirst:
    """The newest-first intake of one subscription, with its counts and ages.

    Args:
        topic: the topic's name, for the diagnostics' keys.
    """

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.subscription: Subscription | None = None  # set once the node has created it
        self._lock = threading.Lock()
        self._streams: dict[bytes, tuple[int, int]] = {}  # publisher → (first, last) number
        self._unnumbered = 0  # messages whose middleware gives no sequence number
        self.taken = 0
        self.handled = 0
        self._ages: deque[float] = deque(maxlen=AGES_KEPT)
        self._period = (time.monotonic(), 0, 0, 0)  # start, sent, handled, superseded then

    @property
    def sent(self) -> int:
        """Messages the publishers sent since the first of each reached this node."""
        with self._lock:
            streams = sum(last - first + 1 for first, last in self._streams.values())
            return streams + self._unnumbered

    def take(self, message: Any, info: MessageInfo) -> Arrival:
        """The newest of `message` (just taken by the executor, with its MessageInfo) and what
        the middleware holds behind it, with the newest of each other publisher; the older
        ones are counted and dropped.

        Args:
            message, info: the subscription callback's arguments.

        Returns:
            The newest message and its arrival.
        """
        self._count(info)
        newest: dict[bytes | None, tuple[Any, MessageInfo]] = {_publisher(info): (message, info)}
        subscription = self.subscription
        if subscription is not None:  # taken serialized: only the kept ones are deserialized
            with subscription.handle:
                while (taken := subscription.handle.take_message(
                        subscription.msg_type, True)) is not None:
                    self._count(taken[1])
                    key = _publisher(taken[1])
                    newest.pop(key, None)  # reinserted last: the dict keeps arrival order
                    newest[key] = taken
        arrivals = [self._arrival(*kept) for kept in newest.values()]
        return Arrival(arrivals[-1].message, arrivals[-1].received_ns, tuple(arrivals[:-1]))

    def _arrival(self, message: Any, info: MessageInfo) -> Arrival:
        if isinstance(message, bytes):
            assert self.subscription is not None  # only a subscription's take gives bytes
            message = deserialize_message(message, self.subscription.msg_type)
        return Arrival(message, received_ns(info))

    def mark_handled(self) -> None:
        """Count one taken message as handled (answered, applied or rejected)."""
        self.handled += 1

    def mark_answered(self, arrival: Arrival) -> None:
        """Record the age of a message whose answer goes out now (call mark_handled too)."""
        self._ages.append((time.time_ns() - arrival.received_ns) * 1e-6)

    def diagnostic_values(self, pending: int = 0) -> tuple[bool, dict[str, str]]:
        """Whether more than SUPERSEDED_WARN_SHARE of the messages sent in the period since
        the last call were superseded (the node does not keep up), and the period's input and
        handled rates, the totals and the age percentiles (ms).

        Args:
            pending: messages taken and kept but not handled yet (a command held for the
                next step), which are not superseded.
        """
        now, sent, handled = time.monotonic(), self.sent, self.handled
        superseded = sent - handled - pending
        start, sent0, handled0, superseded0 = self._period
        self._period = (now, sent, handled, superseded)
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
        return superseded - superseded0 > SUPERSEDED_WARN_SHARE * (sent - sent0), values

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


def received_ns(info: MessageInfo) -> int:
    """When a message arrived in the middleware (ns, system clock; now where the middleware
    does not say)."""
    return info.get("received_timestamp") or time.time_ns()


def _publisher(info: MessageInfo) -> bytes | None:
    """The publisher of a message (its gid), None where the middleware does not give it."""
    publisher = info.get("publisher_gid")
    return bytes(publisher["data"]) if publisher is not None else None
