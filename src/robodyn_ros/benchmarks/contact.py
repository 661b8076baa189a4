"""The contact simulation against MuJoCo, µs per step on the same scenes from the same URDF,
and the arm with a table contact against the arm in free space, in one process.

    .venv/bin/python src/robodyn_ros/benchmarks/contact.py [--repeat 5] [--docs]

Every run is a sequence of 1 ms steps from the same start, the joints limp (zero effort):
ours `SimulatedRobot.step` in a world (contact.time_step, semi-implicit Euler), MuJoCo's
`mj_step` on its model of the same URDF text (robodyn_ros.testing.mujoco_twin: its own URDF
importer, a free joint at the root, the planes as plane geoms of the same friction, the same
gravity; its defaults otherwise: Euler, the pyramidal cone, soft contacts), one Python call
per step on both sides. The scenes (robodyn_ros.testing.contact_scenes):

1. the brick, a 2 kg box of 0.2 × 0.2 × 0.1 m, resting on the ground, 0.3 s;
2. Solo12 (example-robot-data, all its collision meshes) crouched 1 cm over the ground and
   dropped limp: it falls, its feet slide apart, its legs fold flat and it lands on its belly,
   0.7 s; then 0.3 s at rest, from where ours came to rest;
3. the bundled Panda (fixed base) in Franka's ready posture, its hand (a box from the flange
   to the fingertips, added to the URDF) on a table, held by its gravity torques and pressed
   down by 10 N at the hand: ours with the table against ours in free space, 0.3 s.

Each run is timed whole, ours and MuJoCo's (the Panda's two runs) taking turns `--repeat`
times: the median in µs per step, and the contacts per step on average.

Then two previews (sim.preview), each scenario's real-time factor (horizon / wall time, the
best of `--repeat`):

4. the Panda's hand moving 3 cm along the table pressing 10 N (a pose_target with force
   control in a world: the compiled contact rollout, sim.contact_rollout) against the same
   pose target in free space (the compiled rollout, sim.rollout), 1 s;
5. Solo12 standing on its four feet (the feet's collision shapes) under whole-body control
   on friction cones (a whole_body_pose in a world: the compiled contact rollout, the
   controller's programme solved by DAQP at every 1 ms step), 1 s, against MuJoCo's rollout
   of the same URDF with contacts at the same step under the same controller (the
   whole_body plugin's τ from MuJoCo's state each step, applied as qfrc_applied; it stands
   there too, its centre of mass within 0.1 mm over the second); then both with the
   controller run every SLOWER_CONTROL (the preview's control_period), τ held between.

Targets (✓/✗): the arm with its table contact at least TABLE_TARGET of its free-space speed
(SimulatedRobot, and the preview); Solo12's standing preview at least STANDING_TARGET × real
time and at or above MuJoCo's. --docs also writes the tables to docs/benchmarks/contact.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import mujoco
import numpy as np

from common import (
    BUNDLED_PANDA,
    Report,
    add_docs_option,
    format_us,
    interleaved_us,
    mark,
    markdown_table,
)
from preview import READY
from robodyn_ros import Robot
from robodyn_ros.contact import CollisionShape, World, collision_shapes, contact_points, world_of
from robodyn_ros.control import Controller, ControllerState, load_controller
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import Scenario, scenario_from_mapping
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.testing.contact_scenes import (
    GROUND_FRICTION,
    SOLO12_FEET,
    Scene,
    box_on_ground,
    ground,
    solo12_crouched,
)
from robodyn_ros.testing.mujoco_twin import MujocoTwin, mujoco_twin

DT = 1e-3  # s
TABLE_TARGET = 0.5  # the arm's steps per second with its table contact / in free space
STANDING_TARGET = 50.0  # Solo12's standing preview, × real time
SLOWER_CONTROL = 0.005  # s, the whole-body controller's period in the second standing run
PREVIEW_HORIZON = 1.0  # s
HAND = "panda_hand"
TCP = "panda_hand_tcp"
HAND_PUSH = 10.0  # N, down at the hand
TABLE_FRICTION = 0.5
# the hand and its closed fingers as one box, from the flange to the fingertips (tcp 0.1034 m)
HAND_COLLISION = ('<collision><origin xyz="0 0 0.0517"/>'
                  '<geometry><box size="0.06 0.2 0.1034"/></geometry></collision>')


@dataclass(frozen=True)
class Run:
    """A simulation's run of `steps` steps from its start."""

    start: Callable[[], None]  # back to the start, at rest
    step: Callable[[], None]
    contacts: Callable[[], int]  # of the last step
    steps: int

    def __call__(self) -> None:
        self.start()
        for _ in range(self.steps):
            self.step()

    def contacts_per_step(self) -> float:
        """The contacts per step on average over the run."""
        self.start()
        total = 0
        for _ in range(self.steps):
            self.step()
            total += self.contacts()
        return total / self.steps


@dataclass(frozen=True)
class Timed:
    """Two runs of a scene timed in turns: ours and MuJoCo's, or the Panda's with and without
    its table.

    Attributes:
        name: the scene.
        steps: of each run.
        contacts: the contacts per step on average, of each run.
        us: µs per step, the median of the timed runs, of each run.
    """

    name: str
    steps: int
    contacts: tuple[float, float]
    us: tuple[float, float]

    @property
    def ratio(self) -> float:
        """The first run's time per step over the second's."""
        return self.us[0] / self.us[1]


def our_run(sim: SimulatedRobot, q: np.ndarray, tau: np.ndarray, steps: int) -> Run:
    """`sim` from rest at q under the efforts tau."""
    return Run(lambda: sim.reset(q), lambda: sim.step(tau), lambda: len(sim.world_contacts),
               steps)


def their_run(twin: MujocoTwin, q: np.ndarray, steps: int) -> Run:
    """MuJoCo's model from rest at our q, zero effort."""
    model, data, qpos = twin.model, mujoco.MjData(twin.model), twin.qpos(q)

    def start() -> None:
        mujoco.mj_resetData(model, data)
        data.qpos[:] = qpos

    return Run(start, partial(mujoco.mj_step, model, data), lambda: data.ncon, steps)


def against_mujoco(name: str, scene: Scene, seconds: float, repeat: int) -> Timed:
    """The scene's run, ours against MuJoCo's."""
    robot = scene.robot()
    sim = SimulatedRobot(robot, "semi_implicit_euler", DT, q=scene.q, world=scene.world,
                         collision_shapes=scene.shapes())
    twin = mujoco_twin(robot, scene.urdf, DT, scene.world, scene.base_folder,
                       scene.package_folders)
    steps = round(seconds / DT)
    ours, theirs = our_run(sim, scene.q, np.zeros(robot.nv), steps), their_run(twin, scene.q,
                                                                                steps)
    return timed(name, ours, theirs, repeat)


def timed(name: str, first: Run, second: Run, repeat: int) -> Timed:
    """The two runs timed in turns, one whole run per timed loop."""
    contacts = (first.contacts_per_step(), second.contacts_per_step())
    us = interleaved_us([first, second], repeat, budget_s=0.0)
    return Timed(name, first.steps, contacts, (us[0] / first.steps, us[1] / second.steps))


def rested(scene: Scene, seconds: float) -> Scene:
    """The scene from where ours is after `seconds` of it, at rest."""
    robot = scene.robot()
    sim = SimulatedRobot(robot, "semi_implicit_euler", DT, q=scene.q, world=scene.world,
                         collision_shapes=scene.shapes())
    for _ in range(round(seconds / DT)):
        sim.step(np.zeros(robot.nv))
    return Scene(scene.urdf, sim.q, scene.world, scene.base_folder, scene.package_folders)


def panda_on_a_table(repeat: int) -> Timed:
    """The bundled Panda pressing its hand on a table, ours with the table and in free space."""
    urdf = BUNDLED_PANDA.read_text().replace(f'<link name="{HAND}">',
                                             f'<link name="{HAND}">{HAND_COLLISION}', 1)
    robot = Robot.from_urdf_string(urdf)
    shapes = collision_shapes(urdf)
    floor = ground().planes[0]
    height = min(contact_points(shape, robot.frame_pose(READY, shape.link), floor).heights.min()
                 for shape in shapes)
    table = world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, height],
                                  "friction": TABLE_FRICTION}]})
    steps, tau = round(0.3 / DT), robot.gravity_torques(READY)
    runs = []
    for world in (table, World()):
        sim = SimulatedRobot(robot, "semi_implicit_euler", DT, q=READY, world=world,
                             collision_shapes=shapes)
        sim.apply_wrench(HAND, [0.0, 0.0, -HAND_PUSH, 0.0, 0.0, 0.0])
        runs.append(our_run(sim, READY, tau, steps))
    return timed("Panda, hand pressed on a table", *runs, repeat)


def best_real_time_factor(run: Callable[[], float], repeat: int) -> float:
    """The largest of `repeat` real-time factors `run` returns (after one untimed run)."""
    run()
    return max(run() for _ in range(repeat))


def panda_previews(repeat: int) -> tuple[float, float]:
    """The real-time factors of the Panda's hand pressing along the table and of the same pose
    target in free space, both compiled."""
    urdf = BUNDLED_PANDA.read_text().replace(f'<link name="{HAND}">',
                                             f'<link name="{HAND}">{HAND_COLLISION}', 1)
    robot, shapes = Robot.from_urdf_string(urdf), collision_shapes(urdf)
    floor = ground().planes[0]
    height = min(contact_points(shape, robot.frame_pose(READY, shape.link), floor).heights.min()
                 for shape in shapes)
    start = robot.frame_pose(READY, TCP)[:3, 3]
    target = {"frame": TCP, "position": (start - [0.03, 0.0, 0.0]).tolist(),
              "kp": [900.0] * 3 + [400.0] * 3}
    pressing = scenario_from_mapping(robot, {
        "name": "press", "world": {"planes": [{"normal": [0, 0, 1], "point": [0, 0, height],
                                               "friction": TABLE_FRICTION}]},
        "pose_target": {**target, "force_axes": [0, 0, 1, 0, 0, 0],
                        "force_target": [0, 0, -HAND_PUSH, 0, 0, 0], "force_damping": 40.0}})
    free = scenario_from_mapping(robot, {"name": "free", "pose_target": target})
    settings = PreviewSettings(horizon=PREVIEW_HORIZON, dt=DT)

    def factor(scenario: Scenario) -> Callable[[], float]:
        return lambda: preview(robot, [scenario], settings, READY,
                               collision_shapes=shapes)[0].real_time_factor

    return (best_real_time_factor(factor(pressing), repeat),
            best_real_time_factor(factor(free), repeat))


def solo12_on_its_feet() -> tuple[Scene, Robot, tuple[CollisionShape, ...], np.ndarray]:
    """Solo12 crouched (contact_scenes), its feet's shapes and its q with them on the ground."""
    scene = solo12_crouched(0.0)
    robot = scene.robot()
    feet = tuple(shape for shape in scene.shapes() if shape.link in SOLO12_FEET)
    q = scene.q.copy()
    q[2] -= min(contact_points(shape, robot.frame_pose(q, shape.link), ground().planes[0])
                .heights.min() for shape in feet)
    return scene, robot, feet, q


def standing_controller(robot: Robot) -> Controller:
    """The whole_body plugin holding Solo12 on its four point feet (the standing runs')."""
    controller = load_controller("whole_body")()
    controller.configure(robot, {"contacts": [f"{foot}:3d" for foot in SOLO12_FEET],
                                 "frame": "base_link", "friction": GROUND_FRICTION,
                                 "min_normal_force": 1.0})
    return controller


def whole_body_call_us(repeat: int) -> float:
    """µs per call of the whole_body plugin's update on Solo12 standing (median)."""
    _, robot, _, q = solo12_on_its_feet()
    controller = standing_controller(robot)
    state = ControllerState(0.0, q, np.zeros(robot.nv))
    return interleaved_us([lambda: controller.update(state)], repeat, 0.05)[0]


def solo12_standing(repeat: int, control_period: float = 0.0) -> tuple[float, float]:
    """The real-time factors of Solo12 standing under whole-body control, the controller run
    every `control_period` (s; 0: every step): our preview, and MuJoCo's rollout under the
    same controller."""
    scene, robot, feet, q = solo12_on_its_feet()
    contacts = [{"frame": foot, "kind": "3d"} for foot in SOLO12_FEET]
    stand = scenario_from_mapping(robot, {
        "name": "stand", "world": {"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0],
                                               "friction": GROUND_FRICTION}]},
        "whole_body_pose": {"frame": "base_link", "contacts": contacts,
                            "position": robot.frame_pose(q, "base_link")[:3, 3].tolist(),
                            "friction": GROUND_FRICTION, "min_normal_force": 1.0}})
    settings = PreviewSettings(horizon=PREVIEW_HORIZON, dt=DT, control_period=control_period)
    ours = best_real_time_factor(lambda: preview(
        robot, [stand], settings, q, np.zeros(robot.nv),
        collision_shapes=feet)[0].real_time_factor, repeat)
    twin = mujoco_twin(robot, scene.urdf, DT, scene.world, scene.base_folder,
                       scene.package_folders)

    def theirs() -> float:
        controller = standing_controller(robot)
        data = mujoco.MjData(twin.model)
        data.qpos[:] = twin.qpos(q)
        started = time.perf_counter()
        for k in range(round(PREVIEW_HORIZON / DT)):
            if k % settings.control_every == 0:
                state = ControllerState(k * DT, twin.q(data.qpos), twin.v(data.qpos, data.qvel))
                data.qfrc_applied[:] = twin.qfrc(controller.update(state))
            mujoco.mj_step(twin.model, data)
        return PREVIEW_HORIZON / (time.perf_counter() - started)

    return ours, best_real_time_factor(theirs, repeat)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each (default 5)")
    parser.add_argument("--preview-repeat", type=int, default=20,
                        help="timed runs of each preview, the best taken (default 20: a "
                             "preview takes tens of milliseconds, and five of them fit in "
                             "one slow spell of a shared machine)")
    add_docs_option(parser)
    args = parser.parse_args(argv)
    report = Report.start(__file__, "The contact simulation against MuJoCo", args, argv)
    solo12 = solo12_crouched(0.01)
    scenes = [
        against_mujoco("brick resting on the ground", box_on_ground(), 0.3, args.repeat),
        against_mujoco("Solo12 dropped limp: falls, folds, rests", solo12, 0.7, args.repeat),
        against_mujoco("Solo12 at rest on belly, feet, upper legs", rested(solo12, 0.7), 0.3,
                       args.repeat),
    ]
    report.print(f"1 ms steps, one Python call each; median of {args.repeat} timed runs\n")
    report.print(markdown_table(
        ["scene", "steps", "contacts/step ours", "MuJoCo", "ours µs/step", "MuJoCo µs/step",
         "ours/MuJoCo"],
        [[s.name, str(s.steps), f"{s.contacts[0]:.1f}", f"{s.contacts[1]:.1f}",
          format_us(s.us[0]), format_us(s.us[1]), f"{s.ratio:.1f}"] for s in scenes]))
    panda = panda_on_a_table(args.repeat)
    speed = 1.0 / panda.ratio
    report.print(f"\n### The arm with a table contact against free space (SimulatedRobot, "
                 f"semi-implicit Euler); target: with the table ≥ {TABLE_TARGET:g} of the "
                 "free-space speed\n")
    report.print(markdown_table(
        ["run", "steps", "contacts/step", "µs/step", "speed / free space"],
        [[panda.name, str(panda.steps), f"{panda.contacts[0]:.1f}", format_us(panda.us[0]),
          f"{speed:.2f} {mark(speed >= TABLE_TARGET)}"],
         ["Panda, free space (same efforts)", str(panda.steps), f"{panda.contacts[1]:.1f}",
          format_us(panda.us[1]), "1"]]))
    pressing, free = panda_previews(args.preview_repeat)
    ours, theirs = solo12_standing(args.preview_repeat)
    ours_200, theirs_200 = solo12_standing(args.preview_repeat, SLOWER_CONTROL)
    report.print(f"\n### Previews, {PREVIEW_HORIZON:g} s at 1 ms (x real time, best of "
                 f"{args.preview_repeat}); targets: the arm with its table ≥ {TABLE_TARGET:g} "
                 f"of its free-space preview, Solo12 standing ≥ {STANDING_TARGET:g} x real "
                 "time and ≥ MuJoCo's\n")
    report.print(markdown_table(
        ["preview", "x real time", "against", "ratio"],
        [["Panda's hand pressing 10 N along a table", f"{pressing:.2f}",
          f"free space, compiled: {free:.1f}",
          f"{pressing / free:.3f} {mark(pressing / free >= TABLE_TARGET)}"],
         ["Solo12 standing, whole-body QP every step", f"{ours:.2f} "
          f"{mark(ours >= STANDING_TARGET)}", f"MuJoCo, same controller: {theirs:.2f}",
          f"{ours / theirs:.2f} {mark(ours >= theirs)}"],
         [f"... the QP every {SLOWER_CONTROL * 1e3:g} ms (control_period)", f"{ours_200:.2f}",
          f"MuJoCo, same controller: {theirs_200:.2f}", f"{ours_200 / theirs_200:.2f}"]]))
    report.print(f"\nThe whole_body plugin's update on Solo12 standing (its programme built, "
                 f"solved and turned into τ, one kernel call): "
                 f"{format_us(whole_body_call_us(args.repeat))} µs a call, median of "
                 f"{args.repeat}\n")
    report.finish()


if __name__ == "__main__":
    main()
