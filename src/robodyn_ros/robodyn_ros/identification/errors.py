"""What identification raises when it cannot give what was asked."""

from __future__ import annotations

from robodyn_ros.errors import RobodynError


class IdentificationError(RobodynError, ValueError):
    """Data that cannot identify the parameters asked for (too few samples, no torques, a
    motion that does not excite them), or an excitation that cannot be planned (settings out
    of range, limits that leave no room to move); the message says which and what to do."""
