"""Run the rules over a lint run: dispatch by target, isolate crashes, suppress, sort."""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from time import perf_counter, process_time
from typing import TYPE_CHECKING

from eksmllint.analysis.workload_class import of_classes
from eksmllint.config import Config, ConfigError
from eksmllint.core import suppression
from eksmllint.core.context import LintRun, RuleContext, RunSettings
from eksmllint.core.finding import Finding, Location, Severity, in_order
from eksmllint.core.registry import Registry, default_registry
from eksmllint.core.rule import Rule, option_problem
from eksmllint.loader import LoadProblem, LoadResult, ProgressFactory, Skipped, gc_paused, load
from eksmllint.resource import Resource, SourceFile
from eksmllint.workload import Workload

if TYPE_CHECKING:
    import threading

    from eksmllint.cache import ParseCache

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

    @property
    def linted_files(self) -> list[SourceFile]:
        """The files linted (context files left out)."""
        return [f for f in self.run.files if not f.context_only]

    @property
    def linted_resources(self) -> list[Resource]:
        """The Kubernetes objects linted (context objects left out)."""
        return [r for r in self.run.resources if not r.doc.file.context_only]

    @property
    def nothing_linted(self) -> bool:
        """No Kubernetes object and no batch script was linted: a wrong or empty path, or files
        that are all skipped or not Kubernetes objects (a run that checked nothing)."""
        return not self.linted_resources and not any(f.kind == "slurm" for f in self.linted_files)


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
            schema = rule.spec.option_schema
            for name, value in opts.items():
                if (why := option_problem(schema[name], value)) is not None:
                    raise ConfigError(f"{cfg.source or 'config'}: rules.{rule.code}.{name}: {why}")
            rule = rule.with_options(opts)
        rules.append(rule)
    return rules


def target_items(rule: Rule, run: LintRun, focus: Workload | None = None) -> Sequence[object]:
    """What ``rule`` is called on, by its ``target``: every template, workload, resource (of its
    ``kinds``), file, or the run once. With ``focus`` (the webhook's admitted workload), the
    per-resource targets are that workload's alone and the files are the run's own. Templates and
    workloads are only those of the classes the rule judges (``workload-classes``): the one class
    gate, for the CLI, the forked runner and the webhook alike."""
    target = rule.spec.target
    classes = rule.spec.workload_classes
    if target in ("templates", "workloads") and classes:
        if focus is not None:
            return of_classes(_targets(rule, run, focus), classes)
        # Rules that judge the same classes share one filtered list (a handful of sets in all).
        memo = run.memo("targets-of-classes")
        key = (target, classes)
        found = memo.get(key)
        if found is None:
            found = memo[key] = of_classes(_targets(rule, run, None), classes)
        return found
    return _targets(rule, run, focus)


def _targets(rule: Rule, run: LintRun, focus: Workload | None) -> Sequence[object]:
    target = rule.spec.target
    kinds = rule.spec.kinds
    if focus is not None:
        res = focus.resource.owner  # a TrainJob, not the JobSet its runtime makes of it
        if target == "templates":
            return focus.templates
        if target == "workloads":
            return [focus]
        if target == "resources":
            return [res] if not kinds or res.kind in kinds else []
        if target == "files":
            return [f for f in run.own_files if not f.context_only]
        return (run,)
    if target == "templates":
        return run.templates
    if target == "workloads":
        return run.workloads
    if target == "resources":
        return run.resources if not kinds else [r for k in kinds for r in run.by_kind.get(k, [])]
    if target == "files":
        return run.files
    return (run,)


def subject_resource(target: object) -> Resource | None:
    """The resource a target belongs to (None for a file or the run): where a crash is reported."""
    return target if isinstance(target, Resource) else getattr(target, "resource", None)


class Abandoned(Exception):
    """The caller stopped waiting for this lint (the webhook's time budget ran out)."""


def run_rules(
    run: LintRun, rules: list[Rule], focus: Resource | None = None, stop: threading.Event | None = None
) -> list[Finding]:
    """Every rule over its targets (:func:`target_items`; with ``focus``, one of the run's own
    resources, only its own targets when it is a workload); a rule that raises, on a target or
    while its targets are gathered, becomes an EML000 finding and the others go on. Once ``stop``
    is set, :class:`Abandoned` is raised before the next rule (an answered request's lint does
    not keep its thread)."""
    own = run.own_workload(focus) if focus is not None else None
    findings: list[Finding] = []
    extend = findings.extend  # the hot loop: rules x templates (hundreds of thousands of calls)
    for rule in rules:
        if stop is not None and stop.is_set():
            raise Abandoned
        ctx = RuleContext(rule, run)
        try:
            items = target_items(rule, run, own)
            if not items:  # nothing to judge: its module is not imported (21 of 68 for a lone Job)
                continue
            check = rule.check  # a built-in rule's module is imported here, when it first runs
        except Exception as exc:  # a derived view could not be built, or the rule module imported
            findings.append(internal_error(rule, focus, run, exc))
            continue
        for target in items:
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
    """Build the run's workload views (:meth:`LintRun.build_workloads`); a resource whose view
    cannot be built becomes an EML000 on that resource and is left out of the workload rules."""
    crashes: list[Finding] = []
    run.build_workloads(lambda resource, exc: crashes.append(internal_error(None, resource, resource, exc)))
    return crashes


class Linter:
    """The enabled rules of one configuration and what is done with their findings: the one path
    from a :class:`LintRun` to reported findings, for ``lint``, ``fix`` and the webhook (dispatch,
    EML000 for crashes, severity overrides, suppression, order)."""

    def __init__(
        self, cfg: Config, registry: Registry | None = None, mode: str = "cli", single_rule_annotations: bool = False
    ) -> None:
        self.cfg = cfg
        self.single_rule_annotations = single_rule_annotations  # see suppression.collect
        self.registry = registry or default_registry()
        self.rules = select_rules(self.registry, cfg)
        self.enabled = frozenset(r.code for r in self.rules)
        self.mandatory = frozenset(r.code for r in self.registry if r.spec.mandatory)
        self.overrides = {
            rule.code: Severity.parse(sev) for name, sev in cfg.severity.items() if (rule := self.registry.get(name))
        }
        self.settings = RunSettings(cfg.kubernetes_version, mode, cfg.reference_kinds, cfg.platform)

    def lint(
        self,
        run: LintRun,
        *,
        found: Iterable[Finding] = (),
        focus: Resource | None = None,
        rule_jobs: int = 1,
        stop: threading.Event | None = None,
    ) -> list[Finding]:
        """The findings on ``run``'s files that are not context (``found``: what the loader
        reported), suppressed ones included, in :func:`finding_order`. ``focus``: only that
        resource's own targets are dispatched when it is a workload (:func:`target_items`).
        ``rule_jobs`` > 1 spreads the rules over forked processes
        (:func:`eksmllint.parallel.run_rules_forked`); the findings are the same."""
        findings = list(found) + build_workloads(run)
        if rule_jobs > 1 and focus is None:
            from eksmllint.parallel import run_rules_forked

            findings += run_rules_forked(run, self.rules, rule_jobs, run_rules)
        else:
            findings += run_rules(run, self.rules, focus, stop)
        # Findings in context files (and in the shared views', which are context) are not reported,
        # nor those on a context object whose pods an object of the run defines (a context TrainJob
        # run from the run's runtime); but those on an object of the run's own are, wherever they
        # point (a TrainJob's run from a runtime in the context: they point into the runtime). A
        # finding in a context file that a linted file takes part in is moved to that file by lint
        # and fix (see _caused_by); the webhook judges the admitted object alone, as it always has.
        own_context = {f.path for f in run.own_files if f.context_only}
        context_paths = own_context | run.shared.paths
        moved = self._caused_by(run, findings, own_context) if own_context and self.settings.mode == "cli" else []
        if context_paths:
            own = {r.ref for r in run.own_resources if not r.doc.file.context_only}
            context: set | None = None  # refs of context objects: computed only when a finding asks

            def reported(f: Finding) -> bool:
                nonlocal context
                if f.resource in own:
                    return True
                if f.location.file in context_paths:
                    return False
                if context is None:
                    context = {r.ref for r in run.resources if r.doc.file.path in context_paths} - own
                return f.resource not in context

            findings = [f for f in findings if reported(f)] + moved
        if self.overrides:
            findings = [f.with_(severity=self.overrides[f.code]) if f.code in self.overrides else f for f in findings]
        scope = suppression.collect(
            self.registry,
            [r for r in run.own_resources if not r.doc.file.context_only],
            [f for f in run.own_files if not f.context_only],
            {k: list(v) for k, v in self.cfg.per_path_ignores.items()},
            self.single_rule_annotations,
        )
        findings = suppression.apply(findings, scope, self.mandatory)
        if suppression.UNUSED_CODE in self.enabled:
            findings += suppression.unused(scope)
        return in_order(findings)

    def _caused_by(self, run: LintRun, findings: list[Finding], context_paths: set[str]) -> list[Finding]:
        """Findings anchored in a context file whose related locations lie in a linted file, made
        again on each such file (naming the anchor), so that a commit touching only a job still
        sees the error its NodePool now has. A suppression in the context file still holds."""
        anchored = [f for f in findings if f.location.file in context_paths and f.related]
        if not anchored:
            return []
        scope = suppression.collect(
            self.registry,
            [r for r in run.own_resources if r.doc.file.context_only],
            [f for f in run.own_files if f.context_only],
            {k: list(v) for k, v in self.cfg.per_path_ignores.items()},
        )
        moved: list[Finding] = []
        for f in suppression.apply(anchored, scope, self.mandatory):
            if f.suppressed_by:
                continue
            anchor = f"{os.path.normpath(f.location.file)}:{f.location.line}"
            for where in {r.file: r for r in reversed(f.related) if r.file not in context_paths}.values():
                moved.append(
                    f.with_(location=where, message=f"{f.message} [at {anchor}]", related=(f.location,), fix=None)
                )
        return moved

    def lint_loaded(self, loaded: LoadResult, context: LoadResult | None = None, rule_jobs: int = 1) -> LintResult:
        """Lint what the loader loaded; ``context`` files feed cross-file rules, their own
        findings are dropped."""
        files = list(loaded.files)
        resources = list(loaded.resources)
        if context is not None:
            # One file, however the two path lists spell it (`--context .` with `jobs/a.yaml`).
            known = {os.path.realpath(f.path) for f in files}
            kept = {id(f) for f in context.files if os.path.realpath(f.path) not in known}
            for f in context.files:
                if id(f) in kept:
                    f.context_only = True
                    files.append(f)
            resources += [r for r in context.resources if id(r.doc.file) in kept]
        run = LintRun(resources, files, self.settings)
        problems = [_load_problem(p) for p in loaded.problems if p.code in self.enabled]
        findings = self.lint(run, found=problems, rule_jobs=rule_jobs)
        return LintResult(findings, run, self.rules, loaded.missing, loaded.skipped)


def _load_problem(p: LoadProblem) -> Finding:
    slug, severity = _LOADER_CODES.get(p.code, ("launch-file-invalid", Severity.ERROR))
    return Finding(p.code, slug, severity, p.message, Location(p.file, p.line, p.col), detail=p.detail)


def lint_loaded(
    loaded: LoadResult,
    cfg: Config,
    registry: Registry | None = None,
    context: LoadResult | None = None,
    mode: str = "cli",
    rule_jobs: int = 1,
) -> LintResult:
    """:meth:`Linter.lint_loaded` with the rules of ``cfg``."""
    return Linter(cfg, registry, mode).lint_loaded(loaded, context, rule_jobs)


def load_context(
    cfg: Config,
    *,
    jobs: int = 1,
    cache: ParseCache | None = None,
    follow_symlinks: bool = False,
    progress: ProgressFactory | None = None,
) -> LoadResult | None:
    """The config's ``context:`` paths, loaded as context (None when it names none)."""
    if not cfg.context:
        return None
    return load(
        list(cfg.context),
        exclude=cfg.path_filter(),
        max_bytes=cfg.max_file_size,
        context_only=True,
        jobs=jobs,
        cache=cache,
        follow_symlinks=follow_symlinks,
        progress=progress,
    )


def lint_paths(
    paths: list[str],
    cfg: Config,
    registry: Registry | None = None,
    *,
    jobs: int = 1,
    cache_dir: str | None = None,
    follow_symlinks: bool = False,
    progress: ProgressFactory | None = None,
    stdin_name: str | None = None,
) -> LintResult:
    """Lint files and directories.

    ``jobs``: parse in up to that many worker processes (0 = automatic, one per CPU from 4 CPUs on;
    1 = none; small inputs are parsed in-process anyway), and, for large runs, spread the rules
    over that many forked processes (0 = one per idle CPU, and none when this process did not get
    most of a CPU while it parsed: :func:`eksmllint.jobs.confirmed_rule_jobs`). Every rule runs
    once over everything loaded.
    ``cache_dir``: reuse the parse of files whose text is unchanged (:mod:`eksmllint.cache`).
    ``follow_symlinks``: also read symlinks leading outside the directories given.
    ``progress``: reports the files read (:func:`eksmllint.loader.load`).
    ``stdin_name``: the path stdin (``-``) stands for (``--stdin-filename``).
    Findings are the same whatever the two are.
    """
    cache: ParseCache | None = None
    if cache_dir:
        from eksmllint.cache import ParseCache

        cache = ParseCache(cache_dir)
    checking_jobs, automatic = 1, not jobs
    if jobs != 1:
        from eksmllint.jobs import resolve_jobs, rule_jobs

        jobs, checking_jobs = resolve_jobs(jobs), rule_jobs(jobs)
    started = (process_time(), perf_counter())
    with gc_paused():
        loaded = load(
            paths,
            exclude=cfg.path_filter(),
            max_bytes=cfg.max_file_size,
            jobs=jobs,
            cache=cache,
            follow_symlinks=follow_symlinks,
            progress=progress,
            stdin_name=stdin_name,
        )
        context = load_context(cfg, jobs=jobs, cache=cache, follow_symlinks=follow_symlinks, progress=progress)
        if automatic and jobs == 1 and checking_jobs > 1:  # parsed here: its CPU share is this process's
            from eksmllint.jobs import confirmed_rule_jobs

            cpu, wall = process_time() - started[0], perf_counter() - started[1]
            checking_jobs = confirmed_rule_jobs(checking_jobs, cpu, wall)
        return lint_loaded(loaded, cfg, registry, context, rule_jobs=checking_jobs)


# Why the rules run with the cyclic GC paused too: a lint run makes next to no cyclic garbage
# (606 objects at 10,000 documents as at 7, all from start-up), while its collections re-scanned
# the documents, views and caches the rules build: 925 collections, 0.6-0.8 s at 10,000
# documents, finding nothing. Objects are still freed by reference counting; what the run kept
# alive moves to the oldest generation when the pause ends (gc_paused).


def lint_text(
    text: str, cfg: Config | None = None, name: str = "<text>", registry: Registry | None = None
) -> LintResult:
    """Lint a manifest held in memory (tests, the webhook)."""
    from eksmllint.loader.files import file_kind, parse_source

    src = SourceFile(name, text, file_kind(name, text) or "yaml")
    resources, problems = parse_source(src)
    return lint_loaded(LoadResult([src], resources, problems), cfg or Config(), registry)
