"""EML005 launch-file-invalid: a Slurm batch script or a DeepSpeed config of the run cannot be read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from eksmllint.analysis.deepspeed_configs import (
    configmap_ds_candidates,
    deepspeed_of,
    ds_named,
    first_doc,
    json_files,
    referenced_json,
)
from eksmllint.analysis.launch_sites import slurm_files
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Finding
from eksmllint.launch.deepspeed import DeepSpeedConfig, looks_like_deepspeed
from eksmllint.launch.slurm import script_lines
from eksmllint.resource import SourceFile


@lru_cache(maxsize=64)
def loader_rejects(path: str, text: str, kind: str) -> bool:
    """Does the loader report this file as EML001 (so EML005 must not report it again)?
    Decided by running the loader's own parser on a fresh copy of the file."""
    from eksmllint.loader import parse_source

    _, problems = parse_source(SourceFile(path, text, kind))
    return bool(problems)


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    for src, script in slurm_files(run):
        for line, msg in script.errors:
            yield ctx.report_file(src, line, _error_col(src, line, msg), f"Slurm batch script: {msg}")
    files = json_files(run)
    referenced = referenced_json(run) if files else {}  # every launcher of the run: only for JSON files
    for f in files:
        named = ds_named(f.path) or f.path in referenced or looks_like_deepspeed(first_doc(f))
        if not named:
            continue
        cfg = deepspeed_of(f.text, f.path)
        if isinstance(cfg, DeepSpeedConfig) or loader_rejects(f.path, f.text, f.kind):
            continue
        why = f"Named by --deepspeed {referenced[f.path]}." if f.path in referenced else None
        yield ctx.report_file(
            f, cfg.line or 1, cfg.col or 1, f"DeepSpeed config cannot be loaded: {cfg.message}", detail=why
        )
    for cm, key, text, _loose in configmap_ds_candidates(run):
        cfg = deepspeed_of(text, key)
        if isinstance(cfg, DeepSpeedConfig):
            continue
        at = f" (line {cfg.line} of the value)" if cfg.line else ""
        yield ctx.report(
            cm, ("data", key), f"DeepSpeed config in ConfigMap key {key!r} cannot be loaded{at}: {cfg.message}"
        )


def _error_col(src: SourceFile, line: int, msg: str) -> int:
    """Column of the text an error message quotes ('--nodse'), else of the line's first word."""
    lines = script_lines(src.text) if src.text else ()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    for quoted in re.findall(r"'([^']+)'", msg):
        k = text.find(quoted)
        if k >= 0:
            return k + 1
    return len(text) - len(text.lstrip()) + 1
