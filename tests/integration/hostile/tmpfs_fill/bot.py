"""Writes until the disk is full (bounded at 3 GiB): /tmp and /dev/shm must fill up small,
nothing else may be writable."""

import os
import sys

CHUNK = b"\0" * (1024 * 1024)
BOUND = 3 * 1024
done = False


def fill(path):
    """MiB written to ``path`` before an error (the error), or the bound reached (None)."""
    written = 0
    try:
        with open(path, "wb") as fh:
            while written < BOUND:
                fh.write(CHUNK)
                fh.flush()
                written += 1
    except OSError as exc:
        return written, exc
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return written, None


def act(decision):
    global done
    if not done:
        done = True
        mib, error = fill("/tmp/fill")
        if error is None:
            raise RuntimeError(f"ESCAPED: wrote {mib} MiB to /tmp")
        shm, shm_error = fill("/dev/shm/fill")
        if shm_error is None:
            raise RuntimeError(f"ESCAPED: wrote {shm} MiB to /dev/shm")
        print(f"tmpfs_fill: /dev/shm full after {shm} MiB", file=sys.stderr)
        for path in ("/fill", "/bot/fill", "/run/saloon/fill", "/var/tmp/fill", "/dev/fill"):
            wrote, err = fill(path)
            if err is None or wrote > 1:
                raise RuntimeError(f"ESCAPED: wrote {wrote} MiB to {path}")
        print(
            f"CONTAINED: /tmp full after {mib} MiB ({error}); nothing else writable",
            file=sys.stderr,
        )
    return decision.legal[0]
