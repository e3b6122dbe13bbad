"""How a match record's JSON is stored in ``match_records.data``: compressed, and named by
its ``encoding`` column, so that every encoding ever written stays readable.

* ``zstd+json`` (written since 2026-12): Zstandard at level :data:`DEFAULT_ZSTD_LEVEL`,
  with a window and hash tables no larger than the record needs (:func:`_params`).
* ``zlib+json``: what earlier releases wrote (zlib); read, never written.

Why these settings: a worker compresses each record right after its match, when the
match has pushed the compressor's tables out of the CPU's caches, so what counts is the
cold cost, not a loop's. A house-bot Seas of Strife record (~11 KB of JSON) right after
its match: zlib level 1 ~87 us (2.3 KB); Zstandard level 1 with its own tables ~79 us;
with a 16 KB window and 16 KB tables ~40 us (1.95 KB), decompressed in ~7 us (zlib ~23).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from typing import Any

import orjson
import zstandard

from saloon.worker.errors import StoreError

#: The encoding new records are written in.
RECORD_ENCODING = "zstd+json"
#: Zstandard's level for stored records: 1, its fastest ordinary level (see the docstring).
DEFAULT_ZSTD_LEVEL = 1

#: Records up to 2**k bytes get a window of 2**k (k in this range; larger ones
#: Zstandard's own parameters for the level), and hash and chain tables of 2**12 entries.
_SMALL_WINDOW_LOGS = range(12, 18)
_TABLE_LOG = 12

_local = threading.local()  # compressors per thread: a compression context is not shared


def _params(level: int, window_log: int) -> zstandard.ZstdCompressionParameters:
    return zstandard.ZstdCompressionParameters.from_level(
        level, window_log=window_log, hash_log=_TABLE_LOG, chain_log=_TABLE_LOG
    )


def compress_record(raw: bytes, level: int = DEFAULT_ZSTD_LEVEL) -> bytes:
    """``raw`` (a record's JSON) as stored under :data:`RECORD_ENCODING`."""
    window_log = max(len(raw) - 1, 1).bit_length()
    small = window_log <= _SMALL_WINDOW_LOGS[-1]
    window_log = max(window_log, _SMALL_WINDOW_LOGS[0]) if small else 0
    compressors: dict[tuple[int, int], zstandard.ZstdCompressor] = _local.__dict__.setdefault(
        "zstd", {}
    )
    compressor = compressors.get((level, window_log))
    if compressor is None:
        compressor = compressors[(level, window_log)] = (
            zstandard.ZstdCompressor(compression_params=_params(level, window_log))
            if window_log
            else zstandard.ZstdCompressor(level=level)
        )
    return compressor.compress(raw)


def _zstd_decompress(data: bytes) -> bytes:
    decompressor: zstandard.ZstdDecompressor | None = getattr(_local, "unzstd", None)
    if decompressor is None:
        decompressor = _local.unzstd = zstandard.ZstdDecompressor()
    return decompressor.decompress(data)


_DECOMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "zstd+json": _zstd_decompress,
    "zlib+json": zlib.decompress,
}


def decode_record(encoding: str, data: bytes, what: str = "a match record") -> Any:
    """The JSON value stored as ``data`` under ``encoding``; StoreError when the encoding
    is unknown or the data does not decode."""
    decompress = _DECOMPRESS.get(encoding)
    if decompress is None:
        raise StoreError(f"{what}: record encoding {encoding!r} unknown")
    try:
        return orjson.loads(decompress(bytes(data)))
    except (zlib.error, zstandard.ZstdError, orjson.JSONDecodeError) as exc:
        raise StoreError(f"{what}: stored record does not decode ({exc})") from None
