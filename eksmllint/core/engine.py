"""Run the rules over a lint run: dispatch by target, isolate crashes, suppress, sort."""

from __future__ import annotations

import gc
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from eksmllint.config import Config, ConfigError
from eksmllint.core import suppression
from eksmllint.core.context import LintRun, RuleContext, RunSettings
from eksmllint.core.finding import Finding, Location, Severity
from eksmllint.core.registry import Registry, default_registry
from eksmllint.core.rule import Rule
from eksmllint.loader import LoadProblem, LoadResult, Skipped, gc_paused, load
from eksmllint.resource import Resource, SourceFile
from eksmllint.workload import workload_of

INTERNAL_ERROR = ("EML000", "internal-error")
YAML_INVALID = ("EML001", "yaml-invalid")
#: Codes the loader reports (LoadProblem.code): slug and default severity.
_LOADER_CODES = {
    "EML000": (INTERNAL_ERROR[1], Severity.ERROR),
    "EML001": (YAML_INVALID[1], Severity.ERROR),
    "EML005": ("launch-file-invalid", Severity.ERROR),
    "EML007": ("template-source", Severity.INFO),
}


@dataclass
class LintResult:
    findings: list[Finding]
    run: LintRun
    rules: list[Rule] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # discovered, not linted: file and reason

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed_by is None]

    @property
    def suppressed(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed_by is not None]


def select_rules(registry: Registry, cfg: Config) -> list[Rule]:
    """The enabled rules, with config options and severity overrides applied."""

    def expand(selectors: Iterable[str], what: str) -> set[str]:
        codes: set[str] = set()
        for sel in selectors:
            found = registry.select(sel)
            if not found:
                raise ConfigError(f"{cfg.source or 'command line'}: {what}: no such rule {sel!r}")
            codes.update(r.code for r in found)
        return codes

    chosen = expand(cfg.select, "select") | expand(cfg.extend_select, "extend-select")
    chosen -= expand(cfg.ignore, "ignore")
    for name in list(cfg.severity) + list(cfg.rules):
        if registry.get(name) is None:
            raise ConfigError(f"{cfg.source or 'command line'}: no such rule {name!r}")
    rules = []
    for rule in registry:
        if rule.code not in chosen and not rule.spec.mandatory:
            continue
        opts = cfg.rules.get(rule.code) or cfg.rules.get(rule.slug)
        if opts:
            unknown = set(opts) - set(rule.spec.options)
            if unknown:
                raise ConfigError(f"{cfg.source or 'config'}: rules.{rule.code}: unknown option(s) {sorted(unknown)}")
            rule = rule.with_options(opts)
        rules.append(rule)
    return rules


def target_items(rule: Rule, run: LintRun) -> Sequence[object]:
    """What ``rule`` is called on, by its ``target``: every template, workload, resource (of its
    ``kinds``), file, or the run once."""
    target = rule.spec.target
    if target == "templates":
        return run.templates
    if target == "workloads":
        return run.workloads
    if target == "resources":
        kinds = rule.spec.kinds
        return run.resources if not kinds else [r for k in kinds for r in run.by_kind.get(k, [])]
    if target == "files":
        return run.files
    return (run,)


def subject_resource(target: object) -> Resource | None:
    """The resource a target belongs to (None for a file or the run): where a crash is reported."""
    return target if isinstance(target, Resource) else getattr(target, "resource", None)


def targets(rule: Rule, run: LintRun) -> Iterator[tuple[object, Resource | None]]:
    """(target, its resource) pairs of :func:`target_items`."""
    return ((t, subject_resource(t)) for t in target_items(rule, run))


def run_rules(run: LintRun, rules: list[Rule]) -> list[Finding]:
    findings: list[Finding] = []
    extend = findings.extend  # the hot loop: rules x templates (hundreds of thousands of calls)
    for rule in rules:
        ctx = RuleContext(rule, run)
        check = rule.check
        for target in target_items(rule, run):
            try:
                extend(check(ctx, target) or ())
            except Exception as exc:  # a broken rule is a finding, never a crashed run
                findings.append(internal_error(rule, subject_resource(target), target, exc))
    return findings


def internal_error(rule: Rule | None, resource: Resource | None, target: object, exc: Exception) -> Finding:
    """EML000 for a rule that raised (``rule`` None: building the workload view did): names the
    rule, the subject and the line of the check."""
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    subject = resource.ref.display() if resource else getattr(target, "path", "the run")
    who = f"rule {rule.code} ({rule.slug})" if rule else "the workload view"
    message = f"{who} crashed on {subject}: {type(exc).__name__}: {exc}{where}"
    loc = resource.location(()) if resource else Location(getattr(target, "path", "<run>"))
    return Finding(*INTERNAL_ERROR, Severity.ERROR, message, loc, resource.ref if resource else None)


def build_workloads(run: LintRun) -> list[Finding]:
    """Build the run's workload views one resource at a time, before any rule reads them: a
    resource whose view cannot be built becomes an EML000 on that resource and is left out of
    the workload rules, instead of failing every rule (or the whole run) that reads the views."""
    workloads, crashes = [], []
    for resource in run.resources:
        try:
            workload = workload_of(resource)
        except Exception as exc:
            crashes.append(internal_error(None, resource, resource, exc))
            continue
        if workload is not None:
            workloads.append(workload)
    run.workloads = workloads  # what LintRun.workloads would compute, minus the crashed ones
    return crashes


def _load_problem(p: LoadProblem) -> Finding:
    slug, severity = _LOADER_CODES.get(p.code, ("launch-file-invalid", Severity.ERROR))
    return Finding(p.code, slug, severity, p.message, Location(p.file, p.line, p.col))


def lint_loaded(
    loaded: LoadResult,
    cfg: Config,
    registry: Registry | None = None,
    context: LoadResult | None = None,
    mode: str = "cli",
    rule_jobs: int = 1,
) -> LintResult:
    """Run the enabled rules over what was loaded. ``rule_jobs`` > 1 spreads the rules over
    forked processes for large runs (:func:`eksmllint.parallel.run_rules_forked`); the findings
    are the same."""
    registry = registry or default_registry()
    rules = select_rules(registry, cfg)
    files = list(loaded.files)
    resources = list(loaded.resources)
    if context is not None:  # context files feed the graph; their own findings are dropped
        known = {f.path for f in files}
        for f in context.files:
            if f.path not in known:
                f.context_only = True
                files.append(f)
        resources += [r for r in context.resources if r.doc.file.context_only]
    settings = RunSettings(cfg.kubernetes_version, mode, cfg.reference_kinds, cfg.platform)
    run = LintRun(resources, files, settings)
    enabled = {r.code for r in rules}
    findings = [_load_problem(p) for p in loaded.problems if p.code in enabled] + build_workloads(run)
    if rule_jobs > 1:
        from eksmllint.parallel import run_rules_forked

        findings += run_rules_forked(run, rules, rule_jobs, run_rules)
    else:
        findings += run_rules(run, rules)
    context_paths = {f.path for f in files if f.context_only}
    findings = [f for f in findings if f.location.file not in context_paths]
    overrides = {}
    for name, sev in cfg.severity.items():
        rule = registry.get(name)
        if rule:
            overrides[rule.code] = Severity.parse(sev)
    if overrides:
        findings = [f.with_(severity=overrides[f.code]) if f.code in overrides else f for f in findings]
    scope = suppression.collect(
        registry,
        [r for r in resources if not r.doc.file.context_only],
        [f for f in files if not f.context_only],
        {k: list(v) for k, v in cfg.per_path_ignores.items()},
    )
    mandatory = frozenset(r.code for r in registry if r.spec.mandatory)
    findings = suppression.apply(findings, scope, mandatory)
    if suppression.UNUSED_CODE in enabled:
        findings += suppression.unused(scope)
    findings = sorted(set(findings), key=Finding.sort_key)
    return LintResult(findings, run, rules, loaded.missing, loaded.skipped)


def lint_paths(
    paths: list[str],
    cfg: Config,
    registry: Registry | None = None,
    *,
    jobs: int = 1,
    cache_dir: str | None = None,
    follow_symlinks: bool = False,
) -> LintResult:
    """Lint files and directories.

    ``jobs``: parse in up to that many worker processes (0 = automatic, one per CPU from 4 CPUs on;
    1 = none; small inputs are parsed in-process anyway), and, for large runs, spread the rules
    over that many forked processes (0 = one per CPU). Every rule runs once over everything loaded.
    ``cache_dir``: reuse the parse of files whose text is unchanged (:mod:`eksmllint.cache`).
    ``follow_symlinks``: also read symlinks leading outside the directories given.
    Findings are the same whatever the two are.
    """
    cache = None
    if cache_dir:
        from eksmllint.cache import ParseCache

        cache = ParseCache(cache_dir)
    checking_jobs = 1
    if jobs != 1:
        from eksmllint.parallel import resolve_jobs, rule_jobs

        jobs, checking_jobs = resolve_jobs(jobs), rule_jobs(jobs)
    with gc_paused():
        loaded = load(
            paths,
            exclude=cfg.path_filter(),
            max_bytes=cfg.max_file_size,
            jobs=jobs,
            cache=cache,
            follow_symlinks=follow_symlinks,
        )
        context = (
            load(
                list(cfg.context),
                exclude=cfg.path_filter(),
                max_bytes=cfg.max_file_size,
                context_only=True,
                jobs=jobs,
                cache=cache,
                follow_symlinks=follow_symlinks,
            )
            if cfg.context
            else None
        )
        gc.freeze()
    try:
        return lint_loaded(loaded, cfg, registry, context, rule_jobs=checking_jobs)
    finally:
        gc.unfreeze()


# Why freeze: keep the cyclic GC from re-scanning the loaded manifests while the rules run.
# Everything alive after loading (modules, documents) moves to the GC's permanent generation
# for the run and back afterwards, so collections triggered by the rules' short-lived objects
# only scan those; objects are still freed by reference counting. Freezing inside the GC pause,
# before any collection, matters: the first collection after a pause otherwise scans every
# object allocated during it (0.5 s at 10,000 documents), and so did a gc.collect(0) here.


def lint_text(
    text: str, cfg: Config | None = None, name: str = "<text>", registry: Registry | None = None
) -> LintResult:
    """Lint a manifest held in memory (tests, the webhook)."""
    from eksmllint.loader import _file_kind, parse_source

    src = SourceFile(name, text, _file_kind(name, text) or "yaml")
    resources, problems = parse_source(src)
    return lint_loaded(LoadResult([src], resources, problems), cfg or Config(), registry)
