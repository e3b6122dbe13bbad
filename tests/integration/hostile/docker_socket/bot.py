"""Looks for the Docker engine's socket: it must be absent."""

import os
import sys

PATHS = ["/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock"]
done = False


def act(decision):
    global done
    if not done:
        done = True
        seen = [p for p in PATHS if os.path.exists(p)]
        if seen:
            raise RuntimeError(f"ESCAPED: sees {seen}")
        print(f"CONTAINED: none of {PATHS}", file=sys.stderr)
    return decision.legal[0]
