"""The contact simulation against MuJoCo: the same scenes (robodyn_ros.testing.contact_scenes)
from the same URDF text, ours a SimulatedRobot in a world (contact.time_step), MuJoCo's model
made by its own URDF importer (robodyn_ros.testing.mujoco_twin: a free joint at the root, the
planes as plane geoms of the same friction, the same gravity, the URDF's damping and friction
loss, no armature), both stepped at 1 ms with the joints limp. MuJoCo keeps its defaults:
semi-implicit Euler, the pyramidal friction cone, soft contacts (solref 0.02 s critically
damped, solimp 0.9–0.95 over 1 mm).

The two contact models differ, and each tolerance below is set from that difference:
- MuJoCo's contacts are soft: a body at rest sinks into the plane until the constraint's
  spring carries it, 0.06 mm for the box, 0.22 mm for the ball, 0.03 mm for Solo12 as
  measured here; on impact far deeper (Solo12's belly 14 mm at 1.4 m/s, the ball 12 mm at
  1.7 m/s), so heights are compared at rest only. Ours pushes a point out of the plane at
  0.2 of its depth per step and rests within 1 µm of the surface. Heights: 0.5 mm.
- MuJoCo's friction is soft too: a box that sticks creeps at a constant 1.9 mm/s (0.96 mm in
  0.5 s) where ours creeps 0.2 µm. Sticking: under 2 mm in 0.5 s, no acceleration.
- MuJoCo's cone is a pyramid of four edges, ours the Coulomb disk; they agree on a slide along
  a tangent of MuJoCo's contact frame, as on these inclines: the accelerations down the slope
  differ by 1.5e-4 relative (MuJoCo's soft constraints), ours is g (sin θ − μ cos θ) to 1e-9.
  Sliding: 1e-3 relative, against the analytic value and between the two; a friction off by
  1 % moves the acceleration by 5e-3 of it.
- Both solvers stop short of the exact contact forces: ours when a sweep changes no contact
  velocity by more than 1e-6 m/s (ContactSettings.tolerance), which leaves up to that change
  times the mass over a step unbalanced (`unsolved`: 2 mN on the box, 2.5 mN on Solo12).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
import pytest

from robodyn_ros.robot.free_flyer import rotation_matrix
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing.contact_scenes import (
    BODY_MASS,
    SOLO12_FEET,
    Scene,
    ball_above_ground,
    box_on_ground,
    box_on_incline,
    solo12_crouched,
)
from robodyn_ros.testing.mujoco_twin import MujocoTwin, mujoco_twin

DT = 1e-3  # s
G = 9.81  # m/s², the robots' gravity
HEIGHT = 5e-4  # m: heights at rest, ours against MuJoCo's (its soft contacts' sinking)
CREEP = 2e-3  # m in 0.5 s: a box that sticks (MuJoCo's soft friction creeps)
SLIDE = 1e-3  # relative: the acceleration down an incline
AT_REST = 1e-3  # m/s or rad/s: the largest velocity of a body at rest


@dataclass(frozen=True, eq=False)
class Runs:
    """A scene stepped by both: the configurations after each step, MuJoCo's as ours."""

    ours: np.ndarray  # (steps, nq)
    theirs: np.ndarray  # (steps, nq)
    sim: SimulatedRobot
    twin: MujocoTwin
    data: mujoco.MjData

    def times(self) -> np.ndarray:
        """(steps,) s, the time after each step."""
        return DT * np.arange(1, len(self.ours) + 1)


def run_both(scene: Scene, seconds: float) -> Runs:
    """`seconds` of the scene from rest, stepped by SimulatedRobot and by MuJoCo."""
    robot = scene.robot()
    sim = SimulatedRobot(robot, "semi_implicit_euler", DT, q=scene.q, world=scene.world,
                         collision_shapes=scene.shapes())
    twin = mujoco_twin(robot, scene.urdf, DT, scene.world, scene.base_folder,
                       scene.package_folders)
    data = mujoco.MjData(twin.model)
    data.qpos[:] = twin.qpos(scene.q)
    ours, theirs, zero = [], [], np.zeros(robot.nv)
    for _ in range(round(seconds / DT)):
        sim.step(zero)
        mujoco.mj_step(twin.model, data)
        ours.append(sim.q)
        theirs.append(twin.q(data.qpos))
    return Runs(np.array(ours), np.array(theirs), sim, twin, data)


def our_contact_force(sim: SimulatedRobot) -> np.ndarray:
    """(3,) the sum of the last step's contact forces on the robot, N."""
    return sum((contact.force for contact in sim.world_contacts), np.zeros(3))


def unsolved(runs: Runs) -> float:
    """N: the force our solver's stopping tolerance may leave unbalanced, a velocity change
    of ContactSettings.tolerance times the robot's mass over a step."""
    return runs.sim.contact_settings.tolerance * runs.sim.robot.mass / DT


def test_a_box_at_rest_on_the_ground_stays_there_carrying_its_weight() -> None:
    """Over 0.3 s both keep the box where it is, to its height (HEIGHT), on contacts whose
    forces sum to m g (to `unsolved`)."""
    scene = box_on_ground()
    runs = run_both(scene, 0.3)

    assert runs.ours[-1, 2] == pytest.approx(runs.theirs[-1, 2], abs=HEIGHT)
    assert runs.ours[-1, 2] == pytest.approx(scene.q[2], abs=HEIGHT)
    weight = [0.0, 0.0, BODY_MASS * G]
    np.testing.assert_allclose(our_contact_force(runs.sim), weight, atol=unsolved(runs))
    np.testing.assert_allclose(runs.twin.contact_force(runs.data), weight, atol=unsolved(runs))
    assert np.abs(runs.sim.qd).max() < AT_REST and np.abs(runs.data.qvel).max() < AT_REST


def test_a_dropped_ball_comes_to_rest_at_its_radius() -> None:
    """Dropped from 0.2 m, both land at the same time (the free fall is the same) and rest
    at the radius within HEIGHT of each other after 1 s."""
    radius = 0.05
    runs = run_both(ball_above_ground(radius, 0.2), 1.0)

    touch = np.sqrt(2.0 * (0.2 - radius) / G)  # s: when the ball meets the ground
    before = runs.times() < touch - 2 * DT
    np.testing.assert_allclose(runs.ours[before, 2], runs.theirs[before, 2], atol=1e-9)
    assert runs.ours[-1, 2] == pytest.approx(runs.theirs[-1, 2], abs=HEIGHT)
    assert runs.ours[-1, 2] == pytest.approx(radius, abs=HEIGHT)
    assert np.abs(runs.sim.qd).max() < AT_REST and np.abs(runs.data.qvel).max() < AT_REST
    weight = [0.0, 0.0, BODY_MASS * G]
    np.testing.assert_allclose(our_contact_force(runs.sim), weight, atol=unsolved(runs))
    np.testing.assert_allclose(runs.twin.contact_force(runs.data), weight, atol=unsolved(runs))


def slope_travel(runs: Runs, scene: Scene, angle: float) -> tuple[np.ndarray, np.ndarray]:
    """How far down the slope the box has gone after each step, ours and MuJoCo's, m."""
    down = np.array([0.0, -np.cos(angle), -np.sin(angle)])
    return (runs.ours[:, :3] - scene.q[:3]) @ down, (runs.theirs[:, :3] - scene.q[:3]) @ down


def acceleration(times: np.ndarray, travel: np.ndarray) -> float:
    """The acceleration of a travel that grows as a t²/2 (+ v t + c), fitted after 0.1 s
    (MuJoCo's contacts settle in their first steps), m/s²."""
    later = times >= 0.1
    return float(2.0 * np.polyfit(times[later], travel[later], 2)[0])


def test_a_box_on_an_incline_sticks_when_friction_holds_it() -> None:
    """On 20° with μ = tan θ + 0.1 both hold it: in 0.5 s it creeps under CREEP and does not
    accelerate (under 1e-3 of g sin θ); without friction it would slide 0.42 m."""
    angle = np.radians(20.0)
    scene = box_on_incline(angle, np.tan(angle) + 0.1)
    runs = run_both(scene, 0.5)
    ours, theirs = slope_travel(runs, scene, angle)

    assert np.abs(ours).max() < CREEP and np.abs(theirs).max() < CREEP
    for travel in (ours, theirs):
        assert abs(acceleration(runs.times(), travel)) < 1e-3 * G * np.sin(angle)


@pytest.mark.parametrize(("degrees", "mu"), [(30.0, 0.2), (20.0, np.tan(np.radians(20)) - 0.05)])
def test_a_box_on_an_incline_slides_at_g_sin_minus_mu_cos(degrees: float, mu: float) -> None:
    """With μ < tan θ both slide with acceleration g (sin θ − μ cos θ), within SLIDE of it
    and of each other, straight down the slope."""
    angle = np.radians(degrees)
    scene = box_on_incline(angle, mu)
    runs = run_both(scene, 0.5)
    ours, theirs = (acceleration(runs.times(), travel)
                    for travel in slope_travel(runs, scene, angle))

    expected = G * (np.sin(angle) - mu * np.cos(angle))
    assert ours == pytest.approx(expected, rel=SLIDE)
    assert theirs == pytest.approx(expected, rel=SLIDE)
    assert ours == pytest.approx(theirs, rel=SLIDE)
    sideways = np.abs(np.concatenate([runs.ours[:, 0], runs.theirs[:, 0]]))
    assert sideways.max() < 1e-6


def test_solo12_dropped_limp_comes_to_rest_as_in_mujoco() -> None:
    """Solo12 on its meshes, crouched 1 cm over the ground, joints limp (no damping, friction
    or armature in its URDF): its feet slide apart, its legs fold flat and its belly lands.
    After 0.7 s both are at rest (AT_REST), on the same links (the feet, the upper legs and
    the base), carrying m g (to `unsolved`); the base at the same height (HEIGHT) and level
    (1e-3 rad), each foot within 2 mm and each joint within 0.01 rad of MuJoCo's. Those
    last are set by where each foot stopped sliding, which soft friction moves: measured
    0.4 mm and 0.004 rad."""
    scene = solo12_crouched(0.01)
    runs = run_both(scene, 0.7)
    robot, ours, theirs = runs.sim.robot, runs.ours[-1], runs.theirs[-1]

    assert np.abs(runs.sim.qd).max() < AT_REST and np.abs(runs.data.qvel).max() < AT_REST
    our_links = {contact.link for contact in runs.sim.world_contacts}
    assert set(SOLO12_FEET) <= our_links
    assert our_links == runs.twin.contact_links(runs.data)
    weight = [0.0, 0.0, robot.mass * G]
    np.testing.assert_allclose(our_contact_force(runs.sim), weight, atol=unsolved(runs))
    np.testing.assert_allclose(runs.twin.contact_force(runs.data), weight, atol=unsolved(runs))
    assert ours[2] == pytest.approx(theirs[2], abs=HEIGHT)
    for q in (ours, theirs):
        assert rotation_matrix(q[3:7])[2, 2] > np.cos(1e-3)  # the base's z axis up
    for foot in SOLO12_FEET:
        np.testing.assert_allclose(robot.frame_pose(ours, foot)[:3, 3],
                                   robot.frame_pose(theirs, foot)[:3, 3], atol=2e-3)
    np.testing.assert_allclose(ours[7:], theirs[7:], atol=1e-2)


def test_the_twin_maps_velocities_and_efforts_as_mujoco_reads_them() -> None:
    """Solo12 floating free at a random state: MuJoCo's kinetic energy of the twin's qvel is
    ours of v (the free joint's world-frame linear velocity), and efforts on the joints
    through the twin's qfrc accelerate MuJoCo's joints as ours (to 1e-9 relative)."""
    scene = solo12_crouched(0.5)
    robot = scene.robot()
    twin = mujoco_twin(robot, scene.urdf, DT, None, scene.base_folder, scene.package_folders)
    rng = np.random.default_rng(3)
    q = scene.q.copy()
    q[3:7] = rng.normal(size=4)
    q[3:7] /= np.linalg.norm(q[3:7])
    v, tau = rng.normal(size=robot.nv), np.concatenate([np.zeros(6), rng.normal(size=12)])
    twin.model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    data = mujoco.MjData(twin.model)
    data.qpos[:], data.qvel[:] = twin.qpos(q), twin.qvel(q, v)
    data.qfrc_applied[:] = twin.qfrc(tau)
    mujoco.mj_forward(twin.model, data)
    ours = 0.5 * v @ robot.mass_matrix(q) @ v
    assert data.energy[1] == pytest.approx(ours, rel=1e-9)
    np.testing.assert_allclose(twin.v(data.qpos, data.qvel), v, rtol=1e-12, atol=1e-12)
    joints = np.flatnonzero(twin.dof_rows >= 6)
    ours_accel = robot.forward_dynamics(q, v, tau)[twin.dof_rows[joints]]
    np.testing.assert_allclose(data.qacc[joints], ours_accel,
                               rtol=1e-9, atol=1e-9 * np.abs(ours_accel).max())
