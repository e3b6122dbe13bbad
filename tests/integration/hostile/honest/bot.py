"""An honest bot: the first legal action. Counts its matches in a module global (kept by a
warm runtime between matches; never part of what it answers)."""

import sys

MATCHES = 0


def make_bot():
    """A fresh bot per match; the module (and MATCHES) lives as long as the runtime."""
    from saloon.sdk import Bot

    global MATCHES
    MATCHES += 1
    print(f"honest: match {MATCHES} in this runtime", file=sys.stderr)

    class Honest(Bot):
        def act(self, decision):
            return decision.legal[0]

    return Honest()
