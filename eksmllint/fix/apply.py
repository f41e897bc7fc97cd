"""Apply fixes to manifest text, and choose which fixes of one pass can be applied together.

Every op is applied on freshly parsed text (so offsets never go stale) by splicing only the node
it names. Each applied fix is then *verified*: the edited text must load, keep its number of
documents, leave the other documents equal, and turn the edited document into exactly what
:mod:`eksmllint.fix.model` predicts. A fix that fails any check is refused and the text is left
as it was, so a splicing mistake can cost a fix but never corrupt a manifest.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from itertools import pairwise

from yaml.nodes import MappingNode, SequenceNode

from eksmllint.core.finding import (
    AppendItem,
    DocOp,
    DocPath,
    Finding,
    Fix,
    FixOp,
    RemovePath,
    ReplaceText,
    SetValue,
)
from eksmllint.fix import model
from eksmllint.fix.render import Style, detect_style
from eksmllint.fix.spans import FixError, Stream, is_null, locate, parse_stream
from eksmllint.fix.splice import append_item, insert_key, remove, replace_value
from eksmllint.yamlpos import YAMLLoadError, _convert, load_yaml_stream, to_plain

MAX_STEPS = 10_000  # primitive edits per fix (an op on a large value expands into several)


def _fmt(path: DocPath) -> str:
    return "/".join(str(p) for p in path) or "<document>"


def _node_value(node) -> object:
    try:
        return to_plain(_convert(node))
    except (YAMLLoadError, RecursionError) as err:
        raise FixError(f"cannot read the current value: {err}") from None


def _expand_set(path: DocPath, node, current, value) -> list[FixOp] | None:
    """Finer ops that turn ``current`` into ``value`` while keeping the comments and layout of
    the parts that stay (None: replace the node as a whole)."""
    if isinstance(node, MappingNode) and isinstance(current, dict) and isinstance(value, dict) and current and value:
        ops: list[FixOp] = [
            SetValue(path + (k,), v)
            for k, v in value.items()
            if model.get(current, (k,)) is model._MISSING or not model.same(current[k], v)
        ]
        ops += [RemovePath(path + (k,)) for k in current if model.get(value, (k,)) is model._MISSING]
        return ops
    if isinstance(node, SequenceNode) and isinstance(current, list) and isinstance(value, list) and current and value:
        n = min(len(current), len(value))
        if len(current) == len(value):
            return [SetValue(path + (i,), value[i]) for i in range(n) if not model.same(current[i], value[i])]
        if len(value) > len(current) and all(model.same(current[i], value[i]) for i in range(n)):
            return [AppendItem(path, v) for v in value[n:]]
        if len(value) < len(current):  # the new list keeps some items in order: remove the others
            kept: set[int] = set()
            j = 0
            for i, item in enumerate(current):
                if j < len(value) and model.same(item, value[j]):
                    kept.add(i)
                    j += 1
            if j == len(value):
                return [RemovePath(path + (i,)) for i in range(len(current) - 1, -1, -1) if i not in kept]
    return None


def _apply_one(
    st: Stream, doc_index: int, op: DocOp, json_file: bool, base_style: Style | None = None
) -> str | list[FixOp]:
    """One op on parsed text: the new text, or finer ops to run instead."""
    style = detect_style(st, json_file, base_style)
    steps, rest = locate(st, doc_index, op.path)
    target = steps[-1]
    if isinstance(op, RemovePath):
        if rest:
            return st.text  # already absent
        return remove(st, steps, style)
    if isinstance(op, AppendItem):
        if rest:
            return [SetValue(op.path, [op.value])]
        if isinstance(target.node, SequenceNode):
            return append_item(st, target, op.value, style)
        if is_null(target.node):
            return replace_value(st, target, [op.value], style)
        raise FixError(f"cannot append to {_fmt(op.path)}: it is not a list")
    if not isinstance(op, SetValue):
        raise FixError(f"unknown fix operation {type(op).__name__}")
    if not rest:
        current = _node_value(target.node)
        if model.same(current, op.value):
            return st.text
        finer = _expand_set(op.path, target.node, current, op.value)
        if finer is not None:
            return finer
        return replace_value(st, target, op.value, style)
    first, nested = rest[0], model.nest(rest[1:], op.value)
    node = target.node
    if isinstance(node, MappingNode):
        return insert_key(st, target, first, nested, style)
    if isinstance(node, SequenceNode):
        if model.is_index(first) and first == len(node.value):
            return append_item(st, target, nested, style)
        raise FixError(f"cannot set {_fmt(op.path)}: list index {first!r} is out of range")
    if is_null(node) and not model.is_index(first):
        return replace_value(st, target, {first: nested}, style)
    raise FixError(f"cannot set {_fmt(op.path)}: {_fmt(op.path[: len(op.path) - len(rest)])} is a scalar")


def apply_ops_text(
    text: str, doc_index: int, ops: Iterable[FixOp], *, json_file: bool = False, base_style: Style | None = None
) -> str:
    """``text`` with ``ops`` (full document paths) spliced in; unverified (see :func:`apply_fix`)."""
    queue: deque[FixOp] = deque(ops)
    steps = 0
    while queue:
        steps += 1
        if steps > MAX_STEPS:
            raise FixError("the fix expands into too many edits")
        op = queue.popleft()
        if isinstance(op, ReplaceText):
            raise FixError(_TEXT_EDIT)
        result = _apply_one(parse_stream(text), doc_index, op, json_file, base_style)
        if isinstance(result, list):
            queue.extendleft(reversed(result))
        else:
            text = result
    return text


def _load(text: str, what: str) -> list:
    docs, err = load_yaml_stream(text)
    if err is not None:
        where = f" (line {err.line})" if err.line else ""
        raise FixError(f"{what} is not valid YAML: {err.message}{where}")
    return [to_plain(d.data) for d in docs]


_TEXT_EDIT = "a text edit has no document path (it applies to scripts only)"


def full_ops(fix: Fix, base_path: DocPath = ()) -> tuple[FixOp, ...]:
    """The fix's ops with paths made relative to the document (``kind: List`` items)."""
    if not base_path:
        return fix.ops
    out: list[FixOp] = []
    for op in fix.ops:
        if isinstance(op, ReplaceText):
            raise FixError(_TEXT_EDIT)
        if isinstance(op, RemovePath):
            out.append(RemovePath(tuple(base_path) + tuple(op.path)))
        else:
            out.append(type(op)(tuple(base_path) + tuple(op.path), op.value))
    return tuple(out)


def apply_fix(
    text: str,
    fix: Fix,
    doc_index: int = 0,
    base_path: DocPath = (),
    *,
    json_file: bool = False,
    base_style: Style | None = None,
) -> str:
    """``text`` with ``fix`` applied to document ``doc_index``, verified; raises :class:`FixError`.
    ``base_style``: layout to use where ``text`` itself shows none (see :func:`detect_style`)."""
    ops = full_ops(fix, base_path)
    before = _load(text, "the file")
    if not 0 <= doc_index < len(before):
        raise FixError(f"document {doc_index} does not exist")
    expected = model.apply_ops(before[doc_index], ops)
    new_text = apply_ops_text(text, doc_index, ops, json_file=json_file, base_style=base_style)
    after = _load(new_text, "the fixed file")
    if len(after) != len(before):
        raise FixError("the edit changed the number of documents")
    for i, (b, a) in enumerate(zip(before, after)):
        want = expected if i == doc_index else b
        if not model.same(a, want):
            raise FixError("the edited text does not load as the fix intends (refused, file unchanged)")
    return new_text


def apply_findings(
    text: str, findings: Iterable[Finding], *, json_file: bool = False
) -> tuple[str, list[Finding], list[tuple[Finding, str]]]:
    """Apply the fixes of ``findings`` (chosen not to conflict): (new text, applied, refused).

    Each document is edited as its own slice of the stream, so a pass over a long Helm render
    costs one parse of the stream instead of several per fix; the result is checked as a whole
    and, should that check fail, the slow path (every fix on the full text) is taken instead.
    """
    findings = list(findings)
    try:
        st = parse_stream(text)
        before = _load(text, "the file")
    except FixError as err:
        return text, [], [(f, str(err)) for f in findings]
    file_style = detect_style(st, json_file)
    spans = [(st.line_start(d.start_mark.index), min(len(text), st.line_end(st.content_end(d)) + 1)) for d in st.docs]
    separate = len(spans) == len(before) and all(a[1] <= b[0] for a, b in pairwise(spans))
    if not separate:
        return _apply_each(text, findings, json_file, file_style)
    chunks: dict[int, str] = {}
    applied: list[Finding] = []
    failed: list[tuple[Finding, str]] = []
    for f in findings:
        d = f.location.doc_index
        if not 0 <= d < len(spans):
            failed.append((f, f"document {d} does not exist"))
            continue
        chunk = chunks.get(d, text[spans[d][0] : spans[d][1]])
        if f.fix is None:
            failed.append((f, "the finding has no fix"))
            continue
        try:
            new = apply_fix(chunk, f.fix, 0, getattr(f, "base_path", ()), json_file=json_file, base_style=file_style)
            if new == chunk:
                raise FixError(NO_CHANGE)
        except FixError as err:
            failed.append((f, str(err)))
            continue
        chunks[d] = new
        applied.append(f)
    new_text = text
    for d in sorted(chunks, key=lambda i: spans[i][0], reverse=True):
        a, b = spans[d]
        new_text = new_text[:a] + chunks[d] + new_text[b:]
    try:
        after = _load(new_text, "the fixed file")
        ok = len(after) == len(before) and all(
            model.same(a, _load(chunks[i], "a fixed document")[0] if i in chunks else b)
            for i, (b, a) in enumerate(zip(before, after))
        )
    except FixError:
        ok = False
    if not ok:
        return _apply_each(text, findings, json_file, file_style)
    return new_text, applied, failed


NO_CHANGE = "the fix changes nothing, but the rule still reports the problem"


def _apply_each(
    text: str, findings: list[Finding], json_file: bool, style: Style | None
) -> tuple[str, list[Finding], list[tuple[Finding, str]]]:
    applied: list[Finding] = []
    failed: list[tuple[Finding, str]] = []
    for f in findings:
        if f.fix is None:
            failed.append((f, "the finding has no fix"))
            continue
        try:
            new = apply_fix(
                text, f.fix, f.location.doc_index, getattr(f, "base_path", ()), json_file=json_file, base_style=style
            )
            if new == text:
                raise FixError(NO_CHANGE)
        except FixError as err:
            failed.append((f, str(err)))
            continue
        text = new
        applied.append(f)
    return text, applied, failed


def finding_ops(finding: Finding) -> tuple[FixOp, ...]:
    return full_ops(finding.fix, getattr(finding, "base_path", ())) if finding.fix else ()


# -- choosing fixes for one pass ---------------------------------------------------------------
def _claims(finding: Finding) -> list[tuple[int, DocPath]]:
    """Paths a fix touches; removing a list item claims the whole list (later indices shift)."""
    doc = finding.location.doc_index
    out = []
    for op in finding_ops(finding):
        if isinstance(op, ReplaceText):  # script edits: no document path, applied by fix.text
            continue
        path = tuple(op.path)
        if isinstance(op, RemovePath) and path and model.is_index(path[-1]):
            path = path[:-1]
        out.append((doc, path))
    return out


def _overlap(a: tuple[int, DocPath], b: tuple[int, DocPath]) -> bool:
    if a[0] != b[0]:
        return False
    n = min(len(a[1]), len(b[1]))
    return all(model.same(x, y) for x, y in zip(a[1][:n], b[1][:n]))


def _path_key(path: DocPath) -> tuple:
    return tuple((0, p, "") if model.is_index(p) else (1, 0, str(p)) for p in path)


def fix_order(finding: Finding) -> tuple:
    """Deterministic priority: lower code first, then document, then op paths."""
    return (
        finding.code,
        finding.location.doc_index,
        tuple(_path_key(p) for _, p in _claims(finding)),
        finding.location.line,
        finding.message,
    )


def select_fixes(findings: Iterable[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(chosen, deferred): fixes whose op paths are equal or one a prefix of another conflict;
    the first in :func:`fix_order` wins and the others wait for the next pass."""
    chosen: list[Finding] = []
    deferred: list[Finding] = []
    taken: list[tuple[int, DocPath]] = []
    for f in sorted(findings, key=fix_order):
        claims = _claims(f)
        if any(_overlap(c, t) for c in claims for t in taken):
            deferred.append(f)
            continue
        chosen.append(f)
        taken.extend(claims)
    return chosen, deferred
