"""Files shipped with the package: the bundled robot descriptions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = "robodyn_ros"


def share_directory() -> Path:
    """The package's share folder: the ament install when ROS knows the package, else the
    source tree (an editable or source checkout), else ``<prefix>/share/robodyn_ros``."""
    ament_share = _ament_share_directory()
    if ament_share is not None:
        return ament_share
    source_tree = Path(__file__).resolve().parent.parent
    if (source_tree / "package.xml").is_file():
        return source_tree
    return Path(sys.prefix, "share", PACKAGE)


def bundled_urdf(name: str = "panda") -> Path:
    """Path of a URDF shipped in the package's ``urdf/`` folder."""
    path = share_directory() / "urdf" / f"{name}.urdf"
    if not path.is_file():
        available = sorted(p.stem for p in path.parent.glob("*.urdf"))
        raise FileNotFoundError(f"no bundled URDF '{name}' at {path}; bundled: {available}")
    return path


def _ament_share_directory() -> Path | None:
    """The share folder from the ament index, when a sourced ROS install lists the package."""
    if not os.environ.get("AMENT_PREFIX_PATH"):  # no ROS environment sourced
        return None
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory(PACKAGE))
    except LookupError:  # ROS is there, this package is not installed into it
        return None
