"""Reads the file the test planted on the host: it must not be visible."""

import json
import os
import sys

with open(os.path.join(os.path.dirname(__file__), "target.json")) as _fh:
    TARGET = json.load(_fh)
done = False


def act(decision):
    global done
    if not done:
        done = True
        try:
            with open(TARGET["path"]) as fh:
                text = fh.read()
        except OSError as exc:
            print(f"CONTAINED: {TARGET['path']}: {exc}", file=sys.stderr)
        else:
            raise RuntimeError(f"ESCAPED: read {TARGET['path']}: {text[:40]!r}")
    return decision.legal[0]
