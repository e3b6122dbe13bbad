"""Exits the whole runtime at its third decision."""

import os

count = 0


def act(decision):
    global count
    count += 1
    if count == 3:
        os._exit(3)
    return decision.legal[0]
