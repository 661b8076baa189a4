"""Message types for rosbags: the newest ROS 2 store plus robodyn_interfaces, registered from
the package's .msg files so that reading and writing bags needs no rclpy."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from robodyn_ros.resources import share_directory

INTERFACES = "robodyn_interfaces"
INTERFACE_MESSAGES = ("JointSpaceDynamics", "OperationalSpaceDynamics")


@functools.cache
def typestore() -> Typestore:
    """The newest ROS 2 typestore rosbags knows, with the robodyn_interfaces messages."""
    store = get_typestore(newest_ros2_store())
    folder = interface_msg_directory()
    for name in INTERFACE_MESSAGES:
        text = (folder / f"{name}.msg").read_text()
        store.register(get_types_from_msg(text, f"{INTERFACES}/msg/{name}"))
    return store


def newest_ros2_store() -> Stores:
    """The last ROS 2 distribution in rosbags' list of stores."""
    return [store for store in Stores if store.name.startswith("ROS2_")][-1]


def interface_msg_directory() -> Path:
    """The msg/ folder of robodyn_interfaces: next to this package's share folder (a ROS or pip
    install: <prefix>/share/robodyn_interfaces), in this interpreter's prefix, or in the source
    tree beside this package."""
    candidates = (
        share_directory().parent / INTERFACES / "msg",
        Path(sys.prefix, "share", INTERFACES, "msg"),
    )
    for folder in candidates:
        if all((folder / f"{name}.msg").is_file() for name in INTERFACE_MESSAGES):
            return folder
    searched = ", ".join(str(folder) for folder in candidates)
    raise FileNotFoundError(
        f"the {INTERFACES} message definitions ({', '.join(INTERFACE_MESSAGES)}.msg) are in "
        f"none of: {searched}; install {INTERFACES} or run from the source tree"
    )
