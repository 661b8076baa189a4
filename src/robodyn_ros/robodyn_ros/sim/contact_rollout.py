"""A controlled robot in a world of planes rolled out in one kernel: sim.rollout's control laws
(control.compiled_laws, force control with its measured-force loop included, and a floating
base's whole-body controller on friction cones) and contact.compiled_step's step, step for
step as the preview steps SimulatedRobot in a world with the controller plugins. A whole-body
programme without an answer ends the rollout at its step, as an unsolved step does.

Each step k: τ_cmd by the law every `control_every` steps (held between), the applied effort
clip(τ_cmd, ±limit) − d q̇ − f tanh(q̇/ε), one world_step (semi-implicit, the contacts
unilateral with Coulomb friction), then the joints stopped at their limits as SimulatedRobot
stops them. Where the operational-space law closes its force loop (force_integral_gain > 0), the
wrench it measures at a control step is what a force/torque sensor at its frame reads of the
last step's contacts (sim.wrench_sensor: the contacts on the links the frame carries, about its
origin), and the integral I ← clip(I + K_fi Δt Ω̃ (F_d + w), ±(|F_d| + 1 N)) grows only while the
sensor reads a force along a force axis, as control.operational_space_controller integrates it.

The contacts are logged as sim.contact_log.ContactLog logs them (ContactRecord): per link the
peak total force, the slip distance, the contacts lost, the deepest penetration, and the
contacts of the steps ending at the samples.
"""

import math
from collections import namedtuple

import numpy as np

from robodyn_ros.contact.compiled_step import (
    CONVERGED,
    ContactModel,
    Contacts,
    StepSettings,
    contacts_of,
    most_candidates,
    step_workspace,
    world_step,
)
from robodyn_ros.control.compiled_laws import (
    AXES,
    OPERATIONAL_SPACE,
    TARGET,
    WHOLE_BODY,
    ControlLaw,
    control_workspace,
    law_torque,
)
from robodyn_ros.control.whole_body_programme import SOLVED, whole_body_torque
from robodyn_ros.dynamics.arrays import FloatArray
from robodyn_ros.dynamics.jit import borrowing_routine, kernel_helper, long_kernel
from robodyn_ros.dynamics.kinematics import frame_pose_into
from robodyn_ros.dynamics.linalg import cholesky, copy_vector
from robodyn_ros.sim.rollout import (
    DAMPING,
    EFFORT_LIMIT,
    FRICTION,
    RolloutRobot,
    Stepping,
    Trajectory,
    enforce_limits,
    observe,
    smallest_singular_value,
)

# the entries of ContactRecord.metrics, as ContactMetrics has them
PEAK_FORCE, SLIP_DISTANCE, LOST_CONTACTS, PENETRATION = range(4)
# the entries of ContactRecord.failure
FAILED_STEP, STATUS, SWEEPS, CHANGE, SOLVER_FLAG = range(5)
# failure[STATUS] of a step whose whole-body programme had no answer (beside compiled_step's)
PROGRAMME_NOT_SOLVED = 3

ContactRecord = namedtuple("ContactRecord", (
    "shape_link",  # (S,) int64, the link (0 .. links − 1) of each shape
    "sensed",      # (S,) bool, the shapes whose contacts the sensor at the law's frame reads
    "slid",        # (links,) how far each link slid while touching (m)
    "link_force",  # (links, 3) a step's total force on each link (scratch)
    "link_slip",   # (links,) a step's summed slip speeds of each link's contacts (scratch)
    "link_points",  # (links,) int64, a step's contacts on each link (scratch)
    "touching",    # (links,) bool, the links touching after the last step
    "metrics",     # (4,) PEAK_FORCE, SLIP_DISTANCE, LOST_CONTACTS, PENETRATION
    "failure",     # (5,) FAILED_STEP (−1: none), STATUS, SWEEPS, CHANGE, SOLVER_FLAG of a
                   # step not solved: its contacts (compiled_step's status) or its programme
    "sampled",     # (samples,) int64, how many contacts each sample step kept
    "contacts",    # compiled_step.Contacts (samples × capacity rows): the sample steps'
))


@kernel_helper
def slip_speed(planes: FloatArray, plane: int, velocity: FloatArray, c: int) -> float:
    """|v − (v·n) n| of contact c (rows of the contacts' velocities) on plane `plane`: its
    point's speed along the plane after the step."""
    along = 0.0
    for r in range(3):
        along += velocity[c, r] * planes[plane, 0, r]
    slip = 0.0
    for r in range(3):
        slip += (velocity[c, r] - along * planes[plane, 0, r]) ** 2
    return math.sqrt(slip)


@kernel_helper
def log_contacts(scene: ContactModel, record: ContactRecord, contacts: Contacts, count: int,
                 dt: float, sample: int) -> None:
    """The metrics of one step's `count` contacts added into `record`, and the contacts kept
    as sample `sample` (−1: not a sample step)."""
    shape_link, slid, touching, metrics = (record.shape_link, record.slid, record.touching,
                                           record.metrics)
    links = slid.shape[0]
    force, slip, points = record.link_force, record.link_slip, record.link_points
    force[:, :] = 0.0
    slip[:] = 0.0
    points[:] = 0
    planes, shape, plane, height, contact_force, velocity = (
        scene.planes, contacts.shape, contacts.plane, contacts.height, contacts.force,
        contacts.velocity)  # taken out once, not read from the records in the loop (jit)
    for c in range(count):
        link = shape_link[shape[c]]
        metrics[PENETRATION] = max(metrics[PENETRATION], -height[c])
        for r in range(3):
            force[link, r] += contact_force[c, r]
        slip[link] += slip_speed(planes, plane[c], velocity, c)
        points[link] += 1
    for link in range(links):
        now = points[link] > 0
        if touching[link] and not now:
            metrics[LOST_CONTACTS] += 1.0
        touching[link] = now
        if now:
            metrics[PEAK_FORCE] = max(metrics[PEAK_FORCE], math.sqrt(
                force[link, 0] ** 2 + force[link, 1] ** 2 + force[link, 2] ** 2))
            slid[link] += slip[link] / points[link] * dt
            metrics[SLIP_DISTANCE] = max(metrics[SLIP_DISTANCE], slid[link])
    if sample >= 0:
        kept, capacity = record.contacts, contacts.shape.shape[0]
        record.sampled[sample] = count
        for c in range(count):
            row = sample * capacity + c
            kept.shape[row], kept.plane[row] = contacts.shape[c], contacts.plane[c]
            kept.height[row] = contacts.height[c]
            copy_vector(contacts.point[c], kept.point[row])
            copy_vector(contacts.force[c], kept.force[row])
            copy_vector(contacts.velocity[c], kept.velocity[row])


@kernel_helper
def sensed_wrench(record: ContactRecord, contacts: Contacts, count: int, origin: FloatArray,
                  out: FloatArray) -> None:
    """out (6,) = the wrench [force; torque] of the sensed contacts on the robot about
    `origin`, world axes: what a force/torque sensor there reads."""
    out[:] = 0.0
    for c in range(count):
        if record.sensed[contacts.shape[c]]:
            f, p = contacts.force[c], contacts.point[c]
            lever = (p[0] - origin[0], p[1] - origin[1], p[2] - origin[2])
            out[0] += f[0]
            out[1] += f[1]
            out[2] += f[2]
            out[3] += lever[1] * f[2] - lever[2] * f[1]
            out[4] += lever[2] * f[0] - lever[0] * f[2]
            out[5] += lever[0] * f[1] - lever[1] * f[0]


@kernel_helper
def integrate_force_error(force: FloatArray, gain: float, measured: FloatArray, elapsed: float,
                          integral: FloatArray) -> None:
    """I ← clip(I + K_fi Δt Ω̃ (F_d + w), ±(|F_d| + 1 N)) where the sensor reads a force along
    a force axis (module docstring)."""
    touching = False
    for r in range(6):
        if force[AXES, r] != 0.0 and measured[r] != 0.0:
            touching = True
    if not touching or elapsed <= 0.0:
        return
    for r in range(6):
        if force[AXES, r] != 0.0:
            bound = abs(force[TARGET, r]) + 1.0
            grown = integral[r] + gain * elapsed * (force[TARGET, r] + measured[r])
            integral[r] = min(max(grown, -bound), bound)


@kernel_helper
def applied_effort(joints: FloatArray, friction_velocity: float, tau: FloatArray,
                   qd: FloatArray, out: FloatArray) -> None:
    """out = clip(τ, ±effort limit) − d q̇ − f tanh(q̇/ε)."""
    for i in range(tau.shape[0]):
        held = min(max(tau[i], -joints[EFFORT_LIMIT, i]), joints[EFFORT_LIMIT, i])
        out[i] = (held - joints[DAMPING, i] * qd[i]
                  - joints[FRICTION, i] * math.tanh(qd[i] / friction_velocity))


ContactRolloutWorkspace = namedtuple("ContactRolloutWorkspace", (
    "control",      # compiled_laws.ControlWorkspace: the law's
    "step",         # compiled_step.StepWorkspace: the steps'
    "contacts",     # compiled_step.Contacts: a step's contacts (the capacity's rows)
    "applied",      # (n,) the effort applied at a step
    "measured",     # (6,) the wrench the force loop's sensor reads
    "integral",     # (6,) the force loop's integral
    "task_wrench",  # (6,) the wrench the operational-space law is handed
    "grams",        # (samples, m, m) J's Gram matrix at each sample (rollout.store_gram)
))


@borrowing_routine
def contact_steps(robot: RolloutRobot, law: ControlLaw, stepping: Stepping, scene: ContactModel,
                  settings: StepSettings, trajectory: Trajectory, record: ContactRecord,
                  work: ContactRolloutWorkspace) -> bool:
    """contact_rollout's steps, in `work` (a ContactRolloutWorkspace); the grams of every
    sample, the last state's included, in work.grams. Returns False where a step's contacts
    or programme were not solved (noted in record.failure, the rollout ended there)."""
    tree, gravity, joints = robot.tree, robot.gravity, robot.joints
    joint_gains, task_gains, target, reference = (law.joint_gains, law.task_gains, law.target,
                                                  law.reference)
    force, kind, frame, threshold = law.force, law.kind, law.frame, law.threshold
    q, qd, tau, path, energy = (trajectory.q, trajectory.qd, trajectory.tau, trajectory.path,
                                trajectory.energy)
    clamped = trajectory.clamped
    steps = tau.shape[0]
    whole_body = law.whole_body
    programme, programme_model, programme_targets = (whole_body.programme, whole_body.model,
                                                     whole_body.targets)
    cw, ws, contacts, applied = work.control, work.step, work.contacts, work.applied
    measured, integral, task_wrench, grams = (work.measured, work.integral, work.task_wrench,
                                              work.grams)
    measured[:] = 0.0
    integral[:] = 0.0
    clamped[:] = 0
    record.failure[FAILED_STEP] = -1.0
    sample, count, controlled_at = 0, 0, -1
    for k in range(steps):
        law_now = kind if k % law.control_every == 0 else -1
        at_sample = k % stepping.sample_every == 0
        if law_now == OPERATIONAL_SPACE or at_sample:
            sample = observe(tree, gravity, frame, at_sample, q[k], qd[k], cw, path[k], energy,
                             grams, sample)
        if law_now == OPERATIONAL_SPACE:
            if law.force_integral_gain > 0.0:
                sensed_wrench(record, contacts, count, cw.frame_pose[:3, 3], measured)
                elapsed = 0.0 if controlled_at < 0 else (k - controlled_at) * stepping.dt
                integrate_force_error(force, law.force_integral_gain, measured, elapsed,
                                      integral)
            controlled_at = k
            for r in range(6):
                task_wrench[r] = force[TARGET, r] + integral[r]
        if law_now == WHOLE_BODY:
            flag = whole_body_torque(tree, gravity, programme_model, programme_targets, q[k],
                                     qd[k], programme, tau[k])
            if flag != SOLVED:
                record.failure[FAILED_STEP], record.failure[STATUS] = k, PROGRAMME_NOT_SOLVED
                record.failure[SOLVER_FLAG] = flag
                q[k + 1], qd[k + 1] = np.nan, np.nan
                return False
        else:
            law_torque(tree, gravity, law_now, joint_gains, task_gains, force, task_wrench,
                       target, threshold, reference, k, q, qd, tau, cw)
        applied_effort(joints, stepping.friction_velocity, tau[k], qd[k], applied)
        factored = law_now == OPERATIONAL_SPACE or (law_now == WHOLE_BODY
                                                    and cholesky(ws.M, 0.0, ws.L))
        count, status, sweeps, change = world_step(
            tree, gravity, scene, settings, q[k], qd[k], applied, factored, q[k + 1],
            qd[k + 1], ws, contacts)
        if status != CONVERGED:
            record.failure[FAILED_STEP], record.failure[STATUS] = k, status
            record.failure[SWEEPS], record.failure[CHANGE] = sweeps, change
            q[k + 1], qd[k + 1] = np.nan, np.nan
            log_contacts(scene, record, contacts, count, stepping.dt, -1)
            return False
        if not (law_now == OPERATIONAL_SPACE or at_sample):
            frame_pose_into(ws.crba.X_world, frame, path[k])  # the step's kinematics at q_k
        enforce_limits(tree, joints, stepping.stop_at_limits, q[k + 1], qd[k + 1], clamped)
        is_sample = (k + 1) % stepping.sample_every == 0 or k + 1 == steps
        log_contacts(scene, record, contacts, count, stepping.dt,
                     sample if is_sample else -1)
    observe(tree, gravity, frame, True, q[steps], qd[steps], cw, path[steps], energy, grams,
            sample)  # the last state, a sample
    return True


@long_kernel
def contact_rollout(robot: RolloutRobot, law: ControlLaw, stepping: Stepping,
                    scene: ContactModel, settings: StepSettings, trajectory: Trajectory,
                    record: ContactRecord) -> float:
    """Steps k = 0 .. K − 1 of `robot` (a rollout.RolloutRobot) under `law` (a ControlLaw) by
    `stepping` (a rollout.Stepping; its integrator unused: the steps are world_step's) in the
    world and with the shapes of `scene` (a ContactModel) by `settings` (a StepSettings), from
    the state in trajectory.q[0], trajectory.qd[0], filling the rest of `trajectory` (a
    rollout.Trajectory) and `record` (a ContactRecord). A step whose contacts are not solved
    ends the rollout, noted in record.failure. Returns the smallest singular value of the
    law's frame's J over the samples. The workspaces are made here, the steps taken by
    contact_steps, which borrows them."""
    tree, q, energy = robot.tree, trajectory.q, trajectory.energy
    n = trajectory.tau.shape[1]
    programme = law.whole_body.programme
    cw = control_workspace(tree, n)
    capacity = record.contacts.shape.shape[0] // record.sampled.shape[0]
    if law.kind == WHOLE_BODY:  # the steps where it runs reuse its programme's kinematics, M, b
        ws = step_workspace(programme.crba, programme.M, cw.L_M, programme.b, q.shape[1],
                            most_candidates(scene), capacity)
    else:
        ws = step_workspace(cw.crba, cw.M, cw.L_M, cw.b, q.shape[1], most_candidates(scene),
                            capacity)
    m = min(6, n)
    work = ContactRolloutWorkspace(
        control=cw, step=ws, contacts=contacts_of(capacity), applied=np.empty(n),
        measured=np.empty(6), integral=np.empty(6), task_wrench=np.empty(6),
        grams=np.empty((energy.shape[0], m, m)))
    if not contact_steps(robot, law, stepping, scene, settings, trajectory, record, work):
        return np.nan
    return smallest_singular_value(work.grams, np.empty((m, m)))


__all__ = ["ContactRecord", "ContactRolloutWorkspace", "contact_rollout", "contact_steps"]
