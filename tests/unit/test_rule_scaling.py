"""Per-pool rules read a per-run index of the templates hosted on each pool instead of scanning
every template for every pool (issue 23): counted, not timed."""

from __future__ import annotations

import pytest

from eksmllint.checks.disruption import eml501_nodepool_disruption_budget as eml501
from eksmllint.checks.efa import eml106_spot_for_collective as eml106
from eksmllint.config import Config, with_overrides
from eksmllint.core.engine import lint_text

POOLS, JOBS = 40, 120


def _pool(j: int) -> str:
    return f"""apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: pool-{j}}}
spec:
  template:
    metadata: {{labels: {{team: team-{j}}}}}
    spec:
      requirements:
        - {{key: node.kubernetes.io/instance-type, operator: In, values: [p4d.24xlarge]}}
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      taints: [{{key: team, value: team-{j}, effect: NoSchedule}}]
  disruption: {{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 10m}}
"""


def _job(i: int) -> str:
    team = i % POOLS
    return f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: job-{i}, namespace: ml}}
spec:
  pytorchReplicaSpecs:
    Worker:
      template:
        spec:
          nodeSelector: {{team: team-{team}}}
          tolerations: [{{key: team, operator: Equal, value: team-{team}, effect: NoSchedule}}]
          containers:
            - name: w
              image: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime
              command: [torchrun, --nnodes=2, --nproc_per_node=8, train.py]
              resources: {{limits: {{nvidia.com/gpu: 8}}}}
      replicas: 2
"""


TEXT = "---\n".join([_pool(j) for j in range(POOLS)] + [_job(i) for i in range(JOBS)])


def count_calls(monkeypatch, owner: object, name: str) -> list[int]:
    """Wrap ``owner.name`` (a function or method) so each call is counted in the list returned."""
    calls = [0]
    original = getattr(owner, name)

    def counting(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


@pytest.mark.parametrize(
    "module, counted, code",
    [(eml106, "placement", "EML106"), (eml501, "_hosting_ids", "EML501")],
)
def test_per_pool_rules_read_each_template_once(monkeypatch, module, counted, code):
    calls = count_calls(monkeypatch, module, counted)
    result = lint_text(TEXT, with_overrides(Config(), select=(code,)))
    assert sum(f.code == code for f in result.findings) == POOLS  # every pool serves training
    assert 0 < calls[0] <= JOBS  # once per template (a scan per pool: POOLS x JOBS)


def test_find_in_a_namespace_reads_only_that_namespace():
    """One ServiceAccount name in N namespaces, looked up in each (EML703's is_defined): O(1)
    candidates read per lookup, where a scan of the name's objects made N x N (0.4 s at 400)."""
    from eksmllint.core.context import LintRun
    from eksmllint.loader.files import parse_source
    from eksmllint.resource import SourceFile

    spaces = 60
    text = "---\n".join(
        f"apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: trainer, namespace: ns-{n}}}\n" for n in range(spaces)
    )
    resources, _ = parse_source(SourceFile("sa.yaml", text, "yaml"))
    run = LintRun(resources, [])
    read = [0]

    class Counted(list):
        def __iter__(self):
            for item in super().__iter__():
                read[0] += 1
                yield item

    run.__dict__["_by_kind_name"] = {k: Counted(v) for k, v in run._by_kind_name.items()}
    for n in range(spaces):
        assert [r.namespace for r in run.find("ServiceAccount", "trainer", f"ns-{n}")] == [f"ns-{n}"]
    assert len(run.find("ServiceAccount", "trainer")) == spaces
    assert read[0] <= 2 * spaces  # the lookups without a namespace read them all


def test_only_selected_rule_modules_are_imported(tmp_path):
    """Start-up (issue 23): the registry imports no check module; a run imports its selected ones
    that have something to judge (EML301 has no pod template here)."""
    import subprocess
    import sys

    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: b}\n")
    code = f"""
import sys
from eksmllint.config import Config, with_overrides
from eksmllint.core.engine import lint_paths, select_rules
from eksmllint.core.registry import default_registry
from eksmllint.core.rule import check_module
checks = lambda: sorted(m for m in sys.modules if m.startswith("eksmllint.checks.") and ".eml" in m)
assert len(default_registry()) > 50 and checks() == [], checks()
cfg = with_overrides(Config(), select=("EML301",))
lint_paths([{str(manifest)!r}], cfg)
selected = sorted(check_module(r.code, r.slug) for r in select_rules(default_registry(), cfg))
assert set(checks()) < set(selected) and "eksmllint.checks.shm.eml301_shm_missing" in selected, (checks(), selected)
assert "eksmllint.checks.input.eml001_yaml_invalid" in checks(), checks()
print(len(selected), len(default_registry()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    selected, registered = map(int, out.stdout.split())
    assert selected < registered / 4  # EML301 and the mandatory input rules


def test_each_slurm_script_is_parsed_once_per_run(tmp_path, monkeypatch):
    """More scripts than the old per-text LRU cache held (128): every rule reading them parsed each
    again, 8 parses a script (issue 23's slurm shape). Now one parse a file, whatever the count."""
    from eksmllint.config import Config
    from eksmllint.core.engine import lint_paths
    from eksmllint.launch import slurm

    scripts = 140
    for n in range(scripts):
        (tmp_path / f"train-{n}.sbatch").write_text(
            f"#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\nsrun torchrun --nproc_per_node=8 t.py --i {n}\n"
        )
    calls = count_calls(monkeypatch, slurm, "_parse")
    lint_paths([str(tmp_path)], Config())
    assert calls[0] == scripts


#: Modules a ``lint`` of one small core-kind file must not import (counted in ``sys.modules``, not
#: timed): each is start-up a pre-commit hook would pay on every commit (issue 23).
NOT_FOR_A_SMALL_FILE = (
    "networkx",  # only `eksmllint graph`
    "jsonschema",
    "kubernetes_validate",
    "kubernetes",
    "httpx",
    "multiprocessing",  # parse workers: only large inputs
    "difflib",  # only to word a suggestion
    "eksmllint.server",
    "eksmllint.fix",
    "eksmllint.cache",
    "eksmllint.models.karpenter",  # CRD models: only for kinds the input holds
    "eksmllint.models.kubeflow",
    "eksmllint.models.volcano",
    "eksmllint.checks.disruption.eml501_nodepool_disruption_budget",  # rules with no target in the run
    "eksmllint.checks.storage.eml901_fsx_parameters",
)


def test_lint_of_a_small_file_imports_no_heavy_module(tmp_path):
    import subprocess
    import sys

    manifest = tmp_path / "job.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers: [{name: c, image: busybox:1.36, command: [sh, -c, echo]}]\n"
    )
    code = f"""
import sys
from eksmllint.cli import main
sys.argv = ["eksmllint", "lint", "--fail-on", "never", {str(manifest)!r}]
try:
    main()
except SystemExit:
    pass
print("imported:", *(m for m in {NOT_FOR_A_SMALL_FILE!r} if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Linted 1 file" in out.stdout
    assert out.stdout.splitlines()[-1] == "imported:"


def test_each_distinct_image_is_parsed_once():
    """EML807 reads JOBS training pods that share one image: one parse of the reference (was one
    per container, each scanning the reference character by character)."""
    from eksmllint.checks.launch import eml807_mutable_image as eml807

    eml807.image_mutability.cache_clear()
    lint_text(TEXT, with_overrides(Config(), select=("EML807",)))
    info = eml807.image_mutability.cache_info()
    assert info.misses == 1 and info.hits == JOBS - 1


def test_pods_without_resource_claims_read_no_container_for_claims(monkeypatch):
    """EML008 and EML103 ask every pod for its DRA claims: a pod with no ``spec.resourceClaims``
    (nearly all) is answered without reading its containers' ``resources.claims`` (was every
    container of every pod, once per rule)."""
    from eksmllint.checks import helpers

    calls = count_calls(monkeypatch, helpers, "_claim_refs")
    lint_text(TEXT, with_overrides(Config(), select=("EML008", "EML103")))
    assert calls[0] == 0  # was 2 x JOBS


def test_landing_compares_a_pod_with_the_pools_offering_its_labels(monkeypatch):
    """One pool per team, each pod selecting its team's label: placing a key compares it with the
    pools that offer that label value (landing.PoolIndex), where a scan compared every key with
    every pool (POOLS x POOLS: 0.26 s of the `nodepools` shape at 10k)."""
    from eksmllint import landing
    from eksmllint.core.context import LintRun
    from eksmllint.loader.files import parse_source
    from eksmllint.resource import SourceFile

    resources, _ = parse_source(SourceFile("all.yaml", TEXT, "yaml"))
    run = LintRun(resources, [])
    calls = count_calls(monkeypatch, landing, "compatible")
    for t in run.templates:
        team = t.node_selector["team"]
        assert [p.name for p in run.landing(t).pools] == [f"pool-{team.split('-')[1]}"]
    assert calls[0] <= POOLS  # one comparison per placement key (a scan: POOLS x POOLS = 1,600)


def test_placement_rules_read_a_templates_requirements_once(monkeypatch):
    """EML701/702 (through the placement verdict) and EML705 read a template's node requirements
    with their paths: computed once per template (kept on the view), not once per rule."""
    from eksmllint.checks.scheduling import _shared

    made = [0]

    class CountedReq(_shared.Req):
        def __init__(self, *args):
            made[0] += 1
            super().__init__(*args)

    monkeypatch.setattr(_shared, "Req", CountedReq)
    lint_text(TEXT, with_overrides(Config(), select=("EML701", "EML702", "EML705")))
    assert 0 < made[0] <= JOBS  # one nodeSelector requirement per template (twice before)


def test_a_quantity_text_is_parsed_once(monkeypatch):
    """Every container of a run repeats a few quantity texts ("160Gi", "40"), read by several
    rules each: the text is matched and converted once (42k parses of the `mixed` shape at 10k)."""
    from eksmllint import quantity

    matched = [0]
    pattern = quantity._QTY

    class Counted:
        def match(self, text):
            matched[0] += 1
            return pattern.match(text)

    monkeypatch.setattr(quantity, "_QTY", Counted())
    texts = ("1234Mi", "37", "750m", "n/a")  # seen by no other test: not cached yet
    values = [quantity.parse_quantity(text) for _ in range(500) for text in texts]
    assert values[:4] == [1234 * 2**20, 37, quantity.Decimal("0.75"), None]
    assert matched[0] == 4  # 2,000 before


def test_gang_missing_says_the_kueue_note_once_per_run(monkeypatch):
    """Every EML201 finding carries the note on the Kueue release assumed: read once per run."""
    from eksmllint.platform import Platform

    asked = count_calls(monkeypatch, Platform, "at_least")
    result = lint_text(TEXT, with_overrides(Config(), select=("EML201",)))
    assert sum(f.code == "EML201" for f in result.findings) == JOBS
    assert asked[0] == 1  # once per finding before


def test_slurm_scripts_of_one_shape_share_their_argument_positions(monkeypatch):
    """Argument k of line n is at the same (immutable) position in every script: a run keeps
    hundreds of arguments a script and made a position object for each (153 -> 116 MB peak for
    1,000 scripts). Counted: positions built for 60 scripts of one shape, against one."""
    from eksmllint.launch import model, slurm

    built = count_calls(monkeypatch, model, "ArgPosition")
    shape = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\nsrun torchrun --nproc_per_node=8 t.py --i {}\n"
    counts = []
    for scripts in (1, 60):
        model.position_at.cache_clear()
        built[0] = 0
        assert all(slurm.parse_sbatch(shape.format(n)).invocations for n in range(scripts))
        counts.append(built[0])
    assert counts[0] > 0 and counts[1] == counts[0]  # 60x before
