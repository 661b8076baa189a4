"""joint_states as robot_state_publisher and ros2_control's controllers take them: from
best-effort or reliable publishers, and merged by joint name across messages that each carry
some of the joints (an arm and its gripper published apart).

Each joint keeps the values of the last message that carried it and when that message
arrived. The state is complete while every joint of the robot was heard within
joint_states_max_age; otherwise it is refused, naming the joints not heard, and nothing is
computed from it. A message carrying every joint is the usual case and costs no more than
matching it by name.
"""

from __future__ import annotations

import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState

from robodyn_ros.ros.conversions import JointStateError, JointStateMap
from robodyn_ros.ros.parameters import ParameterSpec

NEVER_NS = 2**62  # ns: "heard" this long before the clock's origin: never

MAX_AGE_PARAMETER = ParameterSpec(
    "joint_states_max_age", 0.5,
    "s: a joint not heard on joint_states within this time (its last message arrived "
    "earlier) makes the merged state incomplete: it is reported and nothing is computed",
    bounds=(1e-3, 3600.0),
)


def input_qos(depth: int) -> dict:
    """The keyword arguments of create_subscription for a stream input: best effort, so that
    both best-effort (sensor data) and reliable publishers connect, keeping `depth` messages,
    with the QoS overrides of robot_state_publisher (``qos_overrides.<topic>.subscription.*``
    parameters)."""
    return {
        "qos_profile": QoSProfile(depth=depth, reliability=ReliabilityPolicy.BEST_EFFORT),
        "qos_overriding_options": QoSOverridingOptions.with_default_policies(),
    }


class JointStateMerge:
    """The newest full state of a robot's joints from JointState messages that may each carry
    some of them.

    Args:
        joint_map: the robot's JointStateMap (its joints, and its coupling for mimic joints).
        max_age: s; see the module docstring.
    """

    def __init__(self, joint_map: JointStateMap, max_age: float) -> None:
        self.joint_map = joint_map
        self.max_age = max_age
        n = len(joint_map.joint_names)
        self._q, self._qd, self._effort = np.zeros(n), np.zeros(n), np.zeros(n)
        self._has_effort = np.zeros(n, dtype=bool)
        self._heard = np.full(n, -NEVER_NS, dtype=np.int64)  # ns
        self._names: tuple[str, ...] | None = None  # the names of the last message
        self._full = False  # whether they are all the robot's joints
        self._robot_index = self._message_index = np.empty(0, dtype=np.int64)
        self._full_state: tuple = ()  # the last full message's (q, q̇, τ or None)

    def update(
        self, message: JointState, received_ns: int, now_ns: int, source: str = "joint_states"
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Merge a message into the state; the state so merged, when complete.

        Args:
            message: a JointState, with any of the robot's joints and others.
            received_ns: when it arrived (ns, system clock).
            now_ns: now (ns, same clock), for the age of the joints it lacks.
            source: what the messages are, first in an error.

        Returns:
            (q, q̇, τ or None) in the robot's joint order, as JointStateMap.state: τ only
            when the last message of every joint had effort.

        Raises:
            JointStateError: the message is malformed (see `add`), or a joint was not heard
                within max_age (naming it).
        """
        if self.add(message, received_ns, source):
            return self._full_state
        stale = np.flatnonzero(self._heard < heard_since(now_ns, self.max_age))
        if stale.size:
            names = self.joint_map.joint_names
            ages = [f"{names[i]} ({heard_ago(now_ns - self._heard[i])})" for i in stale]
            raise JointStateError(
                f"{source}: no state of joint(s) {', '.join(ages)} within "
                f"joint_states_max_age ({self.max_age:g} s); the merged state is incomplete "
                "and nothing is computed from it"
            )
        effort = self._effort.copy() if self._has_effort.all() else None
        return self._q.copy(), self._qd.copy(), effort

    def add(self, message: JointState, received_ns: int, source: str = "joint_states") -> bool:
        """Merge a message into the state.

        Returns:
            Whether it carried every joint of the robot.

        Raises:
            JointStateError: no names, a field whose length is not the names', or a NaN or
                inf for a robot joint (naming the joint and the field); nothing is merged.
        """
        names = tuple(message.name)
        if names != self._names:
            self._layout(names, source)
        if not self._full:
            self._merge(message, received_ns, source)
            return False
        q, qd, effort = self._full_state = self.joint_map.state(message, source)
        self._q[:], self._qd[:], self._heard[:] = q, qd, received_ns
        self._has_effort[:] = effort is not None
        if effort is not None:
            self._effort[:] = effort
        return True

    def _layout(self, names: tuple[str, ...], source: str) -> None:
        """Where the robot's joints are in a message's names."""
        if not names:
            raise JointStateError(f"{source}: name is empty (a JointState without joints)")
        where = {name: k for k, name in enumerate(names)}
        present = [(i, where[name]) for i, name in enumerate(self.joint_map.joint_names)
                   if name in where]
        self._robot_index = np.array([i for i, _ in present], dtype=np.int64)
        self._message_index = np.array([k for _, k in present], dtype=np.int64)
        self._full = len(present) == len(self.joint_map.joint_names)
        self._names = names

    def _merge(self, message: JointState, received_ns: int, source: str) -> None:
        """Take the robot joints a partial message carries."""
        count = len(message.name)
        values = {}
        for field in ("position", "velocity", "effort"):
            entries = getattr(message, field)
            if len(entries) == 0 and field != "position":
                continue
            if len(entries) != count:
                raise JointStateError(
                    f"{source}: {field} has {len(entries)} entries for {count} names"
                )
            picked = np.asarray(entries, dtype=float)[self._message_index]
            bad = np.flatnonzero(~np.isfinite(picked))
            if bad.size:
                joints = [self.joint_map.joint_names[self._robot_index[i]] for i in bad]
                raise JointStateError(
                    f"{source}: {field} is non-finite (NaN or inf) for joint(s) "
                    f"{', '.join(joints)}"
                )
            values[field] = picked
        index = self._robot_index
        self._q[index] = values["position"]
        self._qd[index] = values.get("velocity", 0.0)
        self._has_effort[index] = "effort" in values
        if "effort" in values:
            self._effort[index] = values["effort"]
        self._heard[index] = received_ns


def heard_since(now_ns: int, max_age: float) -> int:
    """The arrival time (ns) before which an input is older than `max_age` (s) at `now_ns`:
    the rule of joint_states_max_age."""
    return now_ns - round(max_age * 1e9)


def heard_ago(elapsed_ns: int) -> str:
    """How long ago an input (a joint, the odometry) was last heard, for an error."""
    return "never heard" if elapsed_ns > NEVER_NS // 2 else f"heard {elapsed_ns * 1e-9:.3g} s ago"
