"""Seed derivation: every seed Saloon computes from another seed or from a text, in one place.

A match seed fans out into the seeds of its parts (chance draws, each seat's bot, a
played-out seat's house:random), and a season seed into its matches' seeds; all of these
are :func:`derive_seed`, so one label always names one stream. A qualification match has
no parent seed: its seed is named by the submitted version (:func:`text_seed`), so the
same files always qualify in the same match.

Both are SHA-256 based, hence stable across processes, machines and Python versions
(unlike ``hash()``). Their formulas are part of the record: match records, golden
playthroughs and stored seasons replay only while they stay exactly as they are.
"""

from __future__ import annotations

import hashlib


def _digest_int(text: str, size: int) -> int:
    """The first ``size`` bytes of SHA-256 of ``text`` as a big-endian integer."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:size], "big")


def derive_seed(seed: int, label: str) -> int:
    """A 63-bit seed for one purpose of a match (chance, a seat's bot), stable everywhere."""
    return _digest_int(f"{seed}:{label}", 8) >> 1


def text_seed(text: str) -> int:
    """A 48-bit seed named by ``text`` alone (a submitted version's qualification match)."""
    # Not derive_seed: there is no parent seed to hash with. 48 bits because that is
    # what every stored qualification match was played with.
    return _digest_int(text, 6)
