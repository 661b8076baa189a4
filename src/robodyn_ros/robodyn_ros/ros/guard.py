"""What every node shares so that it never dies: a guard around each callback and the record
of what went wrong that the node's diagnostics read.

A callback wrapped by a `Guard` cannot raise into the executor. A `RefusedError` (bad input,
refused with its reason) and a `NonFiniteResultError` (a state whose magnitudes overflow the
dynamics) count as a rejected message, level WARN; any other exception is a
fault, level ERROR, logged with its type. Either way one log line per task and second at most,
the reason in the node's next diagnostics, and for a service an answer with success=false and
the reason, for a parameter change a refusal with the reason, for an action goal an abort
with the reason in the result's message.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult

from robodyn_ros.errors import NonFiniteResultError, RobodynError

if TYPE_CHECKING:
    from rclpy.impl.rcutils_logger import RcutilsLogger
    from rclpy.parameter import Parameter

LOG_PERIOD = 1.0  # s: at most one log line per task in this time; the rest are counted
OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


class RefusedError(RobodynError, ValueError):
    """What a node refuses (bad input, a change it cannot serve), with the reason: naming the
    field and joint where there is one."""


@dataclass(frozen=True)
class Condition:
    """A standing state of a node, reported until it changes: level and reason."""

    level: int
    reason: str


class NodeHealth:
    """What went wrong in a node: refusals and faults since the last diagnostics, and
    standing conditions (a robot description refused, frames left out) until cleared.

    Args:
        logger: the node's logger (rclpy RcutilsLogger).
    """

    def __init__(self, logger: RcutilsLogger) -> None:
        self._logger = logger
        self._lock = threading.Lock()
        self._rejected = 0
        self._faults = 0
        self._worst = Condition(OK, "")  # of this period's refusals and faults
        self._last_error = ""
        self._conditions: dict[str, Condition] = {}
        self._logged: dict[str, float] = {}  # task → time of its last log line
        self._unlogged: dict[str, int] = {}  # task → lines left out since then

    def reject(self, task: str, reason: str) -> None:
        """Record (and log, throttled) input refused by `task`; WARN in the next diagnostics."""
        with self._lock:
            self._rejected += 1
        self._record(task, Condition(WARN, reason))

    def event(self, task: str, level: int, reason: str) -> None:
        """Record (and log, throttled) what happened in `task` and is over (a change refused,
        the node going on as it was): at `level` in the next diagnostics only, and their
        "last error" until another."""
        self._record(task, Condition(level, reason))

    def fault(self, task: str, error: BaseException) -> str:
        """Record (and log, throttled) an unexpected exception in `task`; ERROR in the next
        diagnostics.

        Returns:
            The reason: the task, the exception's type and message.
        """
        reason = f"{task} failed: {type(error).__name__}: {error}"
        with self._lock:
            self._faults += 1
        self._record(task, Condition(ERROR, reason))
        return reason

    def set_condition(self, key: str, level: int, reason: str) -> None:
        """Report `reason` at `level` in every diagnostics until cleared; logged when it is
        new (throttled as refusals are), not when the same condition is set again."""
        condition = Condition(level, reason)
        with self._lock:
            held = self._conditions.get(key)
            self._conditions[key] = condition
            self._last_error = reason if level > OK else self._last_error
        if condition != held:
            self._log_throttled(key, condition)

    def hold_condition(self, key: str, level: int, reason: str) -> None:
        """set_condition while there is a `reason`, clear_condition once it is empty."""
        if reason:
            self.set_condition(key, level, reason)
        else:
            self.clear_condition(key)

    def clear_condition(self, key: str) -> None:
        """Stop reporting the condition `key` (no-op when it is not set)."""
        with self._lock:
            self._conditions.pop(key, None)

    def status(
        self, name: str, hardware_id: str, level: int, message: str, values: dict[str, str]
    ) -> DiagnosticStatus:
        """The node's DiagnosticStatus: the worst of `level`/`message` (what the node says of
        itself), the standing conditions and this period's refusals and faults, with
        `values` and the counts; starts a new period.

        Args:
            name: the status name, "<node name>: <task>".
            hardware_id: the robot's name ("" without one).
            level, message: the node's own view (OK "computing", ERROR "no robot", ...).
            values: key → value pairs the node adds.
        """
        with self._lock:
            reports = [Condition(level, message), *self._conditions.values(), self._worst]
            worst = max(reports, key=lambda condition: condition.level)
            counts = {
                "rejected messages": str(self._rejected),
                "faults": str(self._faults),
                "last error": self._last_error,
            }
            self._rejected = self._faults = 0
            self._worst = Condition(OK, "")
        status = DiagnosticStatus(
            name=name, hardware_id=hardware_id, level=worst.level, message=worst.reason
        )
        status.values = [KeyValue(key=k, value=v) for k, v in (values | counts).items()]
        return status

    def _record(self, task: str, condition: Condition) -> None:
        with self._lock:
            self._last_error = condition.reason
            if condition.level >= self._worst.level:
                self._worst = condition
        self._log_throttled(task, condition)

    def _log_throttled(self, task: str, condition: Condition) -> None:
        """Log the condition's reason unless `task` logged within LOG_PERIOD (then count it)."""
        with self._lock:
            now = time.monotonic()
            if now - self._logged.get(task, -LOG_PERIOD) < LOG_PERIOD:
                self._unlogged[task] = self._unlogged.get(task, 0) + 1
                return
            self._logged[task] = now
            left_out = self._unlogged.pop(task, 0)
        more = f" ({left_out} more since the last line)" if left_out else ""
        self._log(condition.level, condition.reason + more)

    def _log(self, level: int, text: str) -> None:
        # rclpy fixes the severity of each line of code that logs: one line per severity
        if level == ERROR:
            self._logger.error(text)
        else:
            self._logger.warning(text)


class Guard:
    """Wraps a node's callbacks so that no exception leaves them (see the module docstring).

    Args:
        health: the node's record the failures go to.
    """

    def __init__(self, health: NodeHealth) -> None:
        self.health = health

    def callback(
        self,
        task: str,
        function: Callable[..., Any],
        on_failure: Callable[..., Any] | None = None,
    ) -> Callable[..., Any]:
        """`function` guarded; the wrapper keeps its signature (rclpy inspects it to pass a
        subscription's MessageInfo or a timer's TimerInfo).

        Args:
            task: what the callback does, for the log and diagnostics ("joint_states").
            function: the callback.
            on_failure: called as on_failure(reason, *args) when `function` raised; its return
                value is the callback's (None without one, or when it raises in turn).
        """

        @functools.wraps(function)
        def guarded(*args: Any) -> Any:
            try:
                return function(*args)
            except (RefusedError, NonFiniteResultError) as refusal:
                reason = str(refusal)
                self.health.reject(task, reason)
            except Exception as error:  # the guard's purpose
                reason = self.health.fault(task, error)
            if on_failure is None:
                return None
            try:
                return on_failure(reason, *args)
            except Exception as error:  # answering the failure failed too: reported, no more
                self.health.fault(f"{task} (answering a failure)", error)
                return None

        return guarded

    def service(self, task: str, function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """A service callback guarded: on failure the response says success=false and the
        reason in `message` (the service's response must have both fields)."""

        def refuse(reason: str, _request: Any, response: Any) -> Any:
            response.success, response.message = False, reason
            return response

        return self.callback(task, function, refuse)

    def parameters(
        self, function: Callable[[list[Parameter[Any]]], SetParametersResult]
    ) -> Callable[[list[Parameter[Any]]], SetParametersResult]:
        """A parameter-change callback guarded: on failure the change is refused with the
        reason."""

        def refuse(reason: str, _parameters: list[Parameter[Any]]) -> SetParametersResult:
            return SetParametersResult(successful=False, reason=reason)

        return self.callback("parameter change", function, refuse)

    def action(
        self, task: str, function: Callable[[Any], Any], result_type: type
    ) -> Callable[[Any], Any]:
        """An action's execute callback guarded: on failure the goal is aborted and the result
        carries the reason in `message` (`result_type` must have that field)."""

        def abort(reason: str, goal_handle: Any) -> Any:
            if goal_handle.is_active:
                goal_handle.abort()
            return result_type(message=reason)

        return self.callback(task, function, abort)
