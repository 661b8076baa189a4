"""Workspaces carved from one allocation.

A single-state C entry allocates its workspace on every call, and each allocation has a price
of its own beside the work: carve gives a workspace's float arrays as views of one buffer.
"""

from robodyn_ros.dynamics.jit import kernel_helper


@kernel_helper
def carve(buffer, start, shape):
    """The C-contiguous array of `shape` at buffer[start:], and where the next one starts."""
    size = 1
    for extent in shape:
        size *= extent
    return buffer[start : start + size].reshape(shape), start + size
