"""The store's boundary: every layer above uses its public API, never its private names.

``saloon.worker.store`` offers a documented API (docs/store.md: ``Store.read``, ``write``,
``insert``, ``insert_ignore``, ``guard``, ``fetch`` and the recording methods); what its
modules name with a leading underscore is theirs alone. This test reads every module
outside ``worker/store`` with :mod:`ast` and fails on

* an import of a private name from a ``saloon.worker.store`` module;
* a private attribute of a store module reached through its imported name
  (``schema._x``, ``store_mod._x``);
* a private attribute of a store object: ``x._name`` where ``x`` is spelled ``store``,
  ends in ``store`` (``self.store``, ``registry.store``, ``module_store``) or is the
  class ``Store``. Stores are called so throughout the code base; an object of another
  type that happens to share a private attribute name (``job._status``) is not flagged.

A checker of names, not types: the convention that a store is called ``store`` is what
makes it exact enough. Decision: an ast test, not ruff's SLF001, which flags every
private access of every object (RQ's, a board's own) and cannot tell the store's apart.
No module is exempt: the store's own tests read what they check through its public API
too (``Store.held_connection()``, a read-only snapshot of a thread's held connection).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "worker" / "store"
SCANNED = ("games", "sdk", "referee", "worker", "ratings", "arena", "bench", "tests")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _store_module(module: str) -> bool:
    return module == "saloon.worker.store" or module.startswith("saloon.worker.store.")


def _is_store(node: ast.expr) -> bool:
    """True when ``node`` spells a store object or the Store class."""
    if isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, ast.Attribute):
        name = node.attr
    else:
        return False
    return name == "Store" or name.lower().endswith("store")


def violations(path: Path) -> list[str]:
    """Each use of a private name of the store in ``path``: 'line: what'."""
    tree = ast.parse(path.read_text(), str(path))
    modules: set[str] = set()  # local names bound to store modules
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _store_module(node.module or ""):
            for alias in node.names:
                if _private(alias.name):
                    found.append((node.lineno, f"imports {node.module}.{alias.name}"))
                elif (STORE / f"{alias.name}.py").exists():  # a module of the store
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _store_module(alias.name) and alias.asname:
                    modules.add(alias.asname)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        base = node.value
        if (isinstance(base, ast.Name) and base.id in modules) or _is_store(base):
            found.append((node.lineno, ast.unparse(node)))
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_no_module_outside_the_store_uses_a_private_name_of_the_store() -> None:
    uses = {}
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.is_relative_to(STORE):
                continue
            if found := violations(path):
                uses[str(path.relative_to(ROOT))] = found
    assert uses == {}, f"use the store's public API (docs/store.md), not its private names: {uses}"


def test_the_check_sees_each_way_of_reaching_in(tmp_path: Path) -> None:
    """The checker itself: each spelling of a private use is caught, public ones pass."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from saloon.worker.store.store import Store, _now\n"
        "from saloon.worker.store import schema as t\n"
        "def f(store, registry, job, board):\n"
        "    store._write('x')\n"
        "    registry.store._insert_ignore(t.bots, ['name'])\n"
        "    Store._read\n"
        "    t._hidden\n"
        "    job._status\n"
        "    board._held\n"
        "    store.write('x'); store.insert_ignore(t.bots, ['name']); store.__class__\n"
    )
    assert violations(probe) == [
        "1: imports saloon.worker.store.store._now",
        "4: store._write",
        "5: registry.store._insert_ignore",
        "6: Store._read",
        "7: t._hidden",
    ]
