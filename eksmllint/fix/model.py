"""What a fix op means on plain data: the one definition the text fixer and JSON Patch share.

Ops of one fix apply in order, each to the result of the previous one (as in RFC 6902):

- ``SetValue(path, v)``: set the key/item; missing parent mappings are created (a ``null``
  parent becomes a mapping); an index equal to the list length appends; creating list items by
  index anywhere else is an error. Setting a value that is already there changes nothing.
- ``AppendItem(path, v)``: append to the list at ``path``; a missing or ``null`` list becomes
  ``[v]`` (parents created as for SetValue).
- ``RemovePath(path)``: delete the key/item; a path that does not exist is already removed.

The text fixer checks every splice against this model: after editing, the document must load
to exactly what these rules predict, or the fix is refused.
"""

from __future__ import annotations

import copy
from typing import Any, TypeGuard

from eksmllint.core.finding import AppendItem, DocPath, FixOp, RemovePath, SetValue
from eksmllint.fix.spans import FixError

_MISSING = object()


def same(a: Any, b: Any) -> bool:
    """Equality that tells ``1`` from ``True`` from ``1.0`` from ``"1"`` (YAML writes them differently)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return type(a) is type(b) and a == b


def is_index(elem: object) -> TypeGuard[int]:
    return isinstance(elem, int) and not isinstance(elem, bool)


def get(data: Any, path: DocPath) -> Any:
    """The value at ``path`` or ``_MISSING``."""
    cur = data
    for elem in path:
        if isinstance(cur, dict) and elem in cur and _key_match(cur, elem):
            cur = cur[elem]
        elif isinstance(cur, list) and is_index(elem) and 0 <= elem < len(cur):
            cur = cur[elem]
        else:
            return _MISSING
    return cur


def _key_match(mapping: dict, elem: Any) -> bool:
    # dict lookup treats 1 and True as one key; paths must not
    return any(type(k) is type(elem) and k == elem for k in mapping)


def nest(path: DocPath, value: Any) -> Any:
    """``{a: {b: value}}`` for ``path`` ``(a, b)``; list indices cannot be created."""
    for elem in reversed(path):
        if is_index(elem):
            raise FixError(f"cannot create list item {elem} of a list that does not exist")
        value = {elem: value}
    return value


def apply_op(doc: Any, op: FixOp) -> Any:
    """Apply one op to ``doc`` (mutated in place where possible); returns the new document."""
    if isinstance(op, RemovePath):
        if not op.path:
            raise FixError("cannot remove a whole document")
        parent = get(doc, op.path[:-1])
        last = op.path[-1]
        if isinstance(parent, list) and is_index(last) and 0 <= last < len(parent):
            del parent[last]
        elif isinstance(parent, dict) and last in parent and _key_match(parent, last):
            del parent[last]
        return doc
    if not isinstance(op, (AppendItem, SetValue)):
        raise FixError(f"unknown fix operation {type(op).__name__}")
    value = copy.deepcopy(op.value)
    if isinstance(op, AppendItem):
        current = get(doc, op.path)
        if isinstance(current, list):
            current.append(value)
            return doc
        if current is not _MISSING and current is not None:
            raise FixError(f"cannot append to {'/'.join(map(str, op.path))}: it is not a list")
        return _set(doc, op.path, [value])
    return _set(doc, op.path, value)


def _set(doc: Any, path: DocPath, value: Any) -> Any:
    if not path:
        return value
    cur = doc
    for i, elem in enumerate(path[:-1]):
        nxt = get(cur, (elem,))
        if nxt is _MISSING or nxt is None:
            if isinstance(cur, dict):
                cur[elem] = nest(path[i + 1 :], value)
                return doc
            if isinstance(cur, list) and is_index(elem) and 0 <= elem < len(cur):
                cur[elem] = nest(path[i + 1 :], value)
                return doc
            if isinstance(cur, list) and is_index(elem) and elem == len(cur):
                cur.append(nest(path[i + 1 :], value))
                return doc
            raise FixError(f"cannot set {'/'.join(map(str, path))}: {elem!r} does not exist")
        if not isinstance(nxt, (dict, list)):
            raise FixError(f"cannot set {'/'.join(map(str, path))}: {elem!r} is a scalar")
        cur = nxt
    last = path[-1]
    if isinstance(cur, dict):
        cur[last] = value
    elif isinstance(cur, list) and is_index(last) and 0 <= last < len(cur):
        cur[last] = value
    elif isinstance(cur, list) and is_index(last) and last == len(cur):
        cur.append(value)
    else:
        raise FixError(f"cannot set {'/'.join(map(str, path))}")
    return doc


def apply_ops(doc: Any, ops: tuple[FixOp, ...] | list[FixOp]) -> Any:
    """``doc`` after ``ops`` (on a deep copy)."""
    out = copy.deepcopy(doc)
    for op in ops:
        out = apply_op(out, op)
    return out
