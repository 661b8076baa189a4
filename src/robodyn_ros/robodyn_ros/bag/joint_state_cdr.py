"""sensor_msgs/JointState messages decoded all at once with numpy, when a run's messages share
one byte layout: the same frame_id, names and field lengths, only the stamps and the numbers
differing (what a driver records), which is an order of magnitude faster than deserialising
each message in Python (benchmarks/bag_analysis.py). Anything else is left to rosbags
(decode_uniform returns None)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

LITTLE_ENDIAN_CDR = b"\x00\x01"  # the encapsulation header ROS 2 writes on x86 and ARM
HEADER = 4  # bytes of the encapsulation header; CDR alignment counts from after it
STAMP = slice(HEADER, HEADER + 8)  # int32 sec, uint32 nanosec


@dataclass(frozen=True)
class UniformJointStates:
    """Stamps (B,) int64 ns; position, velocity, effort (B, k) in the messages' name order,
    velocity and effort None when the messages have none."""

    names: tuple[str, ...]
    stamps: np.ndarray
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None


def decode_uniform(raws: list[bytes], names: tuple[str, ...]) -> UniformJointStates | None:
    """The messages decoded together, or None when they do not share the first one's layout.
    `names`: the first message's joint names (deserialised by the caller)."""
    arrays = _float_arrays(raws[0])
    size = len(raws[0])
    if arrays is None or any(len(raw) != size for raw in raws):
        return None
    table = np.frombuffer(b"".join(raws), dtype=np.uint8).reshape(len(raws), size)
    fixed = np.ones(size, dtype=bool)
    fixed[STAMP] = False
    for offset, count in arrays:
        fixed[offset : offset + 8 * count] = False
    if not (table[:, fixed] == table[0, fixed]).all():
        return None
    seconds = _column(table, HEADER, 4, "<i4").astype(np.int64)
    stamps = seconds * 1_000_000_000 + _column(table, HEADER + 4, 4, "<u4")
    position, velocity, effort = (
        _column(table, offset, 8 * count, "<f8") if count else None for offset, count in arrays
    )
    if position is None:
        return None
    return UniformJointStates(names, stamps, position, velocity, effort)


def _column(table: np.ndarray, offset: int, width: int, dtype: str) -> np.ndarray:
    """Bytes [offset, offset + width) of every row read as `dtype`: (B,) or (B, k)."""
    values = np.ascontiguousarray(table[:, offset : offset + width]).view(dtype)
    return values[:, 0] if values.shape[1] == 1 else values


def _float_arrays(raw: bytes) -> list[tuple[int, int]] | None:
    """(byte offset in the message, count) of position, velocity and effort, or None when the
    bytes are not a little-endian JointState that ends after effort."""
    if raw[:2] != LITTLE_ENDIAN_CDR:
        return None
    data = memoryview(raw)[HEADER:]
    try:
        cursor = _skip_string(data, 8)  # past the stamp and header.frame_id
        start = _aligned(cursor, 4)
        cursor = start + 4
        for _ in range(_u32(data, start)):  # the names
            cursor = _skip_string(data, cursor)
        arrays = []
        for _ in range(3):
            start = _aligned(cursor, 4)
            count = _u32(data, start)
            offset = _aligned(start + 4, 8) if count else start + 4
            arrays.append((HEADER + offset, count))
            cursor = offset + 8 * count
    except struct.error:
        return None
    return arrays if cursor == len(data) else None


def _skip_string(data: memoryview, position: int) -> int:
    start = _aligned(position, 4)
    return start + 4 + _u32(data, start)


def _aligned(position: int, size: int) -> int:
    return -(-position // size) * size


def _u32(data: memoryview, position: int) -> int:
    value: int = struct.unpack_from("<I", data, position)[0]
    return value
