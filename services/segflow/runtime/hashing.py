"""Stable key hashing for partitioning.

Python's ``hash()`` of ``str`` and ``bytes`` is randomized per process, so two workers would
disagree on where a key lives. These functions give the same answer in every process.
"""
from __future__ import annotations

import pickle
from typing import Any
from zlib import crc32

_MASK = 0xFFFFFFFF
_NONE = 0x9E3779B9
_NAN = 0x7FF80000


def stable_hash(key: Any) -> int:
    """A 32-bit hash of ``key`` that is the same in every process and Python run."""
    kind = type(key)   # exact types, looked up once per record; mypy cannot narrow through it (key: Any)
    if kind is str:
        return crc32(key.encode("utf-8", "surrogatepass"))
    if kind is int:
        return key & _MASK
    if kind is bytes:
        return crc32(key)
    if kind is tuple:
        h = 0x345678
        for part in key:
            h = ((h * 1000003) ^ stable_hash(part)) & _MASK
        return h
    if kind is bool:
        return int(key)
    if kind is float:
        # Equal keys must hash alike (1.0 == 1, -2.0 == -2); NaN's hash is its address.
        if key.is_integer():
            return int(key) & _MASK
        return _NAN if key != key else hash(key) & _MASK
    if key is None:
        return _NONE           # hash(None) is its address before Python 3.12
    if kind is frozenset:      # its pickle follows the per-process order of str hashes
        return (len(key) + sum(stable_hash(part) * 0x9E3779B1 for part in key)) & _MASK
    return crc32(pickle.dumps(key, protocol=4))


def partition_by_key(items: list, n: int) -> list[list]:
    """Split keyed records ``(key, value)`` into ``n`` lists by stable hash of the key."""
    parts: list[list] = [[] for _ in range(n)]
    appends = [p.append for p in parts]
    sh = stable_hash
    for item in items:
        key = item[0]
        kind = type(key)
        if kind is int:
            appends[(key & _MASK) % n](item)
        elif kind is str:
            appends[crc32(key.encode("utf-8", "surrogatepass")) % n](item)
        else:
            appends[sh(key) % n](item)
    return parts


def partition_timestamped(items: list, timestamps: list, n: int) -> list[tuple[list, list]]:
    """Like :func:`partition_by_key` but keeps each record's timestamp beside it."""
    parts: list[tuple[list, list]] = [([], []) for _ in range(n)]
    sh = stable_hash
    for item, ts in zip(items, timestamps):
        key = item[0]
        kind = type(key)
        if kind is int:
            items_out, ts_out = parts[(key & _MASK) % n]
        elif kind is str:
            items_out, ts_out = parts[crc32(key.encode("utf-8", "surrogatepass")) % n]
        else:
            items_out, ts_out = parts[sh(key) % n]
        items_out.append(item)
        ts_out.append(ts)
    return parts
