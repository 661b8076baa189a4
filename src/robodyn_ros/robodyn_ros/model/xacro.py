"""Xacro → URDF text: expand a ``.xacro`` robot description with the ``xacro`` package.

``$(find pkg)`` resolves to the package's share folder through the ament index (the packages
of the install prefixes on ``AMENT_PREFIX_PATH``), as the ``xacro`` command does in ROS 2;
``ament_index_python`` is imported only when a file asks for a package, so the model layer
needs no ROS to expand a xacro that does not. Every failure (a missing argument or include, a
bad macro or expression, a package that cannot be found, malformed XML) is a ``ModelError``
whose message starts with the xacro file and says where in it expansion stopped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from xml.parsers.expat import ExpatError

import xacro
from xacro import substitution_args

from robodyn_ros.model.model import ModelError

__all__ = ["description_file", "expand_xacro", "read_robot_description", "xacro_argument"]

_XACRO_SUFFIX = ".xacro"
"""The file name ending that marks a robot description as xacro (``arm.urdf.xacro``)."""

_PACKAGE_URI = "package://"  # package://<package>/<path in its share folder>

_ARGUMENT_SEPARATOR = ":="  # name:=value, as the xacro command and ros2 launch take them
# xacro keeps the state of an expansion (the file and macro stacks, the arguments, the
# resolver of $(find)) in module globals: one expansion at a time.
_XACRO_LOCK = threading.Lock()


def xacro_argument(text: str) -> tuple[str, str]:
    """One xacro argument written ``name:=value`` (the value may be empty).

    Args:
        text: the item, e.g. ``prefix:=left_``.

    Returns:
        (name, value).

    Raises:
        ValueError: the item has no ``:=`` or no name before it.
    """
    name, separator, value = text.partition(_ARGUMENT_SEPARATOR)
    if not separator or not name:
        raise ValueError(f"a xacro argument is NAME:=VALUE; got {text!r}")
    return name, value


def read_robot_description(
    path: str | os.PathLike[str], mappings: Mapping[str, str] | None = None
) -> str:
    """The URDF text of a robot description file: a URDF file as it is, a xacro file (its
    name ends in ``.xacro``) expanded with `mappings`.

    Args:
        path: the URDF or xacro file.
        mappings: xacro argument name → value; only for a xacro file.

    Returns:
        The URDF document.

    Raises:
        ModelError: the xacro file does not expand (see expand_xacro), or `mappings` are given
            for a file that is not xacro.
        OSError: the URDF file cannot be read.
    """
    if Path(path).suffix == _XACRO_SUFFIX:
        return expand_xacro(path, mappings)
    if mappings:
        raise ModelError(
            f"{os.fspath(path)}: xacro arguments ({', '.join(mappings)}) are given, but the "
            f"file is a URDF, not xacro (its name does not end in {_XACRO_SUFFIX})"
        )
    return Path(path).read_text(encoding="utf-8")


def expand_xacro(path: str | os.PathLike[str], mappings: Mapping[str, str] | None = None) -> str:
    """Expand a xacro file into a URDF document, as ``xacro path name:=value ...`` does.

    Args:
        path: the xacro file; includes with a relative name are found beside the file that
            includes them.
        mappings: xacro argument name → value, for the file's ``<xacro:arg>`` and
            ``$(arg name)``.

    Returns:
        The URDF document.

    Raises:
        ModelError: the expansion failed; the message starts with `path`, says what was
            wrong (an argument without a value, a file that cannot be read, a package that
            ``$(find)`` cannot find and what to do about it, an undefined macro or property,
            malformed XML) and, when it happened there, the macro or included file.
    """
    source = os.fspath(path)
    with _XACRO_LOCK, _find_through_ament_index():
        try:
            # a copy: xacro adds the defaults of <xacro:arg> to the mapping it is given
            document = xacro.process_file(source, mappings=dict(mappings or {}))
        except Exception as error:  # xacro raises XacroException, expat's ExpatError, ...
            raise ModelError(f"{source}: {_reason(error)}{_location(source)}") from None
    urdf: str = document.toxml()
    return urdf


@contextmanager
def _find_through_ament_index() -> Iterator[None]:
    """xacro's resolver of ``$(find pkg)`` replaced by _package_share_directory while the
    block runs, so that a package it cannot find is reported by name."""
    resolver = substitution_args._eval_find
    substitution_args._eval_find = _package_share_directory
    try:
        yield
    finally:
        substitution_args._eval_find = resolver


def description_file(location: str) -> Path:
    """The path of a robot description file given as a path or as a ``package://pkg/path``
    URI (pkg's share folder through the ament index, as robot_state_publisher resolves one).

    Raises:
        ModelError: a package URI without a package or a path, or a package the ament index
            cannot find (named, with what to do).
    """
    if not location.startswith(_PACKAGE_URI):
        return Path(location)
    package, _, relative = location.removeprefix(_PACKAGE_URI).partition("/")
    if not package or not relative:
        raise ModelError(f"{location}: a package URI is package://<package>/<path in its share "
                         "folder>")
    return Path(_package_share_directory(package, location)) / relative


def _package_share_directory(package: str, find: str | None = None) -> str:
    """The share folder of `package` from the ament index, for ``$(find package)`` (or
    `find`, what asked for it).

    Raises:
        ModelError: there is no ament index (ament_index_python is not installed or
            AMENT_PREFIX_PATH is not set), or the package is not in it.
    """
    find = find or f"$(find {package})"
    prefixes = os.environ.get("AMENT_PREFIX_PATH")
    if not prefixes:
        raise ModelError(
            f"{find}: AMENT_PREFIX_PATH is not set, so there is no ament index to find "
            f"package '{package}' in: source the setup file of the ROS 2 workspace that "
            "installs it, or set AMENT_PREFIX_PATH to its install prefix"
        )
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:
        raise ModelError(
            f"{find}: ament_index_python is not installed, so package '{package}' cannot be "
            "looked up: run in a ROS 2 environment, or write the file's path instead"
        ) from None
    try:
        return get_package_share_directory(package)
    except LookupError:  # PackageNotFoundError
        raise ModelError(
            f"{find}: package '{package}' is not in the ament index of AMENT_PREFIX_PATH="
            f"{prefixes}: build and source the workspace that installs it, or add its install "
            "prefix to AMENT_PREFIX_PATH"
        ) from None
    except ValueError as error:  # not a valid package name
        raise ModelError(f"{find}: {error}") from None


def _reason(error: Exception) -> str:
    """What went wrong, from the innermost cause xacro wrapped (its message repeats it)."""
    cause = error
    while isinstance(cause, xacro.XacroException) and cause.exc is not None:
        cause = cause.exc
    if isinstance(cause, substitution_args.ArgException):
        return f"xacro argument '{cause}' has no value: give it as {cause}:=VALUE"
    if isinstance(cause, ExpatError):
        return f"malformed XML: {cause}"
    if isinstance(cause, OSError) and cause.filename:
        return f"cannot read {cause.filename}: {cause.strerror}"
    if isinstance(cause, (ModelError, substitution_args.SubstitutionException)):
        return str(cause)
    return " ".join(str(error).split())  # xacro's messages span lines


def _location(source: str) -> str:
    """Where xacro was when it failed, from the stacks it keeps for its own error report: the
    macro being expanded (and the file defining it), and the included file being read, when
    not `source` itself."""
    places = [
        f"macro '{macro.body.getAttribute('name')}' of {macro.history[-1][-1]}"
        for macro in xacro.macrostack[-1:]
    ]
    places += [f"included file {name}" for name in xacro.filestack[-1:] if name != source]
    return f" (in {', '.join(places)})" if places else ""
