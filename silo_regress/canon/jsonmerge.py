"""The three-way merge of JSON documents: by key for objects, by identity for id'd arrays.

A baseline is a prediction that the merged commit's ``check --run`` verifies, so two
sides that changed different members of one baseline merge like two edits to
different lines of code. Objects merge key by key. An array merges as a whole (one
side changed it: that side; both: a conflict) unless its items carry identities:

- the id lists of state-diff collections (``/collections/*/added`` ...) are sets of ids
  kept in insertion order;
- ``checks`` of result.json are keyed by ``label``, ``scalars`` of state-diff by ``field``;
- the events of tool-events.json by ``seq``: an event's place in the trace, unique
  and never reused, so two sides that touched different events merge, and a side
  that inserted an event (renumbering all after it) conflicts with any edit after it.

Concurrent insertions at one place keep each side's order, the side whose first new
item sorts first going first: Silo's ids count up (``AUD-0001``), and a merge must not
depend on which side is "ours". A side that reordered the items both kept makes the
array a conflict: an order merge would guess.

Where both sides changed one member differently, the result is a :class:`Conflict`
with its JSON Pointer; :func:`render` writes the merge in canonical form, with git's
conflict markers around the lines of each conflicting member only. A base of
:data:`UNKNOWN` (two sides, no common ancestor) leaves a conflict wherever they differ.
:func:`unsplice` keeps once a member that git's line merge left twice in a side read
back from markers, when the markers say which occurrence is that side's.
"""

from __future__ import annotations

import enum
import gc
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import orjson

from silo_regress.canon.canonical import (
    JsonValue,
    canonicalize,
    compact_is_canonical,
    quote,
    serialize,
)
from silo_regress.canon.markers import block
from silo_regress.canon.pointer import Part, format_pointer


class Absent(enum.Enum):
    """What stands where a side has no value: a member it lacks, a base nobody knows."""

    MISSING = "missing"
    UNKNOWN = "unknown"


MISSING = Absent.MISSING
UNKNOWN = Absent.UNKNOWN
Side: TypeAlias = "JsonValue | Absent"
_ANY = "*"
_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE | orjson.OPT_SORT_KEYS


@dataclass(frozen=True)
class MergeRules:
    """Which arrays of a document carry identities (paths with ``*`` for any key)."""

    keyed: tuple[tuple[tuple[str, ...], str], ...] = ()  # (path, identity member)
    sets: tuple[tuple[str, ...], ...] = ()  # arrays of ids

    def key_at(self, parts: Sequence[Part]) -> str | None:
        return next((key for path, key in self.keyed if _matches(path, parts)), None)

    def is_set(self, parts: Sequence[Part]) -> bool:
        return any(_matches(path, parts) for path in self.sets)


RESULT_RULES = MergeRules(keyed=((("checks",), "label"),))
STATE_RULES = MergeRules(
    keyed=((("scalars",), "field"),),
    sets=tuple(("collections", _ANY, kind) for kind in ("added", "removed", "changed")),
)
TOOL_EVENT_RULES = MergeRules(keyed=(((), "seq"),))
_BY_ARTIFACT = {
    "result.json": RESULT_RULES,
    "state-diff.json": STATE_RULES,
    "tool-events.json": TOOL_EVENT_RULES,
}


def rules_for(name: str) -> MergeRules:
    """The rules of a baseline file ``[ENV/]TASK[~N].ARTIFACT`` (none for other artifacts)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    for artifact, rules in _BY_ARTIFACT.items():
        if base.endswith("." + artifact):
            return rules
    return MergeRules()


def _matches(path: tuple[str, ...], parts: Sequence[Part]) -> bool:
    return len(path) == len(parts) and all(p in (_ANY, q) for p, q in zip(path, parts, strict=True))


@dataclass(frozen=True)
class Conflict:
    """One member both sides changed differently; a side's value is MISSING where it
    removed the member."""

    parts: tuple[Part, ...]
    base: Side
    ours: Side
    theirs: Side

    @property
    def pointer(self) -> str:
        return format_pointer(self.parts)

    @property
    def shown(self) -> str:
        return self.pointer or "/ (the whole document)"


@dataclass(frozen=True)
class _Clash:
    """A conflict's place in the merged tree, until :func:`render` writes it."""

    ours: Side
    theirs: Side


@dataclass(frozen=True)
class Merge:
    """A merged document; clean when ``conflicts`` is empty."""

    tree: Any  # the merged value, with a _Clash at each conflict
    conflicts: tuple[Conflict, ...]

    @property
    def clean(self) -> bool:
        return not self.conflicts

    @property
    def value(self) -> Any:
        """The merge, taking ours at every conflict."""
        return _side(self.tree, ours=True, parts=(), inside=self._inside)

    @property
    def theirs_value(self) -> Any:
        return _side(self.tree, ours=False, parts=(), inside=self._inside)

    @property
    def _inside(self) -> frozenset[tuple[Part, ...]]:
        return _ancestors(self.conflicts)


def merge_values(base: Any, ours: Any, theirs: Any, *, rules: MergeRules) -> Merge:
    """The three-way merge of parsed values (``base`` UNKNOWN for a two-sided merge)."""
    conflicts: list[Conflict] = []
    tree = _Merger(rules, conflicts).merge(base, ours, theirs, ())
    return Merge(tree=tree, conflicts=tuple(conflicts))


@dataclass(frozen=True)
class DocumentMerge:
    """A merge of three files, and the bytes to leave in the merged file."""

    merge: Merge
    text: bytes


def merge_documents(
    base: bytes | None,
    ours: bytes,
    theirs: bytes,
    *,
    name: str,
    sources: tuple[str, str, str],
    labels: tuple[str, str] = ("ours", "theirs"),
) -> DocumentMerge:
    """Parse each side (an :class:`InputError` naming ``sources``' side that is not JSON),
    merge by the rules of baseline ``name`` and render; ``base`` None: no common base."""
    # Three parsed 10 MB files are millions of objects: the cycle collector would walk
    # them again and again while they are made, and none of them can form a cycle.
    collecting = gc.isenabled()
    gc.disable()
    try:
        theirs_value = canonicalize(theirs, source=sources[2]).value
        ours_value = canonicalize(ours, source=sources[1]).value
        base_value: Side = UNKNOWN if base is None else canonicalize(base, source=sources[0]).value
        merge = merge_values(base_value, ours_value, theirs_value, rules=rules_for(name))
        return DocumentMerge(merge=merge, text=render(merge, labels=labels))
    finally:
        if collecting:
            gc.enable()


class _Merger:
    def __init__(self, rules: MergeRules, conflicts: list[Conflict]) -> None:
        self.rules = rules
        self.conflicts = conflicts

    def clash(self, parts: tuple[Part, ...], base: Side, ours: Side, theirs: Side) -> _Clash:
        self.conflicts.append(Conflict(parts=parts, base=base, ours=ours, theirs=theirs))
        return _Clash(ours=ours, theirs=theirs)

    def merge(self, base: Side, ours: Side, theirs: Side, parts: tuple[Part, ...]) -> Any:
        if _same(ours, theirs):
            return ours
        if base is not UNKNOWN:
            if _same(ours, base):
                return theirs
            if _same(theirs, base):
                return ours
        if isinstance(ours, dict) and isinstance(theirs, dict):
            if base is MISSING:
                base = {}
            if base is UNKNOWN or isinstance(base, dict):
                return self.members(base, ours, theirs, parts)
        if isinstance(ours, list) and isinstance(theirs, list):
            if base is MISSING:
                base = []
            if base is UNKNOWN or isinstance(base, list):
                merged = self.items(base, ours, theirs, parts)
                if merged is not None:
                    return merged
        return self.clash(parts, base, ours, theirs)

    def members(
        self,
        base: dict[str, JsonValue] | Absent,
        ours: dict[str, JsonValue],
        theirs: dict[str, JsonValue],
        parts: tuple[Part, ...],
    ) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for key in _union(ours, theirs, base if isinstance(base, dict) else {}):
            b: Side = base.get(key, MISSING) if isinstance(base, dict) else UNKNOWN
            value = self.merge(b, ours.get(key, MISSING), theirs.get(key, MISSING), (*parts, key))
            if value is not MISSING:
                merged[key] = value
        return merged

    def items(
        self,
        base: list[JsonValue] | Absent,
        ours: list[JsonValue],
        theirs: list[JsonValue],
        parts: tuple[Part, ...],
    ) -> list[Any] | None:
        """The merged array, or None when it can only merge as a whole."""
        if self.rules.is_set(parts):
            return _merge_set(base, ours, theirs)
        key = self.rules.key_at(parts)
        if key is None:
            return None
        maps = [_keyed(side, key) for side in (ours, theirs)]
        base_map = _keyed(base, key) if isinstance(base, list) else {}
        ours_map, theirs_map = maps
        if ours_map is None or theirs_map is None or base_map is None:
            return None
        if base is UNKNOWN:
            if list(ours_map) != list(theirs_map):
                return None
            order: list[Any] | None = list(ours_map)
        else:
            order = _merge_order(list(base_map), list(ours_map), list(theirs_map))
        if order is None:
            return None
        merged: list[Any] = []
        for identity in order:
            b: Side = UNKNOWN if base is UNKNOWN else base_map.get(identity, MISSING)
            value = self.merge(
                b,
                ours_map.get(identity, MISSING),
                theirs_map.get(identity, MISSING),
                (*parts, len(merged)),
            )
            if value is not MISSING:
                merged.append(value)
        return merged


def _union(*maps: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(key for keys in maps for key in keys))


def _same(a: Side, b: Side) -> bool:
    """Equal as JSON: ``True`` is not ``1`` (Python says it is); ``1`` is ``1.0``."""
    if a is b:
        return True
    if isinstance(a, Absent) or isinstance(b, Absent) or a != b:
        return False
    if isinstance(a, dict | list):
        # == held: only a bool against a number can still differ. orjson prints both
        # in C; an integer beyond 64 bits is compared member by member instead.
        try:
            return orjson.dumps(a) == orjson.dumps(b)
        except orjson.JSONEncodeError:
            return _strictly_same(a, b)
    return isinstance(a, bool) == isinstance(b, bool)


def _strictly_same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_strictly_same(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(_strictly_same(x, y) for x, y in zip(a, b, strict=True))
        )
    return bool(a == b) and isinstance(a, bool) == isinstance(b, bool)


def _identity(value: Any) -> str | int | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return value


def _keyed(items: list[JsonValue], key: str) -> dict[str | int, JsonValue] | None:
    """Items by their identity, or None unless every item is an object with a distinct one."""
    mapped: dict[str | int, JsonValue] = {}
    for item in items:
        identity = _identity(item.get(key)) if isinstance(item, dict) else None
        if identity is None or identity in mapped:
            return None
        mapped[identity] = item
    return mapped


def _merge_set(
    base: list[JsonValue] | Absent, ours: list[JsonValue], theirs: list[JsonValue]
) -> list[JsonValue] | None:
    """Ids in insertion order: one removed by either side is gone, one added by either is in."""
    sides = [_ids(side) for side in (ours, theirs)]
    if sides[0] is None or sides[1] is None or not isinstance(base, list):
        return None
    base_ids = _ids(base)
    if base_ids is None:
        return None
    ours_set, theirs_set = set(sides[0]), set(sides[1])
    order = _merge_order(base_ids, sides[0], sides[1])
    if order is None:
        return None
    base_set = set(base_ids)
    kept: list[JsonValue] = [
        i for i in order if i not in base_set or (i in ours_set and i in theirs_set)
    ]
    return kept


def _ids(items: list[JsonValue]) -> list[str | int] | None:
    ids = [_identity(item) for item in items]
    if any(i is None for i in ids) or len(set(ids)) != len(ids):
        return None
    return [i for i in ids if i is not None]


def _sort_key(identity: str | int) -> tuple[int, str | int]:
    return (0, identity) if isinstance(identity, int) else (1, identity)


def _merge_order(
    base: list[str | int], ours: list[str | int], theirs: list[str | int]
) -> list[str | int] | None:
    """Every identity of the three, in a merged order; None when a side reordered items
    that both sides kept. Items removed by a side stay in the order (the caller drops
    them, or keeps a member one side changed and the other removed, as a conflict)."""
    base_set = set(base)
    both = set(ours) & set(theirs) & base_set
    for side in (ours, theirs):
        if [i for i in side if i in both] != [i for i in base if i in both]:
            return None
    # A new item is anchored to the base item that follows it on its side (or the end):
    # Silo appends, and two sides that appended, one after removing the last id, still
    # insert at one place, the end.
    end: object = object()
    runs: list[dict[object, list[str | int]]] = []
    for side in (ours, theirs):
        anchor = end
        inserted: dict[object, list[str | int]] = {}
        for item in reversed(side):
            if item in base_set:
                anchor = item
            else:
                inserted.setdefault(anchor, []).append(item)
        runs.append({key: items[::-1] for key, items in inserted.items()})
    order: list[str | int] = []
    seen: set[str | int] = set()

    def emit(items: Iterable[str | int]) -> None:
        for item in items:
            if item not in seen:
                seen.add(item)
                order.append(item)

    for anchor in [*base, end]:
        first, second = runs[0].get(anchor, []), runs[1].get(anchor, [])
        if second and (not first or _sort_key(second[0]) < _sort_key(first[0])):
            first, second = second, first
        emit(first)
        emit(second)
        if anchor is not end:
            emit([anchor])  # type: ignore[list-item]
    return order


# --- rendering ------------------------------------------------------------------


def canonical_bytes(value: JsonValue) -> bytes:
    """``serialize(value)``, printed by orjson when that is provably the same bytes
    (the proof of canonical.compact_is_canonical): a 10 MB merge prints in C."""
    try:
        compact = orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return serialize(value)
    if compact_is_canonical(value, compact):
        return orjson.dumps(value, option=_OPTIONS)
    return serialize(value)


def render(merge: Merge, *, labels: tuple[str, str] = ("ours", "theirs")) -> bytes:
    """The canonical bytes of the merge; each conflict's member lines inside markers."""
    if merge.clean:
        return canonical_bytes(merge.tree)
    inside = merge._inside
    pieces = _Writer(inside).value(merge.tree, (), indent="", prefix="")
    lines: list[str] = []
    pending: _Block | None = None
    for piece in [*pieces, ""]:
        if isinstance(piece, _Block):
            pending = (
                piece
                if pending is None
                else _Block(pending.ours + piece.ours, pending.theirs + piece.theirs)
            )
            continue
        if pending is not None:
            lines += block(pending.ours, pending.theirs, labels=labels)
            pending = None
        lines.append(piece)
    return "\n".join(lines).encode("utf-8")


@dataclass(frozen=True)
class _Block:
    ours: list[str] = field(default_factory=list)
    theirs: list[str] = field(default_factory=list)


_Piece: TypeAlias = "str | _Block"


def _ancestors(conflicts: Iterable[Conflict]) -> frozenset[tuple[Part, ...]]:
    return frozenset(c.parts[:n] for c in conflicts for n in range(len(c.parts)))


def _side(
    tree: Any, *, ours: bool, parts: tuple[Part, ...], inside: frozenset[tuple[Part, ...]]
) -> Any:
    """The tree with each clash replaced by one side's value (a MISSING member dropped)."""
    if isinstance(tree, _Clash):
        return tree.ours if ours else tree.theirs
    if parts not in inside:
        return tree
    if isinstance(tree, dict):
        members = {
            k: _side(v, ours=ours, parts=(*parts, k), inside=inside) for k, v in tree.items()
        }
        return {k: v for k, v in members.items() if v is not MISSING}
    items = [_side(v, ours=ours, parts=(*parts, i), inside=inside) for i, v in enumerate(tree)]
    return [v for v in items if v is not MISSING]


def _plain(value: Side, *, indent: str, prefix: str) -> list[str]:
    """A value's canonical lines at ``indent``, the first after ``prefix`` (``"key": ``)."""
    if isinstance(value, Absent):
        return []
    lines = canonical_bytes(value).decode("utf-8").rstrip("\n").split("\n")
    lines[0] = indent + prefix + lines[0]
    if len(lines) > 1 and indent:
        lines[1:] = [indent + line for line in lines[1:]]
    return lines


class _Writer:
    def __init__(self, inside: frozenset[tuple[Part, ...]]) -> None:
        self.inside = inside

    def value(
        self, tree: Any, parts: tuple[Part, ...], *, indent: str, prefix: str
    ) -> list[_Piece]:
        if isinstance(tree, _Clash):
            return [
                _Block(
                    _plain(tree.ours, indent=indent, prefix=prefix),
                    _plain(tree.theirs, indent=indent, prefix=prefix),
                )
            ]
        if parts not in self.inside:
            return list(_plain(tree, indent=indent, prefix=prefix))
        members: list[tuple[Part, Any, str]]
        if isinstance(tree, dict):
            ordered = sorted(
                tree.items(), key=lambda kv: kv[0].encode("utf-16-be", "surrogatepass")
            )
            members = [(k, v, quote(k) + ": ") for k, v in ordered]
            opening, closing = "{", "}"
        else:
            members = [(i, v, "") for i, v in enumerate(tree)]
            opening, closing = "[", "]"
        present = [
            [
                not (isinstance(v, _Clash) and (v.ours if side else v.theirs) is MISSING)
                for _, v, _ in members
            ]
            for side in (True, False)
        ]
        last = [max((i for i, p in enumerate(flags) if p), default=-1) for flags in present]
        if min(last) < 0:  # a side empties the container: "{}" is one line on that side
            return [
                _Block(
                    _plain(
                        _side(tree, ours=True, parts=parts, inside=self.inside),
                        indent=indent,
                        prefix=prefix,
                    ),
                    _plain(
                        _side(tree, ours=False, parts=parts, inside=self.inside),
                        indent=indent,
                        prefix=prefix,
                    ),
                )
            ]
        pieces: list[_Piece] = [indent + prefix + opening]
        inner = indent + "  "
        for n, (part, member, key) in enumerate(members):
            written = self.value(member, (*parts, part), indent=inner, prefix=key)
            pieces += _with_commas(written, ours=n < last[0], theirs=n < last[1])
        pieces.append(indent + closing)
        return pieces


def _with_commas(pieces: list[_Piece], *, ours: bool, theirs: bool) -> list[_Piece]:
    """``pieces`` with the comma that follows a member on each side that has another."""
    *head, tail = pieces
    if isinstance(tail, _Block):
        return [*head, _Block(_comma(tail.ours, ours), _comma(tail.theirs, theirs))]
    if ours == theirs:
        return [*head, tail + "," if ours else tail]
    return [*head, _Block([tail + "," if ours else tail], [tail + "," if theirs else tail])]


def _comma(lines: list[str], wanted: bool) -> list[str]:
    return [*lines[:-1], lines[-1] + ","] if wanted and lines else lines


# --- sides read back from markers ------------------------------------------------


@dataclass(frozen=True)
class _Node:
    """A value of a canonical text, by lines: ``raw`` for a scalar or an empty
    container (its JSON text), else ``members`` (key None in an array)."""

    first: int  # the first and last line of the value (with its key)
    last: int
    raw: str | None = None
    members: tuple[tuple[str | None, _Node], ...] = ()
    is_object: bool = False


class _UnreadableError(Exception):
    """Not canonical text line by line: left to the strict parser to refuse."""


def unsplice(text: bytes, marked: frozenset[int], *, rules: MergeRules) -> bytes:
    """One side of a conflicted file, read back from its markers, with each member that
    git's line merge left twice kept once: the occurrence wholly inside the side's own
    blocks (``marked`` lines), where the other lies wholly outside every block.

    Git's line merge can take the other side's version of a member outside the
    markers while the block holds this side's version of it (both sides added an id
    to one ``"changed": [...]``: one side's list outside, the other's in the block):
    read back, the side holds the key (or the check's label, the id) twice. The lines in a block are
    this side's own; a side holds a member once, so the one outside is the other
    side's. Anything else (more than two, both outside, a member half in a block)
    stays as it is, for the strict parser to refuse or the merge to leave a conflict.
    Text that is not canonical line by line is returned unchanged."""
    if not marked:
        return text
    try:
        lines = text.decode("utf-8").split("\n")
        node, end = _read(lines, 0, lines[0].strip())
        if any(line.strip() for line in lines[end:]):
            return text
        changed, kept = _drop_duplicates(node, (), marked=marked, rules=rules)
    except (_UnreadableError, UnicodeDecodeError, ValueError, RecursionError):
        return text
    return _compact(kept).encode("utf-8") if changed else text


_DECODER = json.JSONDecoder()


def _read(lines: list[str], at: int, rest: str) -> tuple[_Node, int]:
    """The value whose text starts with ``rest`` on line ``at`` (after its key, if it
    has one), and the line after it."""
    rest = rest[:-1] if rest.endswith(",") else rest
    if rest not in ("{", "["):
        if rest in ("}", "]", ""):
            raise _UnreadableError
        return _Node(first=at, last=at, raw=rest), at + 1
    is_object = rest == "{"
    closing = "}" if is_object else "]"
    members: list[tuple[str | None, _Node]] = []
    line = at + 1
    while True:
        if line >= len(lines):
            raise _UnreadableError
        head = lines[line].strip()
        if head.rstrip(",") == closing:
            break
        key: str | None = None
        if is_object:
            if not head.startswith('"'):
                raise _UnreadableError
            key, end = _DECODER.raw_decode(head)
            if head[end : end + 2] != ": ":
                raise _UnreadableError
            head = head[end + 2 :]
        value, line = _read(lines, line, head)
        members.append((key, value))
    return _Node(first=at, last=line, members=tuple(members), is_object=is_object), line + 1


def _lines_of(node: _Node) -> range:
    return range(node.first, node.last + 1)


def _drop_duplicates(
    node: _Node, parts: tuple[Part, ...], *, marked: frozenset[int], rules: MergeRules
) -> tuple[bool, _Node]:
    """``node`` with each duplicate that :func:`unsplice` resolves kept once; whether
    one was dropped."""
    if node.raw is not None:
        return False, node
    identities: list[str | None]
    if node.is_object:
        identities = [key for key, _ in node.members]
    elif rules.is_set(parts):
        identities = [value.raw for _, value in node.members]
    elif (field_name := rules.key_at(parts)) is not None:
        identities = [_member_raw(value, field_name) for _, value in node.members]
    else:
        identities = [None] * len(node.members)
    dropped: set[int] = set()
    for identity in set(identities) - {None}:
        places = [n for n, i in enumerate(identities) if i == identity]
        if len(places) != 2:
            continue
        first, second = (node.members[n][1] for n in places)
        inside = [all(i in marked for i in _lines_of(v)) for v in (first, second)]
        outside = [not any(i in marked for i in _lines_of(v)) for v in (first, second)]
        if inside[0] and outside[1]:
            dropped.add(places[1])
        elif inside[1] and outside[0]:
            dropped.add(places[0])
    changed = bool(dropped)
    members: list[tuple[str | None, _Node]] = []
    for n, (key, value) in enumerate(node.members):
        if n in dropped:
            continue
        part: Part = key if key is not None else len(members)
        inner, value = _drop_duplicates(value, (*parts, part), marked=marked, rules=rules)
        changed = changed or inner
        members.append((key, value))
    return changed, _Node(
        first=node.first, last=node.last, members=tuple(members), is_object=node.is_object
    )


def _member_raw(node: _Node, name: str) -> str | None:
    if not node.is_object:
        return None
    return next((value.raw for key, value in node.members if key == name), None)


def _compact(node: _Node) -> str:
    if node.raw is not None:
        return node.raw
    if node.is_object:
        inner = ",".join(f"{json.dumps(key)}:{_compact(value)}" for key, value in node.members)
        return "{" + inner + "}"
    return "[" + ",".join(_compact(value) for _, value in node.members) + "]"
