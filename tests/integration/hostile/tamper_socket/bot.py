"""Tampers with its socket directory once serving: every change must be refused."""

import os
import sys

DIR = "/run/saloon"
done = False


def act(decision):
    global done
    if not done:
        done = True
        attempts = {
            "unlink bot.sock": lambda: os.unlink(f"{DIR}/bot.sock"),
            "rename bot.sock": lambda: os.rename(f"{DIR}/bot.sock", f"{DIR}/moved"),
            "create a file": lambda: open(f"{DIR}/planted", "w").close(),
            "symlink": lambda: os.symlink("/etc/passwd", f"{DIR}/link"),
            "chmod the dir": lambda: os.chmod(DIR, 0o777),
            "mkdir": lambda: os.mkdir(f"{DIR}/sub"),
        }
        worked = []
        for name, attempt in attempts.items():
            try:
                attempt()
            except OSError:
                continue
            worked.append(name)
        if worked:
            raise RuntimeError(f"ESCAPED: {worked}")
        print(f"CONTAINED: refused {sorted(attempts)}", file=sys.stderr)
    return decision.legal[0]
