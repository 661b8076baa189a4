"""URDF files of the ``example-robot-data`` wheel, found on disk.

The wheel has no importable module: it installs its files under
``<site-packages>/cmeel.prefix/share/example-robot-data/robots/``.
"""

from __future__ import annotations

import site
import sys
import sysconfig
from pathlib import Path

ROBOTS_DIR = Path("cmeel.prefix", "share", "example-robot-data", "robots")

EXAMPLE_ROBOTS: dict[str, Path] = {
    "panda": Path("panda_description", "urdf", "panda.urdf"),
    "ur5": Path("ur_description", "urdf", "ur5_robot.urdf"),
    "xarm7": Path("xarm_description", "urdf", "xarm7.urdf"),
    "kinova": Path("kinova_description", "robots", "kinova.urdf"),
    "talos": Path("talos_data", "robots", "talos_full_v2.urdf"),
    "romeo": Path("romeo_description", "urdf", "romeo.urdf"),
    "tiago": Path("tiago_description", "robots", "tiago.urdf"),
    # floating-base robots
    "talos_reduced": Path("talos_data", "robots", "talos_reduced.urdf"),
    "solo12": Path("solo_description", "robots", "solo12.urdf"),
    "anymal": Path("anymal_b_simple_description", "robots", "anymal.urdf"),
    "icub": Path("icub_description", "robots", "icub.urdf"),
}
"""Short robot name → URDF path relative to the wheel's ``robots`` directory."""

PANDA_FINGERS = ("panda_finger_joint1", "panda_finger_joint2")
"""The Panda gripper joints, usually locked to study the arm alone."""


def example_robot_urdf(name: str) -> Path:
    """Path of the URDF of an ``example-robot-data`` robot, one of ``EXAMPLE_ROBOTS``.

    Raises:
        FileNotFoundError: the name is unknown, or no package directory holds the file; the
            message names the file and says that ``pip install example-robot-data`` provides it.
    """
    if name not in EXAMPLE_ROBOTS:
        raise FileNotFoundError(
            f"no example robot named {name!r}; known: {', '.join(EXAMPLE_ROBOTS)} "
            "(URDFs that `pip install example-robot-data` provides)"
        )
    relative = ROBOTS_DIR / EXAMPLE_ROBOTS[name]
    directories = _package_directories()
    for directory in directories:
        candidate = directory / relative
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"{relative} (robot {name!r}) is in none of the package directories "
        f"{', '.join(map(str, directories))}; "
        "`pip install example-robot-data` provides it"
    )


def _package_directories() -> list[Path]:
    """Every directory packages may be installed in, most likely first, without repeats."""
    candidates = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    candidates += [*site.getsitepackages(), site.getusersitepackages(), *sys.path]
    directories: list[Path] = []
    for candidate in candidates:
        directory = Path(candidate or ".").resolve()
        if directory not in directories:
            directories.append(directory)
    return directories
