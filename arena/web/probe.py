"""A liveness probe of the web side for container healthchecks, either scheme:

    python3 -m saloon.arena.web.probe 127.0.0.1:8080/healthz

Exit 0 when ``GET`` of that path answers 200 over HTTPS (the certificate is not verified:
the probe runs beside the server, and the web side serves HTTPS only when ``saloon
serve`` has ``--tls-cert``) or, failing that, over plain HTTP; exit 1 otherwise.
Standard library only: it runs in a fresh interpreter every few seconds.
"""

from __future__ import annotations

import ssl
import sys
import urllib.request

TIMEOUT_S = 5.0


def alive(target: str) -> bool:
    """True when ``https://target`` or ``http://target`` answers 200."""
    unverified = ssl._create_unverified_context()  # a local liveness check, not trust
    for scheme in ("https", "http"):
        try:
            with urllib.request.urlopen(
                f"{scheme}://{target}", timeout=TIMEOUT_S, context=unverified
            ) as reply:
                if reply.status == 200:
                    return True
        except OSError:
            continue
    return False


def main(argv: list[str] | None = None) -> int:
    """Probe ``argv[0]`` (host:port/path); the exit status says whether it is alive."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python3 -m saloon.arena.web.probe HOST:PORT/PATH", file=sys.stderr)
        return 2
    return 0 if alive(args[0]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
