"""The ``robodyn`` command.

A robot description is a URDF file or a xacro file (its name ends in ``.xacro``); the xacro
file's arguments are ``NAME:=VALUE`` items anywhere on the command line, as the ``xacro``
command and ``ros2 launch`` take them: ``robodyn demo --urdf arm.urdf.xacro prefix:=left_``.
``robodyn launch`` takes its launch file's arguments so: ``robodyn launch sim namespace:=left``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn_ros.identification.estimation import PRIOR_WEIGHT
from robodyn_ros.model import ModelError, read_robot_description, xacro_argument
from robodyn_ros.resources import bundled_urdf, share_directory
from robodyn_ros.robot import Robot
from robodyn_ros.startup.compile_ahead import CompileAhead, robot_calls, robot_load_step

if TYPE_CHECKING:  # rclpy is imported by the commands that start nodes
    from rclpy.parameter import Parameter

    from robodyn_ros.contact import CollisionShape
    from robodyn_ros.sim.scenarios import Scenario

XACRO_HELP = "a .xacro file's arguments are NAME:=VALUE items anywhere on the line"
URDF_HELP = f"URDF or .xacro file (default: the bundled Franka Emika Panda); {XACRO_HELP}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``robodyn`` console script."""
    parser = command_parser()
    arguments = sys.argv[1:] if argv is None else argv
    if list(arguments[:1]) == ["launch"]:  # its NAME:=VALUE items: the launch file's arguments
        args, stray = parser.parse_known_args([item for item in arguments if ":=" not in item])
        args.arguments += [*stray, *(item for item in arguments if ":=" in item)]
        return run_launch(args)
    try:
        options, xacro_args = split_xacro_arguments(arguments)
    except ValueError as error:
        parser.error(str(error))
    args = parser.parse_args(options)
    if xacro_args and not hasattr(args, "urdf"):
        parser.error(f"robodyn {args.command}: NAME:=VALUE items are the arguments of a .xacro "
                     "robot description, and this command takes none")
    args.xacro_args = xacro_args
    runs: dict[str, Callable[[argparse.Namespace], int]] = {
        "sim": run_sim, "preview": run_preview, "excite": run_excite, "bag": run_bag,
        "send-trajectory": run_send_trajectory, "warmup": run_warmup,
    }
    try:
        if args.command in runs:
            return runs[args.command](args)
        return run_demo(args.urdf, args.frame, args.gravity, args.xacro_args)
    except (ModelError, OSError, ValueError) as error:
        print(f"robodyn: {error}", file=sys.stderr)
        return 1


def command_parser() -> argparse.ArgumentParser:
    """The parser of ``robodyn``'s command line: every command and its options."""
    parser = argparse.ArgumentParser(
        prog="robodyn", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="load a robot and print a summary of its dynamics")
    demo.add_argument("--urdf", help=URDF_HELP)
    demo.add_argument("--frame", help="end-effector frame (default: the last URDF link)")
    add_gravity_option(demo)
    warmup = commands.add_parser(
        "warmup", help="compile the kernels the nodes and commands call into the on-disk "
        "cache, on every core (once per install; make run and make test run it)")
    warmup.add_argument("--urdf", help=URDF_HELP)
    warmup.add_argument("--frame", help="end-effector frame (default: the last URDF link)")
    warmup.add_argument("--helpers", type=int, default=None,
                        help="helper processes (default: one per spare core)")
    sim = commands.add_parser(
        "sim", help="the simulated arm, dynamics and operational-space controller nodes, "
        "driven through pose targets; or, with --trajectory, a joint trajectory played and "
        "recorded (ROS 2)"
    )
    sim.add_argument("--urdf", help=URDF_HELP)
    sim.add_argument("--params", help="ROS parameters file (default: config/sim.yaml; with "
                     "--trajectory, the params.yaml beside the trajectory, robodyn excite's)")
    sim.add_argument("--frame", default="panda_hand_tcp", help="the controlled frame")
    sim.add_argument("--seconds-per-target", type=float, default=3.0, help="sim time")
    sim.add_argument("--trajectory", help="a JointTrajectory YAML file (robodyn excite's): "
                     "played by sim_node and controller_node instead of the pose targets")
    sim.add_argument("--record", metavar="BAG", help="with --trajectory: the new rosbag2 "
                     "folder that joint_states are recorded to, until the trajectory ends")
    sim.add_argument("--storage", default="sqlite3", choices=("sqlite3", "mcap"),
                     help="the bag's storage (default sqlite3)")
    add_floating_base_option(
        sim, "(default robot: the bundled Solo12) sim_node holds it on its feet, "
        "controller_node's whole-body controller stands it up and sways its base, sim_node "
        "publishes odometry")
    sim.add_argument("--contacts", nargs="+", default=(), metavar="FRAME[:3d]",
                     help="with --floating-base: the feet (default: the lowest frames)")
    add_world_option(sim, "with the pose targets; sim_node's world_file, and it publishes the "
                     "contacts on `contacts`")
    add_gravity_option(sim)
    add_bag_commands(commands)
    add_launch_command(commands)
    add_preview_command(commands)
    add_excite_command(commands)
    send = commands.add_parser(
        "send-trajectory", help="publish a JointTrajectory YAML file (robodyn excite's) until "
        "the controller confirms it took it (ROS 2)")
    send.add_argument("file", help="the trajectory, in the YAML form of ros2 topic pub")
    send.add_argument("--topic", default="joint_trajectory", help="the controller's topic")
    send.add_argument("--node", default="controller_node", help="the controller node's name")
    send.add_argument("--patience", type=float, default=30.0,
                      help="s to wait for the controller to appear")
    return parser


def refuse_earlier_output(folder: Path, marker: str, what: str) -> None:
    """Every command that writes a folder refuses one an earlier run wrote (its `marker`
    file there) rather than mixing or replacing its files.

    Raises:
        ValueError: the folder holds `marker`, naming the folder and `what` it holds.
    """
    if (folder / marker).exists():
        raise ValueError(f"output folder {folder} already holds {what} ({marker}); choose "
                         "another (--output) or remove it")


def split_xacro_arguments(argv: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The command line without its ``NAME:=VALUE`` items, and those items as xacro arguments.

    Raises:
        ValueError: an item with ``:=`` has no name before it.
    """
    options = [item for item in argv if ":=" not in item]
    return options, dict(xacro_argument(item) for item in argv if ":=" in item)


def load_robot(urdf: str | os.PathLike[str], xacro_args: Mapping[str, str] | None,
               gravity: tuple[float, float, float] | None,
               floating_base: bool = False) -> Robot:
    """The robot of a URDF file, or of a xacro file expanded with `xacro_args`; its root
    link floating (a free flyer at the root) with `floating_base`."""
    return Robot.from_urdf_string(read_robot_description(urdf, xacro_args),
                                  source=os.fspath(urdf), gravity=gravity,
                                  floating_base=floating_base)


def add_floating_base_option(parser: argparse.ArgumentParser, meaning: str) -> None:
    """--floating-base: the robot's root link floats (a free flyer); `meaning` says what the
    command then does."""
    parser.add_argument("--floating-base", action="store_true",
                        help=f"the robot's root link floats: {meaning}")


def add_world_option(parser: argparse.ArgumentParser, meaning: str) -> None:
    """--world FILE: the planes the robot touches; `meaning` says where the command uses
    them."""
    parser.add_argument("--world", metavar="FILE",
                        help="a YAML file of planes (docs/contact.md) the robot's <collision> "
                        f"elements touch: {meaning}")


def add_gravity_option(parser: argparse.ArgumentParser) -> None:
    """--gravity GX,GY,GZ: the robot's gravity vector in its base frame."""
    parser.add_argument(
        "--gravity", type=gravity_vector, metavar="GX,GY,GZ",
        help="gravitational acceleration in the base frame, m/s² (default 0,0,-9.81; a wall "
        "mount: 9.81,0,0)",
    )


@dataclass(frozen=True)
class PayloadOption:
    """A --payload FRAME:MASS[:CX,CY,CZ]: a point mass on a frame (Robot.with_payload)."""

    frame: str
    mass: float
    com: tuple[float, ...] = (0.0, 0.0, 0.0)


def add_payload_option(parser: argparse.ArgumentParser) -> None:
    """--payload FRAME:MASS[:CX,CY,CZ], repeatable: loads the robot carries."""
    parser.add_argument(
        "--payload", type=payload_option, action="append", default=[],
        metavar="FRAME:MASS[:CX,CY,CZ]",
        help="a point mass (kg) on a frame, its centre of mass (m) in the frame's axes; once per "
        "frame (e.g. panda_hand:1.5:0,0,0.1)",
    )


def payload_option(text: str) -> PayloadOption:
    """FRAME:MASS or FRAME:MASS:CX,CY,CZ, for --payload."""
    frame, _, rest = text.partition(":")
    mass, _, com = rest.partition(":")
    try:
        option = PayloadOption(frame, float(mass), tuple(map(float, com.split(","))) if com
                               else (0.0, 0.0, 0.0))
    except ValueError:
        option = None
    if option is None or not frame or len(option.com) != 3:
        raise argparse.ArgumentTypeError(
            f"FRAME:MASS or FRAME:MASS:CX,CY,CZ (kg, m); got {text!r}")
    return option


def carrying(robot: Robot, payloads: Sequence[PayloadOption]) -> Robot:
    """The robot with the --payload loads on their frames.

    Raises:
        ValueError: two loads on one frame.
        ModelError: an unknown frame or an impossible load (Robot.with_payload).
    """
    frames = [payload.frame for payload in payloads]
    repeated = sorted({frame for frame in frames if frames.count(frame) > 1})
    if repeated:
        raise ValueError(f"--payload: one load per frame; {', '.join(repeated)} given twice")
    for payload in payloads:
        robot = robot.with_payload(payload.frame, payload.mass, payload.com)
    return robot


def gravity_vector(text: str) -> tuple[float, float, float]:
    """Three comma-separated numbers, for --gravity."""
    try:
        values = tuple(float(value) for value in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"three numbers GX,GY,GZ (m/s²); got {text!r}")
    return values


def run_demo(urdf: str | None, frame: str | None,
             gravity: tuple[float, float, float] | None = None,
             xacro_args: Mapping[str, str] | None = None) -> int:
    """Print mass, M(q), gravity torques, the end-effector pose and Λ at a few
    configurations, a consistency check and a timing line. On a new machine the kernels
    compile meanwhile in helper processes, with progress on stderr (compile_ahead)."""
    start = time.perf_counter()
    path = urdf or bundled_urdf("panda")
    text = read_robot_description(path, xacro_args)
    with CompileAhead(progress) as compile_ahead:
        compile_ahead.ahead([robot_load_step(text)])
        robot = Robot.from_urdf_string(text, source=os.fspath(path), gravity=gravity)
        frame = frame or robot.frame_names[-1]
        compile_ahead.ahead(robot_calls(robot, DEMO_CALLS, frame))
        model = robot.model
        print(f"robot '{model.name}' from {path}")
        print(f"  {robot.nv} joints: {', '.join(robot.joint_names)}")
        print(f"  {len(robot.frame_names)} frames; end effector '{frame}'")
        print(f"  moving mass {model.total_mass:.3f} kg")
        np.set_printoptions(precision=4, suppress=True, linewidth=110)
        for name, q in demo_configurations(robot).items():
            print_configuration(robot, name, q, frame)
        first_calls = time.perf_counter() - start
        print_consistency(robot)
    print_timing(robot, frame)
    print(f"start-up: load and first call of each function {first_calls:.2f} s "
          "(includes compiling the kernels the first time they run on this machine)")
    return 0


def run_warmup(args: argparse.Namespace) -> int:
    """`robodyn warmup`: every kernel the package's nodes and commands call, compiled or
    loaded, with progress on stderr."""
    from robodyn_ros.ros.warmup import warm_up

    if args.helpers is not None and args.helpers < 0:
        raise ValueError(f"--helpers must be a number of processes >= 0; got {args.helpers}")
    path = args.urdf or bundled_urdf("panda")
    warm_up(read_robot_description(path, args.xacro_args), os.fspath(path), args.frame,
            args.helpers, progress)
    return 0


def progress(line: str) -> None:
    """A line of progress, on stderr (stdout carries the command's results)."""
    print(line, file=sys.stderr, flush=True)


def run_sim(args: argparse.Namespace) -> int:
    """The ROS 2 simulation in one process; 0 when every target was reached (or, with
    --trajectory, the trajectory was played and recorded)."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if args.world is not None and (args.floating_base or args.trajectory or args.record):
        raise ValueError("--world goes with the pose targets, not with --floating-base (whose "
                         "feet sim_node holds, which a world does not take) or --trajectory")
    if args.trajectory is not None or args.record is not None:
        return run_sim_trajectory(args)
    if args.floating_base:
        return run_sim_floating(args)
    from robodyn_ros.ros.simulation import TargetTour, run_simulation

    urdf = Path(args.urdf) if args.urdf else bundled_urdf("panda")
    params = Path(args.params) if args.params else share_directory() / "config" / "sim.yaml"
    sim_parameters = ([] if args.world is None
                      else world_parameters(Path(args.world), urdf, args.xacro_args))
    reached = run_simulation(urdf, params, TargetTour(args.frame, args.seconds_per_target),
                             gravity=args.gravity, xacro_args=args.xacro_args,
                             sim_parameters=sim_parameters)
    print("\nall targets reached" if reached else "\nsome targets were not reached")
    return 0 if reached else 1


def world_parameters(path: Path, urdf: Path, xacro_args: Mapping[str, str]
                     ) -> list[Parameter[Any]]:
    """sim_node's parameters for ``robodyn sim --world``: world_file, and the URDF as
    robot_description_file (without xacro arguments) so that sim_node finds a relative mesh
    filename from its folder and a package:// one from the folders above it (ros.contacts);
    once the world and the robot's collision shapes that touch it load here as sim_node will
    load them, so that what it would refuse is named before the nodes start.

    Raises:
        ValueError: a world file that does not load (contact.WorldError), a world with planes
            and a robot without <collision> elements, a collision that cannot be read
            (contact.GeometryError); naming the file and the field or link.
    """
    from rclpy.parameter import Parameter

    from robodyn_ros.contact import load_world
    from robodyn_ros.ros.contacts import world_shapes
    from robodyn_ros.ros.description import RobotDescription

    world = load_world(path)
    from_file = not xacro_args  # a xacro file's arguments come with its text only
    description = RobotDescription(read_robot_description(urdf, xacro_args), str(urdf),
                                   urdf.resolve().parent if from_file else None)
    world_shapes(world, description, Robot.from_urdf_string(description.urdf, source=str(urdf)))
    print(f"world: {len(world.planes)} plane(s) from {path}; sim_node publishes the contacts "
          "on /contacts (robodyn_interfaces/Contacts) with each joint state")
    parameters = [Parameter("world_file", value=str(path.resolve()))]
    if from_file:
        parameters += [Parameter("robot_description", value=""),
                       Parameter("robot_description_file", value=str(urdf.resolve()))]
    return parameters


def run_sim_floating(args: argparse.Namespace) -> int:
    """`robodyn sim --floating-base`: 0 when the base reached each target."""
    from robodyn_ros.ros.floating_simulation import run_floating_simulation

    urdf = Path(args.urdf) if args.urdf else bundled_urdf("solo12")
    params = (Path(args.params) if args.params
              else share_directory() / "config" / "floating_sim.yaml")
    reached = run_floating_simulation(urdf, params, args.contacts, args.seconds_per_target,
                                      gravity=args.gravity)
    print("\nthe base reached its targets" if reached else "\nthe base missed a target")
    return 0 if reached else 1


def run_sim_trajectory(args: argparse.Namespace) -> int:
    """`robodyn sim --trajectory FILE --record BAG`: prints what was recorded."""
    from robodyn_ros.identification.excitation_report import PARAMS_FILE
    from robodyn_ros.ros.trajectory_run import play_and_record

    if args.trajectory is None or args.record is None:
        raise ValueError("--trajectory and --record go together: the trajectory to play and "
                         "the bag to record it to")
    trajectory = Path(args.trajectory)
    params = Path(args.params) if args.params else trajectory.parent / PARAMS_FILE
    if not params.is_file():
        raise ValueError(f"{params}: no such parameters file (robodyn excite writes "
                         f"{PARAMS_FILE} beside the trajectory; or give --params)")
    urdf = Path(args.urdf) if args.urdf else bundled_urdf("panda")
    try:
        run = play_and_record(urdf, params, trajectory, Path(args.record), args.storage,
                              args.gravity, args.xacro_args)
    except KeyboardInterrupt:
        print(f"robodyn: interrupted; {args.record} holds what was recorded until then",
              file=sys.stderr)
        return 1
    except RuntimeError as error:  # a node that did not configure or activate (its log: why)
        print(f"robodyn: {error}", file=sys.stderr)
        return 1
    errors = ", ".join(f"{name} {error:.2g}" for name, error in
                       zip(run.joint_names, run.tracking_error, strict=True))
    print(f"recorded to {run.bag}: {run.messages} joint_states over {run.duration:.2f} s of "
          f"sim time; largest tracking error, rad: {errors}")
    return 0


def add_bag_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`robodyn bag analyze`, `bag identify`, `bag record` and `bag replay`."""
    bag = commands.add_parser("bag", help="analyse, identify from, record or replay a rosbag2 of "
                              "joint states")
    actions = bag.add_subparsers(dest="bag_command", required=True)
    analyze = actions.add_parser(
        "analyze", help="the dynamics of a recorded run: residuals, cond(M), energy, Λ; a CSV, "
        "a report, plots and a bag of robodyn_interfaces messages"
    )
    add_recorded_run_options(analyze, "rosbag2 folder (sqlite3 or mcap)")
    add_payload_option(analyze)
    analyze.add_argument("--frames", nargs="*", default=[], help="frames for Λ and manipulability")
    analyze.add_argument("--mass-matrix-method", default="crba", choices=Robot.MASS_MATRIX_METHODS)
    analyze.add_argument("--forward-dynamics-method", default="aba",
                         choices=Robot.FORWARD_DYNAMICS_METHODS)
    add_bag_output_options(analyze, "<bag>_dynamics")
    analyze.add_argument("--no-bag", action="store_true", help="skip the output bag")
    add_identify_command(actions)
    record = actions.add_parser("record", help="record topics to a new rosbag2 until Ctrl-C "
                                "(ROS 2)")
    record.add_argument("bag", help="the new rosbag2 folder")
    record.add_argument("--topics", nargs="+", default=None, metavar="TOPIC",
                        help="the topics (default: /joint_states and the dynamics topics)")
    record.add_argument("--duration", type=float, default=None, help="s; default: until Ctrl-C")
    record.add_argument("--storage", choices=("sqlite3", "mcap"), default="sqlite3")
    replay = actions.add_parser("replay", help="publish a bag's joint states and /clock (ROS 2)")
    replay.add_argument("bag", help="rosbag2 folder (sqlite3 or mcap)")
    replay.add_argument("--topic", default="/joint_states", help="the topic to publish")
    replay.add_argument("--rate", type=float, default=1.0, help="speed: 2 plays twice as fast")


def add_recorded_run_options(parser: argparse.ArgumentParser, bag_help: str) -> None:
    """The bag, the robot that recorded it, its topic and how its states are differentiated."""
    parser.add_argument("bag", help=bag_help)
    parser.add_argument("--urdf", required=True,
                        help=f"URDF or .xacro file of the recorded robot; {XACRO_HELP}")
    add_gravity_option(parser)
    parser.add_argument("--topic", default="/joint_states", help="sensor_msgs/JointState topic")
    parser.add_argument("--window", type=int, default=11,
                        help="Savitzky-Golay window, samples (odd), for q̇ (when not recorded) "
                        "and q̈")


def add_bag_output_options(parser: argparse.ArgumentParser, default_folder: str) -> None:
    """The backend the work runs on, and where and how its outputs go."""
    parser.add_argument("--backend", default="serial",
                        choices=("serial", "threads", "processes", "dask"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", help=f"output folder (default: {default_folder} beside it)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--progress", action="store_true", default=None,
                        help="show the progress bar even when stderr is not a terminal")


def add_identify_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`robodyn bag identify`."""
    identify = actions.add_parser(
        "identify", help="identify the robot's inertial parameters, armature and friction (or "
        "a held load's) from a recorded run: an identified URDF, parameters.yaml, a report"
    )
    add_recorded_run_options(identify, "rosbag2 folder (sqlite3 or mcap) with efforts")
    identify.add_argument("--validate", metavar="BAG",
                          help="a second run to check the identified model on")
    identify.add_argument("--payload-frame", metavar="FRAME",
                          help="identify only a load held on this frame (payload.yaml)")
    identify.add_argument("--parameters", metavar="FILE",
                          help="with --payload-frame: the robot's parameters.yaml from an "
                          "earlier identification (default: the URDF's values)")
    identify.add_argument("--fit", metavar="KINDS", default="",
                          help="joint parameters to fit even where the run does not inform "
                          "them, a comma-separated list of offsets, friction, armature "
                          "(default: each is fitted where the run informs it, else held at "
                          "the URDF's value; offsets at zero)")
    identify.add_argument("--prior-weight", type=float, default=PRIOR_WEIGHT,
                          help="how many samples' worth the URDF's values count as where the "
                          f"run does not inform them (default {PRIOR_WEIGHT:g})")
    add_floating_base_option(
        identify, "its pose and twist come from --odometry-topic, its six rows are identified "
        "from the external wrenches alone")
    identify.add_argument("--odometry-topic", default="/odometry",
                          help="with --floating-base: the base's nav_msgs/Odometry topic")
    identify.add_argument("--wrench-topic", dest="wrench_topics", action="append", default=[],
                          metavar="TOPIC", help="a geometry_msgs/WrenchStamped topic of external "
                          "wrenches on the robot (contact forces), each on the robot frame its "
                          "header names, world-aligned at its origin; repeat for several")
    add_bag_output_options(identify, "<bag>_identified")


def run_bag_identify(args: argparse.Namespace) -> int:
    """`robodyn bag identify`: prints the report and the files written."""
    from robodyn_ros.identification.files import read_parameters, write_identification
    from robodyn_ros.identification.from_bag import IdentificationOptions, identify_bag
    from robodyn_ros.identification.informed import checked_kinds
    from robodyn_ros.identification.plots import write_identification_plots
    from robodyn_ros.parallel import backend

    bag = Path(args.bag)
    folder = Path(args.output) if args.output else bag.parent / f"{bag.name}_identified"
    refuse_earlier_output(folder, "report.txt", "an identification")
    if args.parameters and not args.payload_frame:
        raise ValueError("--parameters gives the robot's own parameters for --payload-frame")
    fit = checked_kinds([kind.strip() for kind in args.fit.split(",") if kind.strip()])
    if fit and args.payload_frame:
        raise ValueError("--fit chooses the robot's joint parameters; a load (--payload-frame) "
                         "has none")
    urdf = read_robot_description(args.urdf, args.xacro_args)
    robot = Robot.from_urdf_string(urdf, source=os.fspath(args.urdf), gravity=args.gravity,
                                   floating_base=args.floating_base)
    options = IdentificationOptions(
        topic=args.topic, odometry_topic=args.odometry_topic,
        wrench_topics=tuple(args.wrench_topics), window=args.window,
        prior_weight=args.prior_weight,
        payload_frame=args.payload_frame,
        known=read_parameters(args.parameters, robot) if args.parameters else None, fit=fit,
    )
    show = sys.stderr.isatty() if args.progress is None else args.progress
    with backend(args.backend, workers=args.workers) as pool:
        result = identify_bag(bag, robot, options, validate=args.validate, pool=pool,
                              show_progress=show)
    files = write_identification(folder, result, urdf)
    if not args.no_plots:
        files += write_identification_plots(folder, result)
    print(files[0].read_text(), end="")
    print(f"written to {folder}: {', '.join(path.name for path in files)}")
    return 0


def run_send_trajectory(args: argparse.Namespace) -> int:
    """`robodyn send-trajectory`: the file's trajectory sent until the controller took it."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    from robodyn_ros.ros.trajectory_sender import send_trajectory

    try:
        sends = send_trajectory(args.file, args.topic, args.node, args.patience)
    except KeyboardInterrupt:
        print(f"robodyn: interrupted; whether {args.node} took the trajectory is not known",
              file=sys.stderr)
        return 1
    print(f"{args.node} took the trajectory of {args.file} (sent {sends} time(s))")
    return 0


def add_launch_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`robodyn launch FILE [NAME:=VALUE ...]`."""
    from robodyn_ros.ros.launch_arguments import LAUNCH_FILE_NAMES

    launch = commands.add_parser(
        "launch", help="start a launch file's nodes, one process each, with its arguments, "
        "where ROS 2's launch tool is not installed; until Ctrl-C (ROS 2)")
    launch.add_argument("file", choices=LAUNCH_FILE_NAMES, help="the package's launch file")
    launch.add_argument("arguments", nargs="*", metavar="NAME:=VALUE",
                        help="the launch file's arguments (--show-args lists them)")
    launch.add_argument("--show-args", action="store_true",
                        help="list the launch file's arguments, their defaults and meaning")


def run_launch(args: argparse.Namespace) -> int:
    """`robodyn launch`: the arguments listed, or the nodes run until a signal or until one
    exits on its own (its status then 1); bad arguments are refused before any starts."""
    from robodyn_ros.ros.launch_arguments import (
        WITHOUT_ROBOT_STATE_PUBLISHER,
        argument_values,
        launch_file,
        node_commands,
        show_arguments,
    )
    from robodyn_ros.ros.supervisor import supervise

    try:
        launch = launch_file(args.file)
        if args.show_args:
            print(show_arguments(launch))
            return 0
        values = argument_values(launch, args.arguments)
        with tempfile.TemporaryDirectory(prefix="robodyn_launch_") as folder:
            commands = node_commands(launch, values, Path(folder) / "robot_description.yaml")
            os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            if launch.robot_state_publisher:
                print(f"[launch] {WITHOUT_ROBOT_STATE_PUBLISHER}", flush=True)
            status = supervise(commands)
    except (ModelError, OSError, ValueError) as error:
        print(f"robodyn launch {args.file}: {error}", file=sys.stderr)
        return 1
    if status:
        print(f"robodyn launch {args.file}: not every node ended cleanly; the [launch] lines "
              "above say which and how", file=sys.stderr)
    return status


def run_bag(args: argparse.Namespace) -> int:
    """`robodyn bag analyze` (prints the report), `bag identify`, `bag record` or `bag
    replay`."""
    if args.bag_command == "identify":
        return run_bag_identify(args)
    if args.bag_command in ("record", "replay"):
        os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if args.bag_command == "record":
        from robodyn_ros.ros.bag_record import DEFAULT_TOPICS, record_bag

        counts = record_bag(args.bag, args.topics or DEFAULT_TOPICS, args.duration, args.storage)
        recorded = ", ".join(f"{count} of {topic}" for topic, count in counts.items())
        print(f"recorded to {args.bag}: {recorded or 'nothing (no topic was published)'}")
        return 0
    if args.bag_command == "replay":
        from robodyn_ros.ros.bag_replay import replay_bag

        count = replay_bag(args.bag, args.topic, args.rate)
        print(f"published {count} messages of {args.topic} from {args.bag}")
        return 0
    from robodyn_ros.bag import AnalysisOptions, analyze_bag

    options = AnalysisOptions(
        topic=args.topic, frames=tuple(args.frames), window=args.window,
        mass_matrix_method=args.mass_matrix_method,
        forward_dynamics_method=args.forward_dynamics_method, backend=args.backend,
        workers=args.workers, output=Path(args.output) if args.output else None,
        plots=not args.no_plots, dynamics_bag=not args.no_bag, progress=args.progress,
    )
    robot = carrying(load_robot(args.urdf, args.xacro_args, args.gravity), args.payload)
    outputs = analyze_bag(args.bag, robot, options)
    print(outputs.report, end="")
    print(f"written to {outputs.folder}: {', '.join(p.name for p in outputs.files)}")
    return 0


def add_preview_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`robodyn preview URDF SCENARIOS.yaml`."""
    preview = commands.add_parser(
        "preview", help="simulate scenarios ahead, faster than real time: a metrics table and "
        "PNG plots of the predicted trajectories"
    )
    preview.add_argument("urdf", help=f"URDF or .xacro file; {XACRO_HELP}")
    preview.add_argument("scenarios",
                         help="YAML file: scenarios, settings, start (docs/preview.md)")
    preview.add_argument("--horizon", type=float, help="s (overrides the file)")
    preview.add_argument("--dt", type=float, help="s (overrides the file)")
    preview.add_argument("--integrator", help="rk4 | semi_implicit_euler | rk45 | lsoda")
    preview.add_argument("--forward-dynamics-method", help="a Robot.forward_dynamics method")
    preview.add_argument("--control-period", type=float,
                         help="s between the controller's commands (0: every step)")
    preview.add_argument("--backend", default="threads", choices=("serial", "threads", "processes"))
    preview.add_argument("--workers", type=int, default=2)
    preview.add_argument("--output", default="preview", help="folder of the plots")
    preview.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    add_floating_base_option(
        preview, "torque_profile and whole_body_pose scenarios; start: the whole configuration "
        "[x y z, qx qy qz qw, joints]")
    add_world_option(preview, "for every scenario without a world of its own")
    add_gravity_option(preview)
    add_payload_option(preview)


def run_preview(args: argparse.Namespace) -> int:
    """Print the metrics table of every scenario; write the plots."""
    from robodyn_ros.parallel import backend
    from robodyn_ros.sim.preview import preview
    from robodyn_ros.sim.preview_report import (
        JOINTS_PLOT,
        contact_table,
        metrics_table,
        read_scenarios_file,
        write_plots,
    )
    from robodyn_ros.sim.simulated_robot import WORLD_INTEGRATOR

    if not args.no_plots:
        refuse_earlier_output(Path(args.output), JOINTS_PLOT, "a preview's plots")
    robot = carrying(load_robot(args.urdf, args.xacro_args, args.gravity, args.floating_base),
                     args.payload)
    scenarios, settings, start = read_scenarios_file(
        robot, args.scenarios, horizon=args.horizon, dt=args.dt, integrator=args.integrator,
        forward_dynamics_method=args.forward_dynamics_method, control_period=args.control_period,
    )
    if args.world is not None:
        scenarios = with_world(scenarios, Path(args.world))
    shapes = preview_shapes(robot, scenarios, Path(args.urdf), args.xacro_args)
    with backend(args.backend, workers=args.workers) as pool:
        results = preview(robot, scenarios, settings, start, pool=pool, collision_shapes=shapes)
    print(f"{len(results)} scenarios, horizon {settings.horizon} s, dt {settings.dt} s, "
          f"{settings.integrator}, {settings.forward_dynamics_method}, control every "
          f"{settings.control_every} step(s)")
    print(metrics_table(results))
    contacts = contact_table(results)
    if contacts:
        print(f"\ncontacts with the world (those scenarios stepped {WORLD_INTEGRATOR}):\n"
              f"{contacts}")
    if not args.no_plots:
        written = write_plots(args.output, robot, scenarios, results)
        print(f"plots: {', '.join(str(path) for path in written)}")
    return 0


def with_world(scenarios: list[Scenario], path: Path) -> list[Scenario]:
    """The scenarios, each without a world of its own given the world of the file.

    Raises:
        ValueError: a file that does not load (contact.WorldError), naming it and the field.
    """
    from robodyn_ros.contact import load_world

    world = load_world(path)
    return [scenario if scenario.world.planes else replace(scenario, world=world)
            for scenario in scenarios]


def preview_shapes(robot: Robot, scenarios: list[Scenario], urdf: Path,
                   xacro_args: Mapping[str, str] | None) -> tuple[CollisionShape, ...]:
    """The robot's collision shapes on links that move, where a scenario has a world (a
    relative mesh filename from the URDF's folder, a package:// one from the ament index or
    the folders above it); none otherwise.

    Raises:
        ValueError: a world and no such shape, or a collision that cannot be read
            (contact.GeometryError), naming the link.
    """
    from robodyn_ros.contact import collision_shapes, moving_shapes, package_folders

    worlds = [scenario for scenario in scenarios if scenario.world.planes]
    if not worlds:
        return ()
    folder = urdf.resolve().parent
    shapes = moving_shapes(robot, collision_shapes(read_robot_description(urdf, xacro_args),
                                                   folder, tuple(package_folders(folder))))
    if not shapes:
        raise ValueError(f"scenario '{worlds[0].name}': a world, but {urdf} has no "
                         "<collision> element on a link that moves to touch it")
    return shapes


DEMO_CALLS = (("frame_pose", 0), ("gravity_torques", 0), ("mass_matrix", 0), ("jacobian", 0),
              ("operational_space_inertia", 0), ("inverse_dynamics", 0),
              ("forward_dynamics", 0))
"""The Robot functions `robodyn demo` calls, in its order: (function, batch) pairs, batch 0
for one state (compile_ahead.robot_calls)."""


def demo_configurations(robot: Robot) -> dict[str, np.ndarray]:
    """Zero, mid-range (middle of finite limits, 0 elsewhere) and a seeded random state."""
    lower, upper = robot.per_coordinate(robot.model.lower), robot.per_coordinate(robot.model.upper)
    finite = np.isfinite(lower) & np.isfinite(upper)
    middle = np.where(finite, 0.5 * (lower + upper), 0.0)
    rng = np.random.default_rng(0)
    low, high = np.where(finite, lower, -np.pi), np.where(finite, upper, np.pi)
    return {"zero": np.zeros(robot.nv), "mid-range": middle, "random": rng.uniform(low, high)}


def print_configuration(robot: Robot, name: str, q: np.ndarray, frame: str) -> None:
    """The dynamics summary at one configuration."""
    pose = robot.frame_pose(q, frame)
    print(f"\nconfiguration '{name}': q = {q} rad|m")
    print(f"  {frame} position {pose[:3, 3]} m")
    print(f"  gravity torques g(q) = {robot.gravity_torques(q)} N·m|N")
    print("  joint-space inertia M(q):")
    print("   ", str(robot.mass_matrix(q)).replace("\n", "\n    "))
    rank = np.linalg.matrix_rank(robot.jacobian(q, frame))
    if rank < 6:
        print(f"  operational-space inertia of {frame}: none, the Jacobian has rank {rank} < 6")
        return
    Lambda = robot.operational_space_inertia(q, frame)
    print(f"  operational-space inertia of {frame}: translational eigenvalues "
          f"{np.linalg.eigvalsh(Lambda[:3, :3])} kg")


def print_consistency(robot: Robot) -> None:
    """Forward dynamics undoes inverse dynamics, and M is symmetric positive definite, over
    100 random states, one at a time."""
    rng = np.random.default_rng(1)
    roundtrip, smallest = 0.0, np.inf
    for q, qd, qdd in rng.uniform(-1.0, 1.0, (100, 3, robot.nv)):
        tau = robot.inverse_dynamics(q, qd, qdd)
        roundtrip = max(roundtrip, np.abs(robot.forward_dynamics(q, qd, tau) - qdd).max())
        smallest = min(smallest, np.linalg.eigvalsh(robot.mass_matrix(q))[0])
    print(f"\nchecks over 100 random states: max |ABA(RNEA(q̈)) - q̈| = {roundtrip:.1e}, "
          f"smallest eigenvalue of M = {smallest:.3e}")


def print_timing(robot: Robot, frame: str) -> None:
    """Median time of one call from Python for the main functions."""
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, robot.nv))
    calls: dict[str, Callable[[], object]] = {
        "inverse_dynamics": lambda: robot.inverse_dynamics(q, qd, qdd),
        "mass_matrix": lambda: robot.mass_matrix(q),
        "forward_dynamics": lambda: robot.forward_dynamics(q, qd, qdd),
        "operational_space_inertia": lambda: robot.operational_space_inertia(q, frame),
    }
    figures = ", ".join(
        f"{name} {median_call_time(call) * 1e6:.1f} µs" for name, call in calls.items()
    )
    print(f"timing, one call from Python: {figures}")


def median_call_time(call: Callable[[], object], calls: int = 2000, repeats: int = 5) -> float:
    """Median over `repeats` of the mean time of `calls` calls, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - start) / calls)
    return float(np.median(times))


def add_excite_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`robodyn excite --urdf FILE --duration S`."""
    from robodyn_ros.identification.excitation import HARMONICS, MARGIN, MAX_ITERATIONS
    from robodyn_ros.identification.excitation_report import OUTPUT_RATE

    excite = commands.add_parser(
        "excite", help="an excitation trajectory for identification: a Fourier series of least "
        "condition number of the base regressor within the joint limits, played in the "
        "preview; its coefficients, a JointTrajectory message and a preview scenario"
    )
    excite.add_argument("--urdf", help=URDF_HELP)
    excite.add_argument("--duration", type=float, required=True,
                        help="s: one period; the trajectory starts and ends at rest there")
    excite.add_argument("--harmonics", type=int, default=HARMONICS,
                        help=f"harmonics of the Fourier series, ≥ 2 (default {HARMONICS})")
    waypoints = excite.add_mutually_exclusive_group()
    waypoints.add_argument("--samples", type=int,
                           help="waypoints of the written trajectory after its start")
    waypoints.add_argument("--rate", type=float, default=OUTPUT_RATE,
                           help=f"waypoints per second of the written trajectory (default "
                           f"{OUTPUT_RATE:g})")
    excite.add_argument("--margin", type=float, default=MARGIN,
                        help="share of each limit to use, in (0, 1]: of the position range about "
                        f"its middle, of the velocity and effort limits (default {MARGIN:g})")
    excite.add_argument("--seed", type=int, default=0, help="of the random start")
    excite.add_argument("--max-iterations", type=int, default=MAX_ITERATIONS,
                        help=f"of the optimiser (default {MAX_ITERATIONS})")
    excite.add_argument("--control-period", type=float,
                        help="s between the commands of the controller that plays it (computed "
                        "torque, held in between), a whole number of ms; the preview checks it "
                        "so (default: sim_node's publish_period in config/sim.yaml, "
                        "the simulation's control period)")
    excite.add_argument("--output", default="excitation", help="output folder")
    add_gravity_option(excite)


def run_excite(args: argparse.Namespace) -> int:
    """`robodyn excite`: optimise, play in the preview, write the files and print a summary;
    1 when the preview finds the trajectory outside the limits (the JointTrajectory message is
    then not written)."""
    from robodyn_ros.identification.excitation import ExcitationSettings, optimise_excitation
    from robodyn_ros.identification.excitation_report import (
        EXCITATION_FILE,
        PARAMS_FILE,
        SCENARIO_FILE,
        TRAJECTORY_FILE,
        Playback,
        excitation_summary,
        verify_in_preview,
        write_excitation,
    )

    settings = ExcitationSettings(args.duration, args.harmonics, args.margin, args.seed,
                                  max_iterations=args.max_iterations)
    if args.samples is None and not (np.isfinite(args.rate) and args.rate > 0.0):
        raise ValueError(f"--rate must be a number of waypoints per second > 0; got {args.rate}")
    samples = args.samples if args.samples is not None else max(1, round(args.rate
                                                                         * args.duration))
    if samples < 1:
        raise ValueError(f"--samples must be at least 1; got {samples}")
    playback = Playback(simulation_control_period() if args.control_period is None
                        else args.control_period)
    folder = Path(args.output)
    refuse_earlier_output(folder, EXCITATION_FILE, "an excitation")
    path = args.urdf or bundled_urdf("panda")
    robot = load_robot(path, args.xacro_args, args.gravity)
    excitation = optimise_excitation(robot, settings)
    verdict = verify_in_preview(robot, excitation.trajectory, samples, playback)
    files = write_excitation(folder, robot, excitation, verdict, samples)
    print(excitation_summary(robot, excitation, verdict), end="")
    print(f"written to {folder}: {', '.join(file.name for file in files)}")
    same_robot = "".join(f" {name}:={value}" for name, value in args.xacro_args.items())
    if args.gravity is not None:
        same_robot += " --gravity " + ",".join(f"{value:g}" for value in args.gravity)
    print(f"preview it: robodyn preview {path} {folder / SCENARIO_FILE}{same_robot}")
    if not verdict.clean:
        print(f"robodyn: the preview finds the trajectory outside the limits (or off its "
              f"track); {TRAJECTORY_FILE} and {PARAMS_FILE} are not written", file=sys.stderr)
        return 1
    urdf_option = f" --urdf {path}" if args.urdf else ""
    print(f"play and record it: robodyn sim --trajectory {folder / TRAJECTORY_FILE} "
          f"--record BAG{urdf_option}{same_robot}")
    return 0


def simulation_control_period() -> float:
    """sim_node's publish_period in the package's config/sim.yaml: the period at which the
    simulation, in lockstep, runs its controller.

    Raises:
        ValueError: the file does not give it.
    """
    import yaml

    path = share_directory() / "config" / "sim.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    try:
        return float(document["/**/sim_node"]["ros__parameters"]["publish_period"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{path}: no sim_node publish_period") from None


if __name__ == "__main__":
    sys.exit(main())
