"""The fast paths (issue 7) change nothing but speed: fast YAML resolution and conversion, the
garbage-collector pause, parallel parsing (``--jobs``) and the parse cache (``--cache-dir``)."""

from __future__ import annotations

import gc
import json
import os
import pickle
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint import jobs, parallel
from eksmllint.cache import ParseCache
from eksmllint.cli import cli
from eksmllint.config import Config
from eksmllint.core import engine
from eksmllint.core.engine import lint_paths
from eksmllint.loader import gc_paused, load, parse_text, workers
from eksmllint.yamlpos import MAX_DEPTH, YList, YMap, _convert_generic, load_yaml_stream

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool-{i}
spec:
  template:
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["p4d.24xlarge"]
      taints:
        - key: nvidia.com/gpu
          value: "true"
          effect: NoSchedule
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: c-{i}}}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
"""
JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: job-{i}
  namespace: training
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          nodeSelector: {{node.kubernetes.io/instance-type: p4d.24xlarge}}
          containers:
            - name: pytorch
              image: pytorch/pytorch:latest
              command: ["torchrun", "--nproc_per_node=16", "train.py"]
              resources:
                limits: {{nvidia.com/gpu: 8, memory: 900Gi}}
"""


def reference_docs(text: str) -> list:
    """What the straightforward path yields: stock CSafeLoader tags, the generic conversion."""
    return [_convert_generic(n, 0) for n in yaml.compose_all(text, Loader=yaml.CSafeLoader) if n is not None]


def same_tree(a, b) -> bool:
    """Equal values, equal container types, equal positions, all the way down."""
    if isinstance(a, (YMap, YList)):
        if type(a) is not type(b) or a.start != b.start or a.pos != b.pos or len(a) != len(b):
            return False
        if isinstance(a, YMap):
            return list(a) == list(b) and all(same_tree(a[k], b[k]) for k in a)
        return all(same_tree(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))  # NaN == NaN here


# --- the fast YAML path ------------------------------------------------------------------------
SCALARS = [
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "0x1F",
    "1_000",
    "012",
    "0o7",
    "1:30",
    "-1:30",
    ".inf",
    "-.Inf",
    ".nan",
    "~",
    "null",
    "",
    "2001-12-14",
    "1e3",
    "1.5e+3",
    "3.",
    "+12",
    "=",
    "<<x",
    "8",
    "In",
    "a b",
]


@pytest.mark.parametrize("value", SCALARS)
def test_plain_and_quoted_scalars_resolve_like_csafeloader(value):
    text = f"plain: {value}\nquoted: '{value}'\nseq: [{value or '~'}]\n"
    (doc,), err = load_yaml_stream(text)
    assert err is None
    (expected,) = reference_docs(text)
    assert same_tree(doc.data, expected)
    assert doc.data["quoted"] == value  # quoted scalars are always strings


yaml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from(SCALARS)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=250, deadline=None)
@given(yaml_values, st.booleans())
def test_fast_path_equals_reference_on_generated_documents(value, flow):
    text = yaml.safe_dump_all([value, {"k": value}], default_flow_style=flow, allow_unicode=True)
    docs, err = load_yaml_stream(text)
    assert err is None
    expected = reference_docs(text)
    assert len(docs) == len(expected)
    assert all(same_tree(d.data, e) for d, e in zip(docs, expected))


def test_explicit_tags_merge_keys_and_anchors():
    text = (
        "base: &b {cpu: '2', memory: 4Gi}\n"
        "a: !!int '12'\nb: !!str 12\nc: !!int ''\nd: !!float x\n"
        "job:\n  <<: *b\n  cpu: '4'\nurl: http://x?a=1&b=2\n"
    )
    (doc,), err = load_yaml_stream(text)
    assert err is None  # `!!int ''` used to raise IndexError out of PyYAML's constructor
    data = doc.data
    assert (data["a"], data["b"], data["c"], data["d"]) == (12, "12", "", "x")
    assert dict(data["job"]) == {"cpu": "4", "memory": "4Gi"}
    assert data["job"].pos["memory"] == (1, 21)  # a merged key keeps its own position
    assert same_tree(data, reference_docs(text)[0])


def test_depth_limit_without_anchors_is_an_error_not_a_crash():
    deep = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    docs, err = load_yaml_stream(deep)
    assert docs == [] and err is not None and "nesting deeper" in err.message
    ok, err = load_yaml_stream("[" * 50 + "]" * 50)
    assert err is None and len(ok) == 1


def test_documents_pickle_with_positions():
    (doc,), _ = load_yaml_stream(POOL.format(i=1))
    back = pickle.loads(pickle.dumps(doc.data, pickle.HIGHEST_PROTOCOL))
    assert same_tree(doc.data, back)
    reqs = back["spec"]["template"]["spec"]["requirements"]
    assert isinstance(reqs, YList) and reqs.pos[0] == (9, 11)


def test_gc_paused_is_reentrant_and_restores_the_collector():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a collector that was off stays off
    finally:
        gc.enable()


def test_what_a_pause_kept_alive_is_not_left_for_the_next_young_collection(tmp_path):
    """Counted: objects the first collection after ``load`` would scan. Left in the youngest
    generation, all the loaded documents were (old: over 2,000 for these 40 documents)."""
    for i in range(40):
        (tmp_path / f"pool-{i}.yaml").write_text(POOL.format(i=i))
    gc.collect()
    gc.disable()  # no collection may move them before they are counted
    try:
        loaded = load([str(tmp_path)])
        young = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
    finally:
        gc.enable()
    assert len(loaded.resources) == 40
    assert young < 200
    assert gc.get_freeze_count() == 0  # moved to the oldest generation, not frozen for good


# --- parallel parsing and the cache ---------------------------------------------------------------
@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "manifests"
    for i in range(24):
        folder = root / f"team-{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m-{i:02d}.yaml").write_text(POOL.format(i=i) + "---\n" + JOB.format(i=i))
    (root / "team-0" / "broken.yaml").write_text("kind: [unclosed\n")
    (root / "team-1" / "binary.yaml").write_bytes(b"\x00\x01kind: x")
    (root / "team-2" / "cm.json").write_text('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}')
    return root


def summary(loaded):
    return (
        [(r.doc.file.path, r.kind, r.name, r.location(("spec",)).line) for r in loaded.resources],
        [(p.file, p.message, p.line, p.col) for p in loaded.problems],
        [f.path for f in loaded.files],
    )


def findings_of(result):
    return [(f.code, f.location.file, f.location.line, f.location.col, f.message) for f in result.findings]


def test_parallel_load_equals_serial_load(tree, monkeypatch):
    monkeypatch.setattr(workers, "MIN_PARALLEL_BYTES", 0)
    serial = load([str(tree)], jobs=1)
    par = load([str(tree)], jobs=2)
    assert summary(par) == summary(serial)
    assert len(serial.resources) == 49 and serial.problems  # the broken and the binary file
    assert all(d.file is f for f in par.files for d in f.documents)  # documents point at their file


def test_parallel_lint_finds_exactly_what_serial_lint_finds(tree, monkeypatch):
    monkeypatch.setattr(workers, "MIN_PARALLEL_BYTES", 0)
    serial, par = lint_paths([str(tree)], Config(), jobs=1), lint_paths([str(tree)], Config(), jobs=2)
    assert findings_of(par) == findings_of(serial) and serial.findings
    assert gc.get_freeze_count() == 0  # the run's frozen heap was released


def test_small_inputs_and_one_job_start_no_workers(tree, monkeypatch):
    files = sorted(str(p) for p in tree.rglob("*.yaml"))
    assert not workers.worth_parallel(files, 1)
    assert not workers.worth_parallel(files[:3], 8)
    assert not workers.worth_parallel(files, 8)  # a few KB: below MIN_PARALLEL_BYTES

    def no_pool(*a, **k):
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(workers, "ProcessPoolExecutor", no_pool)
    assert summary(load([str(tree)], jobs=4)) == summary(load([str(tree)], jobs=1))


def test_chunks_keep_order_and_cover_every_file():
    paths = [f"f{i}" for i in range(10)]
    sizes = [5, 1, 1, 1, 20, 1, 1, 1, 1, 1]
    chunks = workers.chunk(paths, sizes, 4)
    assert [p for c in chunks for p in c] == paths and 1 < len(chunks) <= 4
    assert jobs.resolve_jobs(3) == 3 and jobs.resolve_jobs(-2) == 1


@pytest.mark.parametrize("cpus,auto", [(1, 1), (2, 1), (3, 1), (4, 4), (16, 16)])
def test_automatic_jobs_start_workers_only_where_they_pay(monkeypatch, cpus, auto):
    monkeypatch.setattr(jobs, "available_cpus", lambda: cpus)
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert jobs.resolve_jobs(0) == jobs.resolve_jobs(None) == auto
    assert jobs.resolve_jobs(2) == 2  # an explicit count is honoured


def test_pool_that_cannot_start_falls_back_to_serial(tree, monkeypatch):
    monkeypatch.setattr(workers, "MIN_PARALLEL_BYTES", 0)

    def broken(*a, **k):
        raise OSError("no semaphores here")

    monkeypatch.setattr(workers, "ProcessPoolExecutor", broken)
    assert summary(load([str(tree)], jobs=2)) == summary(load([str(tree)], jobs=1))


def test_cache_cold_and_warm_runs_agree(tree, tmp_path):
    cache_dir = tmp_path / "cache"
    plain = lint_paths([str(tree)], Config())
    cold = lint_paths([str(tree)], Config(), cache_dir=str(cache_dir))
    cache = ParseCache(cache_dir)
    warm_load = load([str(tree)], cache=cache)
    assert cache.hits == 26 and cache.misses == 0  # 24 manifests, the broken file, the JSON file
    warm = lint_paths([str(tree)], Config(), cache_dir=str(cache_dir))
    assert findings_of(plain) == findings_of(cold) == findings_of(warm)
    assert summary(warm_load) == summary(load([str(tree)]))


def test_cache_entries_are_keyed_by_text_and_kind_and_survive_damage(tmp_path):
    cache = ParseCache(tmp_path / "c")
    text = POOL.format(i=7)
    parsed = parse_text(text, "yaml")
    cache.put("yaml", text, parsed)
    hit = cache.get("yaml", text)
    assert hit is not None and same_tree(hit.docs[0][0], parsed.docs[0][0])
    assert cache.get("json", text) is None and cache.get("yaml", text + "\n") is None
    entry = cache._path(cache.key("yaml", text))
    entry.write_bytes(b"\x00garbage")
    assert cache.get("yaml", text) is None  # damage is a miss, never an error
    entry.write_bytes(__import__("marshal").dumps(("not", "a", "parse")))
    assert cache.get("yaml", text) is None


def test_unwritable_cache_only_costs_speed(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = ParseCache(blocker)
    text = JOB.format(i=1)
    cache.put("yaml", text, parse_text(text, "yaml"))
    assert cache.write_errors == 1 and cache.get("yaml", text) is None


def test_cli_jobs_and_cache_dir_options(tree, tmp_path):
    out = []
    for args in (
        ["-j", "1"],
        ["--jobs", "2", "--cache-dir", str(tmp_path / "c")],
        ["--cache-dir", str(tmp_path / "c")],
    ):
        res = CliRunner().invoke(cli, ["lint", "--format", "json", "--fail-on", "never", *args, str(tree)])
        assert res.exit_code == 0, res.output
        out.append(json.loads(res.output)["findings"])
    assert out[0] == out[1] == out[2] and out[0]
    assert any((tmp_path / "c").rglob("*"))
    res = CliRunner().invoke(cli, ["lint", "--jobs", "-1", str(tree)])
    assert res.exit_code == 2


# --- rules in forked processes --------------------------------------------------------------------
needs_fork = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and hasattr(os, "fork")), reason="rules are forked on Linux only"
)


@pytest.fixture()
def forking(monkeypatch):
    """Fork for any run size, and record the children's pids (pytest may have threads: allow it here)."""
    monkeypatch.setattr(parallel, "MIN_PARALLEL_RULE_TARGETS", 0)
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    forks: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        pid = real_fork()
        if pid:  # in the parent: the child's pid
            forks.append(pid)
        return pid

    monkeypatch.setattr(parallel.os, "fork", counting_fork)
    return forks


@needs_fork
def test_forked_rules_find_exactly_what_serial_rules_find(tree, forking):
    serial = lint_paths([str(tree)], Config(), jobs=1)
    forked = lint_paths([str(tree)], Config(), jobs=3)
    assert len(forking) == 2  # three groups: two children and this process
    assert forked.findings == serial.findings and serial.findings  # fixes and locations included
    assert gc.get_freeze_count() == 0


@needs_fork
def test_a_child_that_dies_has_its_rules_rerun_in_the_parent(tree, forking, monkeypatch):
    parent, real_run_rules = os.getpid(), engine.run_rules

    def dies_in_children(run, rules):
        if os.getpid() != parent:
            os._exit(3)
        return real_run_rules(run, rules)

    serial = lint_paths([str(tree)], Config(), jobs=1)
    monkeypatch.setattr(engine, "run_rules", dies_in_children)
    assert lint_paths([str(tree)], Config(), jobs=2).findings == serial.findings and forking


def test_small_runs_and_threaded_processes_do_not_fork(tree, monkeypatch):
    def no_fork():
        raise AssertionError("forked")

    monkeypatch.setattr(parallel.os, "fork", no_fork)
    assert lint_paths([str(tree)], Config(), jobs=4).findings  # 49 resources: below the threshold
    monkeypatch.setattr(parallel, "MIN_PARALLEL_RULE_TARGETS", 0)
    import threading

    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert not parallel.can_fork()  # e.g. the webhook's thread pool
        assert lint_paths([str(tree)], Config(), jobs=4).findings
    finally:
        stop.set()
        worker.join()


def test_rule_groups_keep_families_together_and_balance_work():
    from eksmllint.core.registry import default_registry

    rules = list(default_registry())
    sizes = {"templates": 100, "workloads": 80, "resources": 120, "files": 10, "run": 120}
    groups = parallel.rule_groups(rules, 2, sizes)
    assert sorted(r.code for g in groups for r in g) == sorted(r.code for r in rules)
    family_group = {}
    for i, g in enumerate(groups):
        for r in g:
            assert family_group.setdefault(r.code[:4], i) == i  # one family, one group
    loads = [sum(sizes[r.spec.target] for r in g) for g in groups]
    assert len(groups) == 2 and max(loads) <= 1.25 * min(loads)
    assert parallel.rule_groups(rules, 1, sizes) == [rules]
    assert jobs.rule_jobs(3) == 3 and jobs.rule_jobs(0) == jobs.idle_cpus()


@pytest.mark.parametrize(
    "cpus,load,rules,parse",
    [(2, 0.2, 2, 1), (2, 0.7, 1, 1), (2, 7.9, 1, 1), (16, 0.5, 16, 16), (16, 10.0, 6, 6), (16, 13.0, 3, 1)],
)
def test_automatic_jobs_use_only_idle_cpus(monkeypatch, cpus, load, rules, parse):
    """A fork onto a CPU other processes keep busy competes with its parent (issue 23: the default
    was 1.2x slower than --jobs 1 on a shared 2-CPU machine); explicit counts are honoured."""
    monkeypatch.setattr(jobs, "available_cpus", lambda: cpus)
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (load, load, load))
    assert jobs.rule_jobs(0) == rules and jobs.resolve_jobs(0) == parse
    assert jobs.rule_jobs(2) == 2 and jobs.resolve_jobs(5) == 5


@needs_fork
@pytest.mark.parametrize(
    "cpu,wall,forks",
    [(0.5, 0.5, 2), (0.45, 0.5, 2), (0.3, 0.5, 1), (0.0, 0.1, 2)],
    ids=["alone", "nearly alone", "sharing its CPU", "too short to tell"],
)
def test_automatic_rule_processes_are_confirmed_by_the_parse(monkeypatch, tree, forking, cpu, wall, forks):
    """The load average lags a minute: the CPU share this process measured while it parsed decides
    too (issue 23: the default must never be slower than --jobs 1). Explicit counts are honoured."""
    clock = {"cpu": 0.0, "wall": 0.0}
    monkeypatch.setattr(jobs, "idle_cpus", lambda: 2)
    monkeypatch.setattr(engine, "process_time", lambda: clock["cpu"])
    monkeypatch.setattr(engine, "perf_counter", lambda: clock["wall"])
    real_load = engine.load

    def timed_load(*args, **kwargs):
        clock["cpu"] += cpu
        clock["wall"] += wall
        return real_load(*args, **kwargs)

    monkeypatch.setattr(engine, "load", timed_load)
    lint_paths([str(tree)], Config(), jobs=0)
    assert len(forking) + 1 == forks
    forking.clear()
    lint_paths([str(tree)], Config(), jobs=2)
    assert len(forking) == 1


@needs_fork
def test_an_interrupted_parent_leaves_no_child_or_pipe(tree, forking, monkeypatch):
    real_run_rules, parent = engine.run_rules, os.getpid()

    def interrupted_here(run, rules):
        if os.getpid() == parent:
            raise KeyboardInterrupt
        return real_run_rules(run, rules)

    fds_before = set(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(engine, "run_rules", interrupted_here)
    with pytest.raises(KeyboardInterrupt):
        lint_paths([str(tree)], Config(), jobs=3)
    assert len(forking) == 2
    for pid in forking:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # killed and reaped, not left running
    assert set(os.listdir("/proc/self/fd")) <= fds_before  # no pipe left open
    assert gc.get_freeze_count() == 0


def test_rules_run_with_the_cyclic_gc_paused_and_it_is_back_afterwards(tree, monkeypatch):
    from eksmllint.core import engine

    seen = []
    real = engine.run_rules

    def spy(run, rules, *args):
        seen.append(gc.isenabled())
        return real(run, rules, *args)

    monkeypatch.setattr(engine, "run_rules", spy)
    result = lint_paths([str(tree)], Config(), jobs=1)
    assert seen == [False] and result.findings
    assert gc.isenabled() and gc.get_freeze_count() == 0
