"""What a preview is given and what it gives: its settings, each scenario's result and metrics,
and the sample steps at which the energy and J's singular values are taken."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from robodyn_ros.contact.time_step import ContactForce
from robodyn_ros.robot import Robot
from robodyn_ros.sim.contact_log import ContactMetrics
from robodyn_ros.sim.ilqr import ReachPlan
from robodyn_ros.sim.integrators import ADAPTIVE_INTEGRATORS, INTEGRATORS
from robodyn_ros.sim.scenarios import ScenarioError
from robodyn_ros.sim.simulated_robot import FRICTION_VELOCITY, TOLERANCE

SINGULAR_THRESHOLD = 1e-4  # of Λ's damping, as the operational-space controller's default
SAMPLE_PERIOD = 0.01  # s between the states whose energy and J's singular values are taken


@dataclass(frozen=True)
class PreviewSettings:
    """horizon and dt in s; integrator: INTEGRATORS or ADAPTIVE_INTEGRATORS (tolerance is
    theirs); forward_dynamics_method: Robot.FORWARD_DYNAMICS_METHODS; friction_velocity and
    singular_threshold as SimulatedRobot and the operational-space controller take them;
    control_period (s, a whole number of steps; 0: every step): how often the controller
    computes a command, held in between, as sim_node holds a controller_node's command over
    its publish_period."""

    horizon: float = 1.0
    dt: float = 1e-3
    integrator: str = "rk4"
    forward_dynamics_method: str = "aba"
    tolerance: float = TOLERANCE
    friction_velocity: float = FRICTION_VELOCITY
    singular_threshold: float = SINGULAR_THRESHOLD
    control_period: float = 0.0

    def __post_init__(self) -> None:
        for name in ("horizon", "dt", "tolerance", "friction_velocity", "singular_threshold"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0.0):
                raise ScenarioError(f"{name} must be a number > 0; got {value!r}")
        period = self.control_period
        if not (isinstance(period, (int, float)) and np.isfinite(period) and period >= 0.0):
            raise ScenarioError(f"control_period must be a number >= 0; got {period!r}")
        steps = period / self.dt
        if period > 0.0 and (round(steps) < 1 or not np.isclose(steps, round(steps))):
            raise ScenarioError(
                f"control_period must be a whole number of steps of dt ({self.dt} s); got "
                f"{period} s")
        if self.dt > self.horizon:
            raise ScenarioError(f"dt ({self.dt} s) must not exceed horizon ({self.horizon} s)")
        integrators = (*INTEGRATORS, *ADAPTIVE_INTEGRATORS)
        if self.integrator not in integrators:
            raise ScenarioError(
                f"integrator must be one of {', '.join(integrators)}; got {self.integrator!r}"
            )
        if self.forward_dynamics_method not in Robot.FORWARD_DYNAMICS_METHODS:
            raise ScenarioError(
                "forward_dynamics_method must be one of "
                f"{', '.join(Robot.FORWARD_DYNAMICS_METHODS)}; got {self.forward_dynamics_method!r}"
            )

    @property
    def steps(self) -> int:
        return round(self.horizon / self.dt)

    @property
    def control_every(self) -> int:
        """Steps between two commands of the controller."""
        return max(1, round(self.control_period / self.dt))

    @property
    def compiled(self) -> bool:
        """Whether the rollout kernel runs it (fixed step, ABA)."""
        return self.integrator in INTEGRATORS and self.forward_dynamics_method == "aba"


@dataclass(frozen=True, eq=False)
class PreviewMetrics:
    """peak_effort (n,): the largest commanded |τ| per joint, N·m (N); effort_ratio: the
    largest of peak_effort / effort limit (> 1: the command saturated); limit_violations (n,):
    steps each joint ended on a position limit (stopped there); min_singular_value: the
    smallest singular value of the frame's J over the path; final_position_error (m) and
    final_orientation_error (rad): from the target at the end (NaN for torque profiles);
    energy_start, energy_end, energy_peak: kinetic + potential energy, J. The singular values
    and the energy are taken at the sample times (every SAMPLE_PERIOD and the last step).
    contact: what the contacts with the scenario's world did (sim.contact_log.ContactMetrics,
    zeros without a world)."""

    peak_effort: np.ndarray
    effort_ratio: float
    limit_violations: np.ndarray
    min_singular_value: float
    final_position_error: float
    final_orientation_error: float
    energy_start: float
    energy_end: float
    energy_peak: float
    contact: ContactMetrics = field(default_factory=ContactMetrics)


@dataclass(frozen=True, eq=False)
class PreviewResult:
    """One scenario's prediction: times (K + 1,), q and qd (K + 1, n), effort (K, n) the
    commanded efforts, frame and its poses frame_path (K + 1, 4, 4), samples (S,) the step
    indices of the sample times and energy (S,) at them, the metrics, the wall time in s and
    the real-time factor horizon / wall time; with a world, contacts (S,): the contacts of the
    step that ended at each sample (() at the start); an optimal reach's plan (sim.ilqr,
    its wall time within the scenario's)."""

    name: str
    times: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    frame: str
    frame_path: np.ndarray
    samples: np.ndarray
    energy: np.ndarray
    metrics: PreviewMetrics
    wall_time: float
    real_time_factor: float
    contacts: Sequence[tuple[ContactForce, ...]] = ()
    plan: ReachPlan | None = None



def sample_steps(settings: PreviewSettings) -> np.ndarray:
    """The step indices every SAMPLE_PERIOD, and the last step."""
    stride = sample_stride(settings)
    return np.unique(np.append(np.arange(0, settings.steps + 1, stride), settings.steps))


def sample_stride(settings: PreviewSettings) -> int:
    """Steps between two samples: SAMPLE_PERIOD in steps, at least one."""
    return max(1, round(SAMPLE_PERIOD / settings.dt))



def smallest_singular_values(J: np.ndarray) -> np.ndarray:
    """The smallest singular value of each J (S, 6, n), as the square root of the smallest
    eigenvalue of the smaller of J Jᵀ and Jᵀ J: half the time of a batched SVD."""
    Jt = J.transpose(0, 2, 1)
    gram = J @ Jt if J.shape[1] <= J.shape[2] else Jt @ J
    return np.sqrt(np.maximum(np.linalg.eigvalsh(gram)[:, 0], 0.0))


__all__ = [
    "SAMPLE_PERIOD",
    "SINGULAR_THRESHOLD",
    "PreviewMetrics",
    "PreviewResult",
    "PreviewSettings",
    "sample_steps",
    "sample_stride",
    "smallest_singular_values",
]
