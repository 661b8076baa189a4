"""What a bag that cannot be analysed, or can be only with care, raises or warns."""

from __future__ import annotations

from robodyn_ros.errors import RobodynError, RobodynWarning


class BagError(RobodynError, ValueError):
    """A bag that cannot give a correct analysis; the message names the bag, the topic or
    field and what is wrong with it."""


class BagWarning(RobodynWarning):
    """Something in a bag the analysis works around (and says how): messages out of order,
    irregular sampling, joints not in the URDF, missing fields in some messages."""
