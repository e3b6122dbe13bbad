"""The wire JSON of each game, as one machine-readable schema: what every runtime decodes.

Each game's SDK view module (``saloon.sdk.games.<game>``) declares ``WIRE``, a
:class:`GameWire`: the JSON object a seat's observation is and the JSON value of each
decision kind's legal actions, field by field with what each means. From it come the JSON
Schema of the game (``kits/schema/<game>.json``, :func:`json_schema`) and, from that, the
typed views of every other language's runtime (``python -m saloon.sdk.schema --write``);
a test validates every observation and action of random playouts against it
(:func:`problems`), so the schema cannot drift from what the engine sends.

The types: :data:`INT`, :data:`STR`, :data:`BOOL`, :data:`NUMBER`, :class:`Enum` (one of
some strings), :class:`ListOf`, :class:`Nullable` (the value or ``null``), :class:`Obj`
(named, exactly its fields; a field may be ``optional``: absent from some objects), and
:class:`Union` (named objects told apart by a ``type`` field's value).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The JSON Schema dialect of the exported files.
DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar: integer, string, boolean or number."""

    json_type: str


INT = Scalar("integer")
STR = Scalar("string")
BOOL = Scalar("boolean")
NUMBER = Scalar("number")


@dataclass(frozen=True)
class Enum:
    """One of a fixed set of strings."""

    name: str
    values: tuple[str, ...]
    doc: str = ""


@dataclass(frozen=True)
class ListOf:
    """A JSON array of one type."""

    item: Type


@dataclass(frozen=True)
class Nullable:
    """The type, or ``null``."""

    inner: Type


@dataclass(frozen=True)
class Field:
    """One field of an object."""

    name: str
    type: Type
    doc: str
    #: The key is absent from some objects (never null for being absent).
    optional: bool = False


@dataclass(frozen=True)
class Obj:
    """A JSON object with exactly these fields; ``name`` names its type everywhere."""

    name: str
    doc: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Union:
    """Objects told apart by the value of their ``tag`` field (a constant per variant)."""

    name: str
    doc: str
    tag: str
    variants: tuple[tuple[str, Obj], ...]


Type = Scalar | Enum | ListOf | Nullable | Obj | Union


@dataclass(frozen=True)
class GameWire:
    """A game's wire JSON: its observation and each decision kind's action."""

    game: str
    title: str
    observation: Obj
    #: Decision kind -> the type of one legal action of that kind.
    actions: dict[str, Type] = field(default_factory=dict)


# -- JSON Schema ----------------------------------------------------------------------------
def _named(t: Type, out: dict[str, Type]) -> None:
    """Every named type reachable from ``t``, by name (first seen)."""
    if isinstance(t, Obj | Union | Enum):
        if t.name in out:
            if out[t.name] != t:
                raise ValueError(f"two different types named {t.name}")
            return
        out[t.name] = t
    if isinstance(t, Obj):
        for f in t.fields:
            _named(f.type, out)
    elif isinstance(t, Union):
        for _, variant in t.variants:
            _named(variant, out)
    elif isinstance(t, ListOf):
        _named(t.item, out)
    elif isinstance(t, Nullable):
        _named(t.inner, out)


def named_types(wire: GameWire) -> dict[str, Type]:
    """The game's named types (objects, unions, enums), in the order first met."""
    out: dict[str, Type] = {}
    _named(wire.observation, out)
    for t in wire.actions.values():
        _named(t, out)
    return out


def _ref(t: Type) -> dict[str, Any]:
    if isinstance(t, Scalar):
        return {"type": t.json_type}
    if isinstance(t, ListOf):
        return {"type": "array", "items": _ref(t.item)}
    if isinstance(t, Nullable):
        return {"anyOf": [_ref(t.inner), {"type": "null"}]}
    return {"$ref": f"#/$defs/{t.name}"}


def _definition(t: Type) -> dict[str, Any]:
    if isinstance(t, Enum):
        return {"description": t.doc, "enum": list(t.values)} if t.doc else {"enum": list(t.values)}
    if isinstance(t, Union):
        return {
            "description": t.doc,
            "oneOf": [_ref(variant) for _, variant in t.variants],
            "x-tag": t.tag,
        }
    assert isinstance(t, Obj)
    return {
        "description": t.doc,
        "type": "object",
        "properties": {f.name: {**_ref(f.type), "description": f.doc} for f in t.fields},
        "required": [f.name for f in t.fields if not f.optional],
        "additionalProperties": False,
    }


def json_schema(wire: GameWire) -> dict[str, Any]:
    """The game's JSON Schema: ``$defs`` of its named types, the observation, the actions."""
    defs = {name: _definition(t) for name, t in named_types(wire).items()}
    for t in named_types(wire).values():
        if isinstance(t, Union):
            for tag, variant in t.variants:
                props = defs[variant.name]["properties"]
                props[t.tag] = {**props[t.tag], "const": tag}
    return {
        "$schema": DIALECT,
        "$id": f"https://saloon.invalid/schema/{wire.game}.json",
        "title": wire.title,
        "description": (
            f"The wire JSON of {wire.game}: a seat's observation and each decision kind's "
            "legal actions. Generated by `python -m saloon.sdk.schema kits --write`; do not edit."
        ),
        "$defs": defs,
        "properties": {
            "observation": _ref(wire.observation),
            "actions": {
                "type": "object",
                "properties": {kind: _ref(t) for kind, t in sorted(wire.actions.items())},
                "additionalProperties": False,
            },
        },
    }


# -- validation -------------------------------------------------------------------------------
def problems(value: Any, t: Type, where: str = "$") -> Iterator[str]:
    """What is wrong with ``value`` as a ``t``, one line each (nothing when it fits)."""
    if isinstance(t, Nullable):
        if value is not None:
            yield from problems(value, t.inner, where)
        return
    if isinstance(t, Scalar):
        ok = {
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "string": isinstance(value, str),
            "boolean": isinstance(value, bool),
            "number": isinstance(value, int | float) and not isinstance(value, bool),
        }[t.json_type]
        if not ok:
            yield f"{where}: {value!r} is not a {t.json_type}"
        return
    if isinstance(t, Enum):
        if value not in t.values:
            yield f"{where}: {value!r} is not one of {t.name} {t.values}"
        return
    if isinstance(t, ListOf):
        if not isinstance(value, list):
            yield f"{where}: {type(value).__name__} is not an array"
            return
        for i, item in enumerate(value):
            yield from problems(item, t.item, f"{where}[{i}]")
        return
    if not isinstance(value, dict):
        yield f"{where}: {type(value).__name__} is not an object ({t.name})"
        return
    if isinstance(t, Union):
        variants = dict(t.variants)
        variant = variants.get(str(value.get(t.tag)))
        if variant is None:
            yield f"{where}: {t.tag}={value.get(t.tag)!r} is no variant of {t.name}"
            return
        yield from problems(value, variant, where)
        return
    known = {f.name for f in t.fields}
    for name in sorted(set(value) - known):
        yield f"{where}.{name}: not a field of {t.name}"
    for f in t.fields:
        if f.name in value:
            yield from problems(value[f.name], f.type, f"{where}.{f.name}")
        elif not f.optional:
            yield f"{where}.{f.name}: missing from {t.name}"


# -- the files ----------------------------------------------------------------------------------
def wires() -> list[GameWire]:
    """Every registered game's wire schema (games whose SDK view declares ``WIRE``)."""
    from saloon.games import sdk_views_table
    from saloon.sdk.games import adapter_for

    out = []
    for game in sorted(sdk_views_table()):
        module = adapter_for(game)
        wire = getattr(module, "WIRE", None)
        if isinstance(wire, GameWire):
            out.append(wire)
    return out


def schema_text(wire: GameWire) -> str:
    """The exported file's text (stable: sorted keys are not used, order is the schema's)."""
    return json.dumps(json_schema(wire), indent=2, ensure_ascii=False) + "\n"


def generated(root: Path) -> dict[Path, str]:
    """Every generated file under ``root`` (the kits folder): schemas and typed views."""
    from saloon.sdk import schema_codegen

    out: dict[Path, str] = {}
    for wire in wires():
        out[root / "schema" / f"{wire.game}.json"] = schema_text(wire)
        out.update(schema_codegen.views(wire, root))
    return out


def main(argv: list[str] | None = None) -> int:
    """Write (``--write``) or check (``--check``) the generated files under KITS."""
    parser = argparse.ArgumentParser(prog="python -m saloon.sdk.schema", description=__doc__)
    parser.add_argument("kits", help="the kits folder (kits/)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", action="store_true", help="write every generated file")
    what.add_argument("--check", action="store_true", help="exit 1 when one would change")
    args = parser.parse_args(argv)
    stale = []
    for path, text in generated(Path(args.kits)).items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if args.write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'wrote' if args.write else 'stale'}: {path}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    # Through the module's own name: the games' WIRE values are of its classes, not __main__'s.
    from saloon.sdk.schema import main as _main

    sys.exit(_main())
