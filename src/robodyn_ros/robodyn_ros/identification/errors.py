"""What identification raises when the data cannot give what was asked."""

from __future__ import annotations


class IdentificationError(ValueError):
    """Data that cannot identify the parameters asked for: too few samples, no torques, a
    motion that does not excite them; the message says which and what to record instead."""
