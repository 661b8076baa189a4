"""``robodyn warmup``: fill the kernel cache for the package's nodes and commands on a robot.

On a new install (pip, colcon, a fresh clone) each process compiles the kernels it calls the
first time, and caches them on disk (dynamics.jit). ``robodyn warmup`` makes those calls ahead,
on every core (compile_ahead): every Robot function at rest for one state and for a batch,
a simulation step, each built-in controller's first efforts, a one-step preview, one in a
world, and dynamics_node's warm-up, with the default methods and settings the nodes start
with. The nodes and commands then start warm.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from robodyn_ros.control.plugin import BUILTIN_CONTROLLERS, ControllerState, load_controller
from robodyn_ros.robot import Robot
from robodyn_ros.sim.preview import PreviewSettings, warm_up_world
from robodyn_ros.sim.preview import warm_up as warm_up_preview
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.startup.compile_ahead import CompileAhead, WarmUpStep, robot_calls, robot_load_step

ONE_STATE = ("inverse_dynamics", "bias_forces", "gravity_torques", "coriolis_matrix",
             "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "frame_pose", "jacobian",
             "kinetic_energy", "potential_energy", "operational_space_inertia",
             "operational_space")
"""Robot functions warmed for one state (each a C entry or a kernel of its own)."""

BATCH = ("inverse_dynamics", "mass_matrix", "forward_dynamics")
"""Robot functions warmed for a batch of states (their batch kernels)."""

INTEGRATOR, TIME_STEP = "rk4", 1e-3  # sim_node's defaults


def simulation_step(robot: Robot, integrator: str, dt: float) -> None:
    """One step of the simulated robot from its initial state, under zero effort."""
    SimulatedRobot(robot, integrator, dt).step(np.zeros(robot.nv))


def first_efforts(robot: Robot, controller: str, frame: str) -> None:
    """A built-in controller's efforts at rest (Robot.default_positions), with its required
    parameters (`frame` for the controlled frame) and the feed-forward terms where it has
    them."""
    required: dict[str, dict[str, object]] = {
        "operational_space": {"frame": frame},
        "joint_impedance": {"stiffness": 1.0, "damping": 1.0, "feedforward": True},
        "computed_torque": {"kp": 1.0, "kd": 2.0},
    }
    law = load_controller(controller)()
    law.configure(robot, required.get(controller, {}))
    law.update(ControllerState(t=0.0, q=robot.default_positions(), qd=np.zeros(robot.nv)))


def package_steps(robot: Robot, frame: str) -> list[WarmUpStep]:
    """Every step ``robodyn warmup`` makes with `robot`, `frame` its end effector."""
    calls = [(function, 0) for function in ONE_STATE] + [(function, 2) for function in BATCH]
    steps = robot_calls(robot, calls, frame)
    steps.append(WarmUpStep(f"simulation step ({INTEGRATOR})", simulation_step,
                            (robot, INTEGRATOR, TIME_STEP)))
    steps += [WarmUpStep(f"controller {name}", first_efforts, (robot, name, frame))
              for name in BUILTIN_CONTROLLERS
              if load_controller(name).TAKES_FLOATING_BASE == robot.model.floating_base]
    steps.append(WarmUpStep("preview", warm_up_preview, (robot, PreviewSettings())))
    steps.append(WarmUpStep("preview in a world", warm_up_world, (robot, PreviewSettings())))
    from robodyn_ros.ros.dynamics_node import default_warm_up_steps  # ROS 2, its messages

    return steps + default_warm_up_steps(robot, frame)


def warm_up(urdf_text: str, source: str, frame: str | None, helpers: int | None,
            log: Callable[[str], object]) -> None:
    """Make every step of package_steps with the robot of `urdf_text`, here and in helper
    processes (default: one per spare core).

    Raises:
        ModelError: the URDF does not load.
        Exception: what a step raises here (a function the robot cannot compute at rest).
    """
    start = time.monotonic()
    with CompileAhead(log, helpers) as compile_ahead:
        compile_ahead.ahead([robot_load_step(urdf_text)])
        robot = Robot.from_urdf_string(urdf_text, source=source)
        steps = package_steps(robot, frame or robot.frame_names[-1])
        compile_ahead.ahead(steps)
        for step in steps:
            step.run()
        compile_ahead.wait()  # every step marked, so that no start compiles ahead again
    log(f"warm: {len(steps)} steps in {time.monotonic() - start:.1f} s on "
        f"{1 + compile_ahead.most_helpers} processes")
