"""EML809 deepspeed-args-mismatch: a DeepSpeed config disagrees with the launcher that names it
(batch sizes, accumulation, precision, world size), or is inconsistent on its own."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from eksmllint.analysis.deepspeed_configs import DSConfig, deepspeed_of, ds_config_for, run_ds_configs
from eksmllint.analysis.launch_sites import Site, all_sites, int_opt, script_int
from eksmllint.checks.launch._shared import step_gpus_per_node
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Applicability, Finding, Fix, FixOp, SetValue
from eksmllint.launch.deepspeed import DeepSpeedConfig
from eksmllint.launch.model import Option

_MICRO_ARGS = ("per_device_train_batch_size", "micro_batch_size", "train_micro_batch_size_per_gpu")
_GLOBAL_ARGS = ("global_batch_size",)


#: torchrun ``--nproc_per_node`` values that start one process per GPU of the node (``auto``: per
#: GPU when CUDA is available, which a node with GPUs has).
_EVERY_GPU = frozenset({"gpu", "auto"})


def world_size(site: Site) -> tuple[int | None, str]:
    """Processes of the launch when literally known (torchrun nnodes x nproc, deepspeed num_nodes x
    num_gpus, accelerate num_processes, srun python tasks) and, when the count comes from the Slurm
    allocation rather than the launcher's own numbers, how (``--nproc_per_node=gpu: 8 GPUs per node ...``)."""
    inv = site.inv
    if inv.launcher == "torchrun":
        nn, nn_opt = int_opt(inv, "nnodes")
        np_, np_opt = int_opt(inv, "nproc_per_node")
        if nn_opt is None and site.script is not None:
            nn = 1  # torchrun's default; in a pod an operator may inject PET_NNODES instead
        notes = []
        if nn and nn_opt is not None and nn_opt.value != nn_opt.resolved:
            sbatch = site.script.directive("nodes") if site.script is not None else None
            from_sbatch = sbatch is not None and "SLURM_" in (nn_opt.value or "")
            where = f" from #SBATCH {sbatch.raw}, line {sbatch.line}" if from_sbatch and sbatch is not None else ""
            notes.append(f"--nnodes={nn_opt.value} is {nn}{where}")
        if np_ is None and np_opt is not None and site.script is not None and np_opt.resolved in _EVERY_GPU:
            gpus, where = step_gpus_per_node(site.script, inv)
            if gpus:
                np_ = gpus
                notes.append(f"--nproc_per_node={np_opt.resolved}: {gpus} GPUs per node from {where}")
        return (nn * np_ if nn and np_ else None), "; ".join(notes)
    if inv.launcher == "deepspeed":
        nn, _ = int_opt(inv, "num_nodes")
        ng, _ = int_opt(inv, "num_gpus")
        return (nn * ng if nn and ng else None), ""
    if inv.launcher == "accelerate":
        return int_opt(inv, "num_processes")[0], ""
    if inv.launcher == "python" and site.script is not None and inv.under_srun is not None:
        tasks = site.script.tasks_per_node(inv.under_srun)
        nodes = inv.under_srun.int_option("nodes") if inv.under_srun.option("nodes") else site.script.nodes
        if not (tasks and nodes):
            return None, ""
        return tasks * nodes, f"srun starts {tasks} task{'s' if tasks != 1 else ''} per node on {nodes} nodes"
    return None, ""


def _hf_style(site: Site, ref: Option) -> bool:
    """Is the config read by the HF Trainer / accelerate, which fill in ``"auto"``? Plain
    DeepSpeed (``--deepspeed_config FILE``) rejects ``"auto"``, so the fix is only offered then."""
    return ref.name in ("deepspeed", "deepspeed_config_file") or site.inv.launcher == "accelerate"


@dataclass(frozen=True)
class Mismatch:
    """One disagreement: the config key the finding points at, the message (without the
    config's own location), and the keys the fix sets (dotted key, new value)."""

    key: str
    message: str
    sets: tuple[tuple[str, object], ...]
    arg: Option | None = None
    consequence: str = (
        "the HF Trainer stops with a mismatch error, and scripts that do not check silently "
        "train with the config's value"
    )


def _launcher_value(
    site: Site, names: tuple[str, ...], launcher_names: tuple[str, ...] = ()
) -> tuple[int | None, Option | None]:
    v, opt = script_int(site.inv, *names)
    if opt is None and launcher_names:
        v, opt = int_opt(site.inv, *launcher_names)
    return v, opt


def _flag_text(site: Site, opt: Option | None) -> str:
    if opt is None:
        return ""
    where = site.describe(opt.value_position or opt.position)
    shown = opt.raw
    if not shown.startswith("-") and opt.resolved is not None:  # written through a variable: what it holds
        shown = f"--{opt.name} {opt.resolved} (from {shown.split()[0]})"
    return shown + (f" at {where}" if where else "")


def deepspeed_mismatches(site: Site, ds: DSConfig) -> list[Mismatch]:
    """Every way the launcher's literal arguments disagree with the config's literal values."""
    cfg = ds.config
    out: list[Mismatch] = []
    ga_cfg = cfg.grad_accum()
    ga_arg, ga_opt = _launcher_value(site, ("gradient_accumulation_steps",), ("gradient_accumulation_steps",))
    if ga_cfg is not None and ga_arg is not None and ga_cfg != ga_arg:
        out.append(
            Mismatch(
                "gradient_accumulation_steps",
                f"gradient_accumulation_steps is {ga_cfg} but {site.where} passes {_flag_text(site, ga_opt)}",
                (("gradient_accumulation_steps", "auto"),),
                ga_opt,
            )
        )
    mb_cfg = cfg.micro_batch()
    mb_arg, mb_opt = _launcher_value(site, _MICRO_ARGS)
    if mb_cfg is not None and mb_arg is not None and mb_cfg != mb_arg:
        out.append(
            Mismatch(
                "train_micro_batch_size_per_gpu",
                f"train_micro_batch_size_per_gpu is {mb_cfg} but {site.where} passes {_flag_text(site, mb_opt)}",
                (("train_micro_batch_size_per_gpu", "auto"),),
                mb_opt,
            )
        )
    out.extend(_precision_mismatch(site, ds))
    tb = cfg.train_batch()
    if tb is None:
        return out
    gb_arg, gb_opt = _launcher_value(site, _GLOBAL_ARGS)
    if gb_arg is not None and gb_arg != tb:
        out.append(
            Mismatch(
                "train_batch_size",
                f"train_batch_size is {tb} but {site.where} passes {_flag_text(site, gb_opt)}",
                (("train_batch_size", "auto"),),
                gb_opt,
            )
        )
        return out
    # "auto" values are what HF / accelerate fill in from the launcher's arguments
    micro = mb_cfg if mb_cfg is not None else (mb_arg if cfg.train_micro_batch_size_per_gpu == "auto" else None)
    ga = ga_cfg if ga_cfg is not None else (ga_arg if cfg.gradient_accumulation_steps == "auto" else None)
    world, note = world_size(site)
    if micro and ga and world and tb != micro * ga * world:
        out.append(
            Mismatch(
                "train_batch_size",
                f"train_batch_size is {tb} but micro batch {micro} x gradient accumulation {ga} x "
                f"{world} processes{f' ({note})' if note else ''} of {site.where} = {micro * ga * world}",
                (("train_batch_size", "auto"),),
                consequence="DeepSpeed refuses to start: train_batch_size must equal micro batch x "
                "accumulation x world size",
            )
        )
    return out


def _enabled_literal(cfg: DeepSpeedConfig, name: str) -> tuple[bool | None, str | None]:
    """Literal ``enabled`` of a precision block (bf16 also via its alias bfloat16) and its key."""
    for key in ("bf16", "bfloat16") if name == "bf16" else (name,):
        block = getattr(cfg, key, None)
        if block is not None and isinstance(block.enabled, bool):
            return block.enabled, key
    return None, None


def _has_block(cfg: DeepSpeedConfig, name: str) -> bool:
    return any(getattr(cfg, k, None) is not None for k in (("bf16", "bfloat16") if name == "bf16" else (name,)))


def _precision_mismatch(site: Site, ds: DSConfig) -> list[Mismatch]:
    """The launcher trains in one half precision (``--bf16``, accelerate ``--mixed_precision``)
    and the config literally enables the other, or disables the one the launcher wants."""
    wanted = site.inv.precision() & {"fp16", "bf16"}
    if len(wanted) != 1:
        return []  # none (unknown trainer: silent) or both (EML403's business)
    want = next(iter(wanted))
    wrong: list[tuple[str, bool]] = []
    for name in ("fp16", "bf16"):
        have, key = _enabled_literal(ds.config, name)
        if have is not None and key is not None and have != (name == want):
            wrong.append((key, have))
    if not wrong:
        return []
    flag = (
        site.inv.script_flag(want)
        or site.inv.script_flag("precision")
        or site.inv.script_flag("mixed_precision")
        or site.inv.option("mixed_precision")
    )
    sets: list[tuple[str, object]] = [(f"{k}.enabled", "auto") for k, _ in wrong]
    if not _has_block(ds.config, want):
        sets.append((f"{want}.enabled", "auto"))
    text = ", ".join(f"{k}.enabled is {'true' if v else 'false'}" for k, v in wrong)
    arg = _flag_text(site, flag) if flag is not None else want
    return [Mismatch(f"{wrong[0][0]}.enabled", f"{text} but {site.where} trains in {want} ({arg})", tuple(sets), flag)]


def _config_only(ds: DSConfig) -> Mismatch | None:
    cfg = ds.config
    tb, mb, ga = cfg.train_batch(), cfg.micro_batch(), cfg.grad_accum()
    if tb and mb and ga and tb % (mb * ga):
        return Mismatch(
            "train_batch_size",
            f"train_batch_size {tb} is not a multiple of train_micro_batch_size_per_gpu {mb} x "
            f"gradient_accumulation_steps {ga} = {mb * ga}, so no world size satisfies "
            "train_batch_size = micro x accumulation x world size",
            (),
        )
    return None


def _text_set(text: str, cfg: DeepSpeedConfig, dotted: str, value: object, is_json: bool) -> str | None:
    """``text`` with the existing key ``dotted`` set to ``value``, edited on the key's line only
    (the block scalar of a ConfigMap keeps its layout); None when that is not possible."""
    line = cfg.line_of(dotted)
    if line is None:
        return None
    key = dotted.rsplit(".", 1)[-1]
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    src = lines[line - 1]
    if is_json:
        pat = re.compile(
            r'("' + re.escape(key) + r'"\s*:\s*)(true|false|null|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"[^"]*")'
        )
        new_value = json.dumps(value)
    else:
        pat = re.compile(r"(^\s*['\"]?" + re.escape(key) + r"['\"]?\s*:\s*)([^#\s]+)")
        new_value = str(value)
    if len(pat.findall(src)) != 1:
        return None
    lines[line - 1] = pat.sub(lambda m: m.group(1) + new_value, src, count=1)
    return "\n".join(lines)


def _fix_title(ds: DSConfig, m: Mismatch) -> str:
    return f'Set {", ".join(k for k, _ in m.sets)} to "auto" in {ds.name}'


def _configmap_fix(ds: DSConfig, m: Mismatch) -> Fix | None:
    """The ConfigMap value with each key set to "auto" by a one-line edit, verified by parsing."""
    key = ds.configmap_key.key
    is_json = not key.lower().endswith((".yaml", ".yml"))
    text, cfg = ds.text, ds.config
    for dotted, value in m.sets:
        new = _text_set(text, cfg, dotted, value, is_json)
        if new is None:
            return None
        parsed = deepspeed_of(new, key)
        if not isinstance(parsed, DeepSpeedConfig):
            return None
        text, cfg = new, parsed
    return Fix(_fix_title(ds, m), (SetValue(("data", key), text),), Applicability.SAFE)


def _file_fix(ds: DSConfig, m: Mismatch) -> Fix:
    ops: tuple[FixOp, ...] = tuple(SetValue(tuple(k.split(".")), v) for k, v in m.sets)
    return Fix(_fix_title(ds, m), ops, Applicability.SAFE)


def _report_ds(ctx, ds: DSConfig, m: Mismatch, head: str, tail: str, fixable: bool) -> Finding:
    """Report at the config key: its line in a JSON file; the ConfigMap data key otherwise (a
    line inside a block scalar is no document path), naming the line inside the value."""
    fix = None
    if fixable and m.sets:
        fix = _file_fix(ds, m) if ds.file is not None else _configmap_fix(ds, m)
    line = ds.key_line(m.key)
    if ds.file is not None:
        line = line or 1
        text = ds.file.lines[line - 1] if 0 < line <= len(ds.file.lines) else ""
        leaf = '"' + m.key.rsplit(".", 1)[-1] + '"'
        col = text.find(leaf) + 1 if leaf in text else 1
        return ctx.report_file(ds.file, line, col, head + tail, fix=fix)
    mounted = ds.configmap_key
    at = f" (line {line} of key {mounted.key!r})" if line is not None else f" (key {mounted.key!r})"
    return ctx.report(mounted.configmap, ("data", mounted.key), head + at + tail, fix=fix)


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    grouped: dict[tuple, list[tuple[Site, DSConfig, Mismatch, bool]]] = {}
    configs: dict[tuple, DSConfig] = {}
    for site in all_sites(run):
        ref = site.inv.deepspeed_config()
        if ref is None:
            continue
        ds = ds_config_for(run, site, ref)
        if ds is None:
            continue
        configs.setdefault(ds.ident, ds)
        for m in deepspeed_mismatches(site, ds):
            key = (ds.ident, m.key, m.message.split(" but ", 1)[0], m.arg.resolved if m.arg else None)
            grouped.setdefault(key, []).append((site, ds, m, _hf_style(site, ref)))
    for entries in grouped.values():
        site, ds, m, _ = entries[0]
        more = f" (+{len(entries) - 1} more launcher{'s' if len(entries) > 2 else ''})" if len(entries) > 1 else ""
        named = site.inv.deepspeed_config()
        path = named.resolved if named is not None else None
        via = ""
        if ds.how == "basename":
            via = f" (--deepspeed {path} matched by file name)"
        elif ds.how == "only":
            via = f" (--deepspeed {path} matched to the only DeepSpeed config beside the script)"
        yield _report_ds(
            ctx,
            ds,
            m,
            "DeepSpeed config",
            f" disagrees with its launcher{via}: {m.message}{more}; {m.consequence}",
            all(e[3] for e in entries),
        )
    for ds in run_ds_configs(run):
        configs.setdefault(ds.ident, ds)
    for ds in configs.values():
        alone = _config_only(ds)
        if alone is not None:
            yield _report_ds(
                ctx,
                ds,
                alone,
                "DeepSpeed config",
                f" is inconsistent: {alone.message}; DeepSpeed refuses to start",
                False,
            )
