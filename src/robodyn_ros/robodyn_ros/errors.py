"""The roots of what robodyn_ros raises and warns, and the errors the dynamics raise where an
answer does not exist or cannot be trusted.

Every exception the package raises is a ``RobodynError``, so that ``except RobodynError``
catches anything the library refused, and each is also the standard class it extends (a
``ModelError`` is a ``ValueError``, a ``SingularMassMatrixError`` a
``numpy.linalg.LinAlgError``). Every warning it gives is a ``RobodynWarning`` (a
``UserWarning``).

A description that cannot be right is a ``robodyn_ros.ModelError`` (at load); these two are
about answers at a state:

- ``SingularMassMatrixError``: M(q) is singular, so q̈, M⁻¹ and everything built on them (Λ
  from M⁻¹, the operational-space quantities) do not exist. It names the joints whose
  articulated inertia vanished: most often joints that move no mass (a tip link without
  ``<inertial>``, a massless hand) or a chain of joints that turn about one axis with nothing
  between them. It is a ``numpy.linalg.LinAlgError``.
- ``NonFiniteResultError``: finite inputs gave a result with NaN or inf in it (an overflow:
  magnitudes far outside any robot). It names the function and the quantity. It is a
  ``FloatingPointError``.

Non-finite inputs are not an error: NaN in gives NaN out, as in numpy.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Self

import numpy as np


class RobodynError(Exception):
    """The root of every error robodyn_ros raises: the message names the thing refused (file,
    link, joint, frame, topic, field) and what was wrong with it."""


class RobodynWarning(UserWarning):
    """The root of every warning robodyn_ros gives: something it works around, and says how."""


class SingularMassMatrixError(RobodynError, np.linalg.LinAlgError):
    """M(q) is singular: the answer asked for does not exist at this state.

    Attributes:
        function: the Robot function that was called.
        joints: the names of the joints whose articulated inertia vanished.
    """

    def __init__(self, function: str, joints: Sequence[str], detail: str = "") -> None:
        self.function, self.joints, self.detail = function, tuple(joints), detail
        named = ", ".join(f"'{joint}'" for joint in self.joints) or "(not identified)"
        super().__init__(
            f"{function}: the mass matrix is singular{f' {detail}' if detail else ''}: "
            f"joint(s) {named} move no mass (their articulated inertia is zero); give the "
            "bodies they move an <inertial>, add rotor inertia (armature=), or lock them "
            "(locked_joints=)"
        )

    def __reduce__(self) -> tuple[type[Self], tuple[object, ...]]:
        """Pickled by its fields, to reach the caller from a process or Dask worker."""
        return (type(self), (self.function, self.joints, self.detail))


class NonFiniteResultError(RobodynError, FloatingPointError):
    """Finite inputs gave a non-finite result (an overflow).

    Attributes:
        function: the Robot function that was called.
        quantity: what came out non-finite (e.g. "q̈", "M⁻¹").
    """

    def __init__(self, function: str, quantity: str, detail: str = "") -> None:
        self.function, self.quantity, self.detail = function, quantity, detail
        where = f" {detail}" if detail else ""
        super().__init__(
            f"{function}: {quantity} is not finite for finite inputs{where}: the magnitudes of "
            "the state or the model overflow double precision"
        )

    def __reduce__(self) -> tuple[type[Self], tuple[object, ...]]:
        """Pickled by its fields, as SingularMassMatrixError."""
        return (type(self), (self.function, self.quantity, self.detail))


NO_ANSWER_ERRORS = (SingularMassMatrixError, NonFiniteResultError)
"""The errors of a state at which an answer does not exist, as opposed to a bad call."""

def check_keywords(owner: str, given: Collection[str], known: Collection[str]) -> None:
    """The TypeError Python raises for a function's unknown keyword, for the keywords a
    function takes as ``**options`` typed by a TypedDict (which Python does not check).

    Raises:
        TypeError: a keyword of `given` that is not `known`, naming `owner`, the keywords and
            the known ones.
    """
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TypeError(f"{owner}: unknown option(s) {', '.join(map(repr, unknown))}; the "
                        f"options are {', '.join(sorted(known))}")


__all__ = [
    "NO_ANSWER_ERRORS",
    "NonFiniteResultError",
    "RobodynError",
    "RobodynWarning",
    "SingularMassMatrixError",
    "check_keywords",
]
