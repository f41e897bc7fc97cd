"""Lower a :class:`~eksmllint.core.finding.Fix` to an RFC 6902 JSON Patch (the webhook's /mutate).

The patch means exactly what :mod:`eksmllint.fix.model` says the ops mean; it is computed
against the object being admitted, because "append to a list" and "set a key under a missing
parent" need different patch ops depending on what already exists. Paths are RFC 6901 JSON
Pointers (``~`` is written ``~0`` and ``/`` is written ``~1``, so ``nvidia.com/gpu`` becomes
``nvidia.com~1gpu``).
"""

from __future__ import annotations

import copy
from typing import Any

from eksmllint.core.finding import AppendItem, DocPath, Fix, RemovePath, ReplaceText, SetValue
from eksmllint.fix import model
from eksmllint.fix.spans import FixError


def pointer(path: DocPath) -> str:
    """RFC 6901 JSON Pointer for ``path`` (``""`` is the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def to_json_patch(fix: Fix, document: dict, base_path: DocPath = ()) -> list[dict]:
    """The JSON Patch that applies ``fix`` to ``document`` (not modified). Raises
    :class:`~eksmllint.fix.spans.FixError` when an op cannot apply (e.g. a path through a scalar)."""
    doc: Any = copy.deepcopy(document)
    patch: list[dict] = []
    for op in fix.ops:
        if isinstance(op, ReplaceText):  # a text edit of a script: no document path to patch
            raise FixError("a text edit has no JSON Patch form")
        path = tuple(base_path) + tuple(op.path)
        patch.extend(_lower(doc, op, path))
        shifted = RemovePath(path) if isinstance(op, RemovePath) else type(op)(path, op.value)
        doc = model.apply_op(doc, shifted)
    return patch


def _check_keys(doc: Any, path: DocPath) -> None:
    """JSON objects have string keys: an integer path element must index a list."""
    cur = doc
    for elem in path:
        if isinstance(cur, dict) and model.is_index(elem):
            raise FixError(f"path element {elem} indexes a list, but {pointer(path)} goes through an object")
        nxt = model.get(cur, (elem,))
        if nxt is model._MISSING:
            return
        cur = nxt


def _lower(doc: Any, op, path: DocPath) -> list[dict]:
    _check_keys(doc, path)
    if isinstance(op, RemovePath):
        if not path:
            raise FixError("cannot remove a whole document")
        return [] if model.get(doc, path) is model._MISSING else [{"op": "remove", "path": pointer(path)}]
    value = copy.deepcopy(op.value)
    if isinstance(op, AppendItem):
        current = model.get(doc, path)
        if isinstance(current, list):
            return [{"op": "add", "path": pointer(path) + "/-", "value": value}]
        if current is not model._MISSING and current is not None:
            raise FixError(f"cannot append to {pointer(path)}: it is not a list")
        return _set(doc, path, [value])
    if isinstance(op, SetValue):
        return _set(doc, path, value)
    raise FixError(f"unknown fix operation {type(op).__name__}")


def _set(doc: Any, path: DocPath, value: Any) -> list[dict]:
    """add/replace for ``path``; the first missing (or null) parent gets the nested rest."""
    if not path:
        return [{"op": "replace", "path": "", "value": value}]
    cur = doc
    for i, elem in enumerate(path):
        last = i == len(path) - 1
        nxt = model.get(cur, (elem,))
        here = path[: i + 1]
        if nxt is model._MISSING:
            rest = model.nest(path[i + 1 :], value)
            if isinstance(cur, list):
                if not (model.is_index(elem) and elem == len(cur)):
                    raise FixError(f"cannot set {pointer(path)}: index {elem!r} is out of range")
                return [{"op": "add", "path": pointer(path[:i]) + "/-", "value": rest}]
            if not isinstance(cur, dict):
                raise FixError(f"cannot set {pointer(path)}: {pointer(path[:i])} is a scalar")
            return [{"op": "add", "path": pointer(here), "value": rest}]
        if last or nxt is None:
            new = value if last else model.nest(path[i + 1 :], value)
            if last and model.same(nxt, new):
                return []
            return [{"op": "replace", "path": pointer(here), "value": new}]
        if not isinstance(nxt, (dict, list)):
            raise FixError(f"cannot set {pointer(path)}: {pointer(here)} is a scalar")
        cur = nxt
    return []  # pragma: no cover - the loop always returns


def apply_json_patch(document: Any, patch: list[dict]) -> Any:
    """A small RFC 6902 applier for add/replace/remove (tests and dry runs; not a full library)."""
    doc = copy.deepcopy(document)
    for op in patch:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        if not parts:
            if op["op"] == "remove":
                raise FixError("cannot remove the whole document")
            doc = copy.deepcopy(op["value"])
            continue
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = parts[-1]
        if isinstance(parent, list):
            if op["op"] == "add":
                parent.insert(len(parent) if last == "-" else int(last), copy.deepcopy(op["value"]))
            elif op["op"] == "replace":
                parent[int(last)] = copy.deepcopy(op["value"])
            else:
                del parent[int(last)]
        else:
            if op["op"] == "remove":
                del parent[last]
            elif op["op"] == "replace" and last not in parent:
                raise FixError(f"replace of a missing member {op['path']}")
            else:
                parent[last] = copy.deepcopy(op["value"])
    return doc
