"""EML403 precision-conflict: fp16 and bf16 enabled at once, by one training container (its launch
flags and env, or one DeepSpeed config it reads) or by a DeepSpeed config on its own (a JSON file or
a ConfigMap key, whether or not a launcher of the run names it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import configmap_refs, find_configmap
from eksmllint.checks.precision._shared import analyse, report, texts_of, who
from eksmllint.checks.precision._uses import BF16, DS_CONFIG, FP16, Use
from eksmllint.core.finding import DocPath, Finding
from eksmllint.launch.deepspeed import DeepSpeedConfig, parse_deepspeed
from eksmllint.resource import Resource, SourceFile
from eksmllint.workload import PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext

#: DeepSpeed's own words when both are enabled (deepspeed/runtime/config.py).
DEEPSPEED_REFUSES = "'bfloat16 and fp16 modes cannot be simultaneously enabled'"


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    reported: set[tuple[object, DocPath]] = set()  # DeepSpeed configs already reported through a container
    for t in run.templates:
        # context objects (--context, the webhook's cluster view) are only read: their findings are dropped
        if t.is_training and ctx.judges(t) and not t.resource.doc.file.context_only:
            yield from _container_conflicts(ctx, t, reported)
    yield from _configmap_conflicts(ctx, run, reported)
    for f in run.files:
        if f.kind == "json" and f.text and not f.context_only:
            yield from _file_conflict(ctx, f)


def _container_conflicts(ctx: RuleContext, t: PodTemplate, reported: set[tuple[object, DocPath]]) -> Iterator[Finding]:
    for c in t.containers:
        p = analyse(ctx.run, c)
        launch = [u for u in p.requested() if u.origin != DS_CONFIG]
        groups = [launch]
        by_config: dict[tuple, list[Use]] = {}
        for u in p.uses:
            if u.origin == DS_CONFIG:
                by_config.setdefault((u.home.key, u.path), []).append(u)
        groups += list(by_config.values())
        for group in groups:
            fp16, bf16 = p.of(FP16, group), p.of(BF16, group)
            if not fp16 or not bf16:
                continue
            reported.update((u.home.key, u.path) for u in group if u.origin == DS_CONFIG)
            first, second = (fp16, bf16) if group.index(fp16[0]) <= group.index(bf16[0]) else (bf16, fp16)
            yield report(
                ctx,
                second[0],
                f"{who(c, second[0])} enables both fp16 and bf16",
                detail=f"fp16: {texts_of(fp16)}; bf16: {texts_of(bf16)}. Only one can take effect (HF Trainer and "
                "DeepSpeed reject the combination, other launchers silently pick one).",
                related=first + second[1:],
            )


# --- DeepSpeed configs on their own ------------------------------------------------------------


def _both_enabled(text: str, name: str) -> DeepSpeedConfig | None:
    """The DeepSpeed config in ``text`` when it enables fp16 and bf16 (``bfloat16``) together.
    A text DeepSpeed cannot load is EML005's business, and one without both blocks is not parsed."""
    if "fp16" not in text or "enabled" not in text or ("bf16" not in text and "bfloat16" not in text):
        return None
    cfg = parse_deepspeed(text, name)
    return cfg if isinstance(cfg, DeepSpeedConfig) and {FP16, BF16} <= cfg.precision() else None


def _lines(cfg: DeepSpeedConfig) -> tuple[int | None, int | None]:
    """Lines of ``fp16.enabled`` and of ``bf16.enabled`` (or ``bfloat16.enabled``)."""
    return cfg.line_of("fp16.enabled"), cfg.line_of("bf16.enabled") or cfg.line_of("bfloat16.enabled")


def _why(fp16_line: int | None, bf16_line: int | None, where: str) -> str:
    """The detail of a DeepSpeed config that enables both (the message says that much)."""
    at = (
        f"fp16.enabled at line {fp16_line}, bf16.enabled at line {bf16_line}{where}. "
        if fp16_line and bf16_line
        else ""
    )
    return (
        f"{at}DeepSpeed refuses to start with {DEEPSPEED_REFUSES}, whichever launcher reads it; keep the one the "
        "accelerators and the recipe call for."
    )


def _judged_configmaps(ctx: RuleContext, run: LintRun) -> Iterator[Resource]:
    """ConfigMaps of the run, except those mounted only by pods this rule does not judge (a serving
    pod's DeepSpeed inference reads no fp16/bf16 training blocks)."""
    mounted_by: dict[int, list[PodTemplate]] = {}
    for t in run.templates:
        for _, v in t.volumes:
            for ref in configmap_refs(v):
                cm = find_configmap(run, ref.get("name"), t.resource.namespace)
                if cm is not None:
                    mounted_by.setdefault(id(cm), []).append(t)
    for cm in run.of_kind("ConfigMap"):
        if cm.doc.file.context_only:
            continue
        users = mounted_by.get(id(cm))
        if users is None or any(t.is_training and ctx.judges(t) for t in users):
            yield cm


def _configmap_conflicts(ctx: RuleContext, run: LintRun, reported: set[tuple[object, DocPath]]) -> Iterator[Finding]:
    for cm in _judged_configmaps(ctx, run):
        data = cm.get(("data",))
        if not isinstance(data, dict):
            continue
        for key, text in data.items():
            path: DocPath = ("data", key)
            if not isinstance(key, str) or not isinstance(text, str) or (cm.key, path) in reported:
                continue
            cfg = _both_enabled(text, key)
            if cfg is not None:
                fp16_line, bf16_line = _lines(cfg)
                yield ctx.report(
                    cm,
                    path,
                    f"the DeepSpeed config in ConfigMap {cm.name} key {key!r} enables both fp16 and bf16",
                    detail=_why(fp16_line, bf16_line, " of the value"),
                )


def _file_conflict(ctx: RuleContext, f: SourceFile) -> Iterator[Finding]:
    assert f.text is not None
    cfg = _both_enabled(f.text, f.path)
    if cfg is None:
        return
    fp16_line, bf16_line = _lines(cfg)
    line = max(fp16_line or 1, bf16_line or 1)
    text = f.lines[line - 1] if 0 < line <= len(f.lines) else ""
    col = len(text) - len(text.lstrip()) + 1
    yield ctx.report_file(
        f, line, col, "this DeepSpeed config enables both fp16 and bf16", detail=_why(fp16_line, bf16_line, "")
    )
