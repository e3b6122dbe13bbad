"""Lists the network interfaces: only the loopback may exist."""

import socket
import sys

done = False


def act(decision):
    global done
    if not done:
        done = True
        names = sorted(name for _, name in socket.if_nameindex())
        if names != ["lo"]:
            raise RuntimeError(f"ESCAPED: interfaces {names}")
        print(f"CONTAINED: interfaces {names}", file=sys.stderr)
    return decision.legal[0]
