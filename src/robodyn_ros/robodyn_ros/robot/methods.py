"""The methods a caller picks for a Robot's joint-space quantities, as one named record."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JointSpaceMethods:
    """How M and q̈ are computed: a method of Robot.MASS_MATRIX_METHODS for
    Robot.mass_matrix, and one of Robot.FORWARD_DYNAMICS_METHODS for
    Robot.forward_dynamics."""

    mass_matrix: str = "crba"
    forward_dynamics: str = "aba"


DEFAULT_JOINT_SPACE_METHODS = JointSpaceMethods()
