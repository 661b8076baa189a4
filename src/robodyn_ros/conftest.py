"""Which robodyn_ros the tests import: the installed one, where there is one.

`colcon test` runs `python -m pytest` in this folder, which puts the folder first on sys.path:
its sources, whose C extension is built only in the build folder, would shadow the package
colcon built and installed (``No module named 'robodyn_ros._state_call'``). When robodyn_ros is
importable from elsewhere on sys.path, the folder is taken off it. An editable install
(`make test`) imports the sources either way.
"""

import sys
from importlib.machinery import PathFinder
from pathlib import Path

SOURCES = Path(__file__).resolve().parent


def _is_sources(entry: str) -> bool:
    """Whether a sys.path entry is this folder ("" is the current folder)."""
    return Path(entry or ".").resolve() == SOURCES


_elsewhere = [entry for entry in sys.path if not _is_sources(entry)]
if len(_elsewhere) < len(sys.path) and PathFinder.find_spec("robodyn_ros", _elsewhere):
    sys.path[:] = _elsewhere
