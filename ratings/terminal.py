"""Printing rich renderables: at the terminal's width, or at their natural width in a file.

A pipe or a file has no width; rich would assume 80 columns and squeeze the tables
(names cut to "house:gr…"). There, each renderable is printed as wide as it needs.
"""

from __future__ import annotations

import io
from typing import Any, TextIO


def print_rich(out: TextIO, *renderables: Any) -> None:
    """Print ``renderables`` (rich tables, markup strings) to ``out``."""
    from rich.console import Console
    from rich.measure import Measurement

    if out.isatty():
        console = Console(file=out)
        for item in renderables:
            console.print(item)
        return
    probe = Console(file=io.StringIO(), width=10_000)
    for item in renderables:
        width = Measurement.get(probe, probe.options, item).maximum
        buffer = io.StringIO()
        Console(file=buffer, width=max(width, 20), no_color=True).print(item)
        out.writelines(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())
