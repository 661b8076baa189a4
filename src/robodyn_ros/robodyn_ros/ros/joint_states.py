"""joint_states as robot_state_publisher and ros2_control's controllers take them: from
best-effort or reliable publishers, and merged by joint name across messages that each carry
some of the joints (an arm and its gripper published apart, or one driver's two groups one
after the other): the merge of robodyn_ros.robot.state_merge on JointState messages.

Every message is merged on arrival, in arrival order; a node computes the newest merged state
and counts states (not messages) as computed or superseded (state_merge). The state is
complete while every joint of the robot was heard within joint_states_max_age; otherwise it is
refused, naming the joints not heard, and nothing is computed from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState

from robodyn_ros.robot.state_merge import DEFAULT_MAX_AGE, StateMerge, StateMergeError
from robodyn_ros.ros.conversions import JointStateError, JointStateMap, RobotState
from robodyn_ros.ros.parameters import ParameterSpec

if TYPE_CHECKING:
    from robodyn_ros.ros.guard import NodeHealth
    from robodyn_ros.ros.intake import Arrival, InArrivalOrder
    from robodyn_ros.ros.robot_node import RobotNode

MAX_AGE_PARAMETER = ParameterSpec(
    "joint_states_max_age", DEFAULT_MAX_AGE,
    "s: a joint not heard on joint_states within this time (its last message arrived "
    "earlier) makes the merged state incomplete: it is reported and nothing is computed",
    bounds=(1e-3, 3600.0),
)


GROUP_WAIT_PARAMETER = ParameterSpec(
    "joint_states_group_wait", 0.002,
    "s: how long a state whose messages do not yet hold every joint the state before held (a "
    "driver's first half) waits for the rest before it is computed as merged so far",
    bounds=(1e-4, 1.0), read_only=True,
)


def input_qos(depth: int) -> dict[str, Any]:
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
        self._merge = StateMerge(joint_map.joint_names, max_age)

    @property
    def max_age(self) -> float:
        """s: joint_states_max_age."""
        return self._merge.max_age

    @max_age.setter
    def max_age(self, value: float) -> None:
        self._merge.max_age = value

    def add(self, message: JointState, received_ns: int, source: str = "joint_states") -> None:
        """Merge a message into the state.

        Raises:
            JointStateError: no names, a field whose length is not the names', or a NaN or
                inf for a robot joint (naming the joint and the field); nothing is merged.
        """
        fields = (message.position, message.velocity, message.effort)
        try:
            self._merge.add(message.name, fields, received_ns, source)
        except StateMergeError as error:
            raise JointStateError(str(error)) from error

    def add_arrivals(self, arrivals: Sequence[Arrival], health: NodeHealth) -> Arrival | None:
        """Merge the messages of a take in arrival order; one that is refused is reported to
        the node's health as a rejected joint_states message, and the others are merged.

        Returns:
            The newest message merged (the header its state is answered under), None when
            every one was refused.
        """
        newest = None
        for arrival in arrivals:
            try:
                self.add(arrival.message, arrival.received_ns)
            except JointStateError as refusal:
                health.reject("joint_states", str(refusal))
                continue
            newest = arrival
        return newest

    def state(self, now_ns: int, source: str = "joint_states") -> RobotState:
        """The merged state.

        Args:
            now_ns: now (ns, system clock), for the age of each joint.

        Returns:
            The state in the robot's joint order, as JointStateMap.state: q̇ = 0 for a joint
            whose last message had no velocity, τ only when every one had effort.

        Raises:
            JointStateError: a joint was not heard within max_age (naming it).
        """
        try:
            merged = self._merge.state(now_ns, source)
        except StateMergeError as error:
            raise JointStateError(str(error)) from error
        effort = None if np.isnan(merged.effort).any() else merged.effort
        return RobotState(merged.position, np.nan_to_num(merged.velocity, nan=0.0), effort)

    def update(
        self, message: JointState, received_ns: int, now_ns: int, source: str = "joint_states"
    ) -> RobotState:
        """Merge one message, then the merged state (`add`, then `state`)."""
        self.add(message, received_ns, source)
        return self.state(now_ns, source)


class HeldStates:
    """Computes a merged state once it holds every joint the state before it held (a driver's
    second half has come), or after joint_states_group_wait without the rest: a state not
    ready is held here, with a timer armed, cancelled when a state is computed.

    Args:
        node: the node, whose guard reports a failure of `compute` under "joint_states".
        intake: the joint_states intake.
        compute: computes the merged state, given its newest message.
        wait: s, joint_states_group_wait.
    """

    def __init__(self, node: RobotNode, intake: InArrivalOrder,
                 compute: Callable[[Arrival], None], wait: float) -> None:
        self._intake, self._compute = intake, compute
        self._held: Arrival | None = None  # the newest message of the state waiting
        self._timer = node.create_timer(  # steady: under use_sim_time a stalled /clock
            wait, node.guard.callback("joint_states", self._expired),  # would hold it forever
            clock=Clock(clock_type=ClockType.STEADY_TIME), autostart=False)

    def ready(self, newest: Arrival) -> Arrival | None:
        """`newest` (the newest message merged) when its state is ready to compute
        (StateGrouping.ready); otherwise None: it is held, and the timer armed from the first
        message of the state held."""
        if self._intake.states.ready:
            self._held = None
            self._timer.cancel()
            return newest
        self._held = newest
        if self._timer.is_canceled():
            self._timer.reset()
        return None

    def _expired(self) -> None:
        self._timer.cancel()
        held, self._held = self._held, None
        if held is not None:
            self._compute(held)
