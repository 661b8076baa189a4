"""`robodyn bag identify`: a robot's parameters, or a held load's, from the joint states and
efforts of a recorded run; checked on a second run when one is given.

Each run is read, differentiated (q̇ as recorded, q̈ by Savitzky–Golay, as `bag analyze`
does) and reduced chunk by chunk on a parallel backend to its normal equations
(identification.accumulation); the estimates come from those alone.

A floating base's pose and twist come from its odometry, its acceleration from the twist's
derivative; its six rows are the base's equations of motion, whose generalized force is that
of the external wrenches alone (bag.robot_run): no sensor measures a torque on the base. The
wrench topics carry every external force on the robot but gravity (a legged robot's contact
forces); without one, the robot is taken as free of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robodyn_ros.bag.analysis import WINDOW
from robodyn_ros.bag.derivatives import time_derivative, velocities_and_accelerations
from robodyn_ros.bag.errors import BagError
from robodyn_ros.bag.progress import progress_bar
from robodyn_ros.bag.reading import RecordedRun, read_joint_states
from robodyn_ros.bag.robot_run import RobotRun, robot_run
from robodyn_ros.identification.accumulation import CHUNK, RunSamples, Unknowns, accumulate
from robodyn_ros.identification.estimation import PRIOR_WEIGHT
from robodyn_ros.identification.identify import (
    PayloadIdentification,
    RobotIdentification,
    identify_payload,
    identify_robot,
    payload_unknowns,
)
from robodyn_ros.identification.normal_equations import NormalEquations
from robodyn_ros.parallel import Backend
from robodyn_ros.robot import Robot

SHOWN_SAMPLES = 4000
"""At most this many samples of each run are kept for the torque plots."""


@dataclass(frozen=True)
class IdentificationOptions:
    """What `robodyn bag identify` fits, and how.

    Attributes:
        topic: the sensor_msgs/JointState topic.
        odometry_topic: a floating base's nav_msgs/Odometry topic.
        wrench_topics: geometry_msgs/WrenchStamped topics of the external wrenches on the
            robot (bag.robot_run).
        window: the Savitzky–Golay window, samples (odd), for q̈ (and q̇ when not recorded).
        prior_weight: how many samples' worth the description's values count as.
        payload_frame: identify only a load on this frame (the robot as described, or as
            `known`), instead of the robot.
        known: with payload_frame, the robot's π (for example a previous identification's,
            with its offsets); None for the description's.
        fit: the kinds of joint parameter fitted whether or not the run informs them
            (identification.informed.JOINT_PARAMETER_KINDS: "offsets", "friction",
            "armature"); the others are fitted where it does.
        chunk: samples per chunk of the accumulation.
    """

    topic: str = "/joint_states"
    odometry_topic: str = "/odometry"
    wrench_topics: tuple[str, ...] = ()
    window: int = WINDOW
    prior_weight: float = PRIOR_WEIGHT
    payload_frame: str | None = None
    known: np.ndarray | None = None
    fit: frozenset[str] = frozenset()
    chunk: int = CHUNK


@dataclass(frozen=True, eq=False)
class RunEquations:
    """A run reduced for identification.

    Attributes:
        run: the joint states read (of the samples every topic covers).
        equations: its normal equations (for π, or for a load's parameters).
        shown: the indices of the samples kept for plots, (k,).
        samples: the state at those samples, and the generalized forces measured there
            (RobotRun.generalized_forces).
    """

    run: RecordedRun
    equations: NormalEquations
    shown: np.ndarray
    samples: RunSamples


@dataclass(frozen=True, eq=False)
class BagIdentification:
    """An identification and the runs it used.

    Attributes:
        robot: the description.
        options: how it was run.
        unknowns: what was fitted (identification.accumulation.Unknowns).
        fit: the run fitted.
        validation: the run it was checked on, or None.
        found: the robot's identification, or the load's (options.payload_frame).
    """

    robot: Robot
    options: IdentificationOptions
    unknowns: Unknowns
    fit: RunEquations
    validation: RunEquations | None
    found: RobotIdentification | PayloadIdentification

    def rms_residuals(self, run: RunEquations) -> dict[str, np.ndarray]:
        """Per-joint RMS of measured − predicted effort on a run, (n,) each: "description"
        (the robot as described, without a load) and "identified"; for a robot also
        "URDF alone" (the identified URDF without parameters.yaml: no armature, no
        offsets)."""
        if isinstance(self.found, PayloadIdentification):
            none = np.zeros(self.found.consistent.parameters.size)
            return {"description": run.equations.rms_residual(none),
                    "identified": run.equations.rms_residual(self.found.consistent.parameters)}
        return {"description": run.equations.rms_residual(self.robot.inertial_parameters()),
                "identified": run.equations.rms_residual(self.found.parameters),
                "URDF alone": run.equations.rms_residual(self.found.urdf_parameters)}

    def predicted_efforts(self, run: RunEquations) -> dict[str, np.ndarray]:
        """The efforts at the run's shown samples (k, n) of "description" and "identified"
        (the robot with the identified load, for a load)."""
        shown = run.samples
        Y = self.robot.inverse_dynamics_regressor(shown.position, shown.velocity,
                                                  shown.acceleration)
        if isinstance(self.found, PayloadIdentification):
            known, columns = self.unknowns.known, self.unknowns.columns
            assert known is not None and columns is not None
            identified = known + columns @ self.found.consistent.parameters
            return {"description": Y @ known, "identified": Y @ identified}
        return {"description": Y @ self.robot.inertial_parameters(),
                "identified": Y @ self.found.parameters}


def identify_bag(
    bag: str | Path,
    robot: Robot,
    options: IdentificationOptions,
    *,
    validate: str | Path | None = None,
    pool: Backend | None = None,
    show_progress: bool = False,
) -> BagIdentification:
    """Identify from `bag` (and check on `validate`) on `pool` (default serial), with a
    progress bar on stderr for each run when `show_progress`.

    Raises:
        BagError: a bag that cannot be read, or has no efforts on the topic.
        IdentificationError: runs that cannot identify what was asked.
        ModelError: an unknown payload frame.
    """
    frame = options.payload_frame
    unknowns = (payload_unknowns(robot, frame, options.known) if frame is not None
                else Unknowns())
    fit = run_equations(bag, robot, options, unknowns, pool, show_progress)
    validation = (None if validate is None
                  else run_equations(validate, robot, options, unknowns, pool, show_progress))
    found: RobotIdentification | PayloadIdentification = (
        identify_payload(robot, frame, fit.equations, options.prior_weight) if frame is not None
        else identify_robot(robot, fit.equations, options.prior_weight, options.fit)
    )
    return BagIdentification(robot, options, unknowns, fit, validation, found)


def run_equations(
    bag: str | Path,
    robot: Robot,
    options: IdentificationOptions,
    unknowns: Unknowns,
    pool: Backend | None = None,
    show_progress: bool = False,
) -> RunEquations:
    """Read one bag and reduce it to its normal equations.

    Raises:
        BagError: a bag that cannot be read, or has no efforts on the topic; for a floating
            base, no odometry; a wrench topic that cannot be read (bag.robot_run).
    """
    joints = read_joint_states(bag, options.topic, robot.measured_joints)
    if joints.effort is None:
        raise BagError(f"bag {joints.bag}, topic '{joints.topic}': no message has efforts, so "
                       "there are no torques to identify from")
    run = robot_run(bag, joints, robot, options.odometry_topic, options.wrench_topics)
    samples = run_samples(run, robot, options.window)
    count = len(run.joints)
    with progress_bar(show_progress, count, f"regressor of {joints.bag.name}") as progress:
        equations = accumulate(robot, samples, unknowns=unknowns, pool=pool,
                               chunk=options.chunk, progress=progress)
    shown = np.unique(np.linspace(0, count - 1, min(count, SHOWN_SAMPLES)).astype(int))
    return RunEquations(run.joints, equations, shown, samples.rows(shown))


def run_samples(run: RobotRun, robot: Robot, window: int) -> RunSamples:
    """q, q̇, q̈ and τ of every sample: the joints' velocities as recorded or differentiated
    and their accelerations (velocities_and_accelerations), a floating base's pose and twist
    as its odometry gives them and its acceleration the twist's derivative; τ the generalized
    forces measured (RobotRun.generalized_forces)."""
    velocity, acceleration = velocities_and_accelerations(run.joints, window)
    base_acceleration = (time_derivative(run.base_twist, run.joints, window)
                         if run.base_twist.size else run.base_twist)
    return RunSamples(run.configurations(), np.hstack([run.base_twist, velocity]),
                      np.hstack([base_acceleration, acceleration]),
                      run.generalized_forces(robot))
