"""Seed derivation: every seed Saloon computes from another seed or from a text, in one place.

A match seed fans out into the seeds of its parts (chance draws, each seat's bot, a
played-out seat's house:random), and a season seed into its matches' seeds; all of these
are :func:`derive_seed`, so one label always names one stream. Seeds nobody chose come
from the operating system (:func:`secret_seed`): a season, ladder or qualification match
is dealt from a seed no one can guess (docs/seasons.md, "Secret seeds").

What a seat's bot is given (:func:`bot_seed`, :func:`bot_match_id`) is derived from the
match seed *and the match's id*: the rotations of one duplicate deal share a match seed
but not an id, so no two matches give a bot the same seed, and nothing in them can be
matched to a deal without the (secret) match seed. SHA-256 is one-way: a bot's seed, or a
finished match's published seed, tells nothing of any other seed derived beside it.

All are SHA-256 based, hence stable across processes, machines and Python versions
(unlike ``hash()``). Their formulas are part of the record: match records, golden
playthroughs and stored seasons replay only while they stay exactly as they are.
"""

from __future__ import annotations

import hashlib
import secrets

#: Every seed is below this (they fit a signed 64-bit integer and the protocols' uint64).
SEED_LIMIT = 2**63
#: How the id of a match played outside the arena starts (``local-<game>-<seed>``).
LOCAL_PREFIX = "local-"


def _digest_int(text: str, size: int) -> int:
    """The first ``size`` bytes of SHA-256 of ``text`` as a big-endian integer."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:size], "big")


def derive_seed(seed: int, label: str) -> int:
    """A 63-bit seed for one purpose of a match (chance, a seat's bot), stable everywhere."""
    return _digest_int(f"{seed}:{label}", 8) >> 1


def secret_seed() -> int:
    """A fresh seed from the operating system's random source (``secrets``): what a
    season, a ladder or a qualification match is dealt from unless someone sets one."""
    return secrets.randbelow(SEED_LIMIT)


def bot_seed(match_seed: int, match_id: str, seat: int) -> int:
    """The seed seat ``seat``'s bot is given for its own randomness.

    Derived from the match seed, the match id and the seat: a bot drawing only from it
    replays exactly with its match, two rotations of a duplicate deal (one match seed, two
    match ids) give different seeds, and without the match seed it names no match or deal.

    Local play (``saloon play``, ``saloon eval``: match ids ``local-...``, which no season
    may use) keeps ``derive_seed(match seed, "seat:i")``: its seed is the player's own,
    there is nothing to hide, and every local record and figure made before replays.
    """
    if match_id.startswith(LOCAL_PREFIX):
        return derive_seed(match_seed, f"seat:{seat}")
    return derive_seed(match_seed, f"bot:{match_id}:seat:{seat}")


def bot_match_id(match_seed: int, match_id: str, seat: int) -> str:
    """The id seat ``seat``'s bot is told its match has: opaque (``m-`` and 16 hex
    digits), one per match and seat, naming nothing the arena shows (not the season, the
    deal or the match number; not whether it is a qualification match)."""
    return f"m-{derive_seed(match_seed, f'bot-id:{match_id}:seat:{seat}'):016x}"


def text_seed(text: str) -> int:
    """A 48-bit seed named by ``text`` alone: what a submitted version's qualification
    match was played with before qualification seeds were secret (anyone could compute
    it from the files; versions accepted since keep their :func:`secret_seed` instead)."""
    # Not derive_seed: there is no parent seed to hash with.
    return _digest_int(text, 6)
