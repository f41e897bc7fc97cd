"""Placeholders and templates (issue 12, cause 3): placeholders are unknown values, envsubst
templates are linted, Helm chart sources are reported once ("render first"), and nothing a run
finds is skipped silently."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from builders import said
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.config import Config
from eksmllint.core.engine import lint_paths, lint_text
from eksmllint.placeholders import is_placeholder
from eksmllint.schema import validate_core

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: tokenize
spec:
  parallelism: {value}
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: tokenize
          image: python:3.11.9-slim
"""

# A real defect (unknown field) that only shows if the file is linted at all.
DEFECT = JOB.format(value="2").replace(
    "      restartPolicy: Never\n", "      restartPolicy: Never\n      restartPolicyy: Never\n"
)


def codes(result) -> list[str]:
    return [f.code for f in result.active]


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


# -- placeholders --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "$NUM_NODES",
        "${NUM_NODES}",
        "${NODES:-2}",
        "{{ .Values.nodes }}",
        "PLACEHOLDER_NUM_NODES",
        "REPLACE_ME",
        "<your-bucket>",
        "TODO",
        " ${X} ",
    ],
)
def test_placeholder_tokens(value):
    assert is_placeholder(value)


@pytest.mark.parametrize("value", ["four", "num_nodes", "8", "NEVER", "Never", "$(NUM_NODES)", "${A}${B}", "", 8, None])
def test_not_placeholders(value):
    assert not is_placeholder(value)


@pytest.mark.parametrize("value", ["PLACEHOLDER_NUM_NODES", "REPLACE_ME", "<num-nodes>", "${NUM_NODES}", "$NUM_NODES"])
def test_core_schema_reads_placeholder_as_unknown(value):
    assert validate_core(json.loads(json.dumps(__import__("yaml").safe_load(JOB.format(value=value))))) == []
    assert "EML002" not in codes(lint_text(JOB.format(value=value), name="job.yaml"))


@pytest.mark.parametrize("value", ["four", "num_nodes", '"2"', "NEVER"])
def test_core_schema_still_rejects_real_type_errors(value):
    result = lint_text(JOB.format(value=value), name="job.yaml")
    assert [said(f) for f in result.active if f.code == "EML002"] == [
        f'"spec.parallelism": expected integer, got string "{value.strip(chr(34))}"'
    ]


def test_placeholder_in_enum_is_unknown_but_a_wrong_word_is_not():
    nodepool = (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: gpu}}\nspec:\n"
        "  template: {{spec: {{requirements: [], nodeClassRef: {{group: karpenter.k8s.aws, "
        "kind: EC2NodeClass, name: gpu}}}}}}\n"
        "  disruption: {{consolidationPolicy: {policy}, consolidateAfter: 1m}}\n"
    )
    schema_errors = [
        f
        for p in ("PLACEHOLDER_POLICY", "<policy>", "REPLACE_ME", "WhenUnderutilized")
        for f in lint_text(nodepool.format(policy=p), name="np.yaml").active
        if f.code == "EML002"
    ]
    assert [said(f).split(" (got")[-1] for f in schema_errors] == [' "WhenUnderutilized")']


def test_placeholder_is_never_a_number():
    from eksmllint.workload import _int

    assert _int("PLACEHOLDER_NUM_NODES", 1) is None and _int("<nodes>", 1) is None


# -- envsubst templates ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["train.yaml-template", "train.yml.tpl", "train.yaml.tmpl", "train.yaml.template", "train.template"]
)
def test_directory_run_lints_envsubst_templates(tmp_path, name):
    write(tmp_path, {name: DEFECT})
    result = lint_paths([str(tmp_path)], Config())
    assert [(Path(f.location.file).name, f.code) for f in result.active] == [(name, "EML002")]
    assert result.skipped == []


def test_bare_template_that_is_no_manifest_is_skipped_with_a_reason(tmp_path):
    write(
        tmp_path,
        {
            "motd.template": "Welcome to ${CLUSTER_NAME}\n",
            "run.sh": "#!/bin/sh\necho hi\n",
            "nginx.conf.j2": "server { listen {{ port }}; }\n",
        },
    )
    result = lint_paths([str(tmp_path)], Config())
    assert result.active == []
    assert {Path(s.file).name: s.reason for s in result.skipped} == {
        "motd.template": "template with no top-level apiVersion/kind line and no #SBATCH line: "
        "not a manifest or batch script",
        "run.sh": "shell script without an #SBATCH line: not a Slurm batch script",
    }  # nginx.conf.j2 is not a candidate at all (no manifest suffix)


def test_batch_script_template_with_expressions_is_judged_after_rendering(tmp_path):
    write(
        tmp_path,
        {
            "train-sub.template": "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --job-name={{ NAME }}-fsdp\n"
            "srun python train.py\n"
        },
    )
    result = lint_paths([str(tmp_path)], Config())
    assert [(f.code, f.location.line) for f in result.active] == [("EML007", 3)]
    assert [Path(s.file).name for s in result.skipped] == ["train-sub.template"]


# -- Helm charts and other {{ }} sources -------------------------------------------------------------

CHART = {
    "charts/trainer/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    "charts/trainer/values.yaml": "nodes: 2\n",
    "charts/trainer/templates/job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n"
    "  name: {{ .Release.Name }}\n  labels:\n"
    '    {{- include "trainer.labels" . | nindent 4 }}\n',
    "charts/trainer/templates/_helpers.tpl": '{{- define "trainer.labels" -}}\napp: trainer\n{{- end }}\n',
    "charts/trainer/templates/parses.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
    'data:\n  replicas: "{{ .Values.nodes }}"\n',
    "charts/trainer/templates/static.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n"
    "nonsense: true\n",
}


def test_chart_reported_once_and_templates_not_linted(tmp_path):
    write(tmp_path, CHART)
    result = lint_paths([str(tmp_path)], Config())
    chart = tmp_path / "charts" / "trainer"
    found = [(f.code, str(f.severity), f.location.file, f.location.line) for f in result.active]
    # one render-first finding for the chart; the static file without {{ }} is linted as it is
    assert found == [
        ("EML007", "info", str(chart / "Chart.yaml"), 1),
        ("EML002", "error", str(chart / "templates" / "static.yaml"), 7),
    ]
    message = result.active[0].message
    assert f"helm template {chart} | eksmllint lint -" in result.active[0].detail and "3 template file(s)" in message
    assert sorted(Path(s.file).name for s in result.skipped) == ["_helpers.tpl", "job.yaml", "parses.yaml"]
    assert "EML001" not in codes(result)


def test_chart_found_when_linting_only_its_templates_folder(tmp_path, monkeypatch):
    write(tmp_path, CHART)
    monkeypatch.chdir(tmp_path / "charts" / "trainer")
    result = lint_paths(["templates/job.yaml"], Config())
    assert [(f.code, f.location.file) for f in result.active] == [("EML007", "Chart.yaml")]
    assert "helm template . | eksmllint lint -" in result.active[0].detail


def test_templates_folder_without_chart_is_linted(tmp_path):
    """Not a chart (no Chart.yaml): an envsubst 'templates' folder of a sample is linted."""
    write(tmp_path, {"fine-tuning/templates/train.yaml-template": DEFECT})
    assert codes(lint_paths([str(tmp_path)], Config())) == ["EML002"]


def test_template_source_outside_a_chart_is_render_first_not_yaml_invalid(tmp_path):
    write(tmp_path, {"job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ job_name }}\n"})
    result = lint_paths([str(tmp_path)], Config())
    assert [(f.code, f.location.line) for f in result.active] == [("EML007", 4)]


def test_broken_yaml_away_from_template_syntax_stays_yaml_invalid(tmp_path):
    text = 'metadata:\n  name: "{{workflow.name}}"\nspec:\n\tbad: tab\n'
    write(tmp_path, {"wf.yaml": text})
    assert codes(lint_paths([str(tmp_path)], Config())) == ["EML001"]


def test_render_first_can_be_ignored(tmp_path):
    write(tmp_path, CHART)
    assert "EML007" not in codes(lint_paths([str(tmp_path)], Config(ignore=("EML007",))))


def test_parallel_loading_reports_the_same(tmp_path):
    write(tmp_path, {**CHART, "run.sh": "echo hi\n", "b.yaml-template": DEFECT})
    serial = lint_paths([str(tmp_path)], Config(), jobs=1)
    parallel = lint_paths([str(tmp_path)], Config(), jobs=2)
    assert [f.sort_key() for f in serial.active] == [f.sort_key() for f in parallel.active]
    assert serial.skipped == parallel.skipped and len(serial.skipped) == 4


def test_fix_leaves_chart_templates_alone(tmp_path):
    from eksmllint.core.registry import default_registry
    from eksmllint.fix.run import read_sources

    write(tmp_path, CHART)
    sources, _raw, problems, _missing = read_sources([str(tmp_path)], Config())
    assert sorted(Path(s.path).name for s in sources) == ["Chart.yaml", "static.yaml", "values.yaml"]
    assert not problems and default_registry().get("EML007") is not None


# -- the run says what it skipped ------------------------------------------------------------------


def test_verbose_and_json_list_skipped_files(tmp_path):
    write(tmp_path, {**CHART, "run.sh": "echo hi\n"})
    runner = CliRunner()
    quiet = runner.invoke(cli, ["lint", "--exit-zero", "--no-frames", str(tmp_path)])
    assert "skipped" not in quiet.stderr
    loud = runner.invoke(cli, ["lint", "--exit-zero", "--no-frames", "-v", str(tmp_path)])
    assert f"eksmllint: skipped {tmp_path / 'run.sh'}: shell script without an #SBATCH line" in loud.stderr
    assert loud.stderr.count("eksmllint: skipped ") == 4
    report = json.loads(runner.invoke(cli, ["lint", "--exit-zero", "--format", "json", str(tmp_path)]).stdout)
    assert report["summary"]["skipped"] == 4
    assert {
        "file": str(tmp_path / "run.sh"),
        "reason": "shell script without an #SBATCH line: not a Slurm batch script",
    } in report["skipped"]


# -- pod templates of other tools ------------------------------------------------------------------

SPARK_POD_TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata:
  name: driver
spec:
  nodeSelector:
    NodeGroupType: spark-driver
  tolerationz: []
"""


def test_spark_pod_template_needs_no_containers_but_is_still_validated(tmp_path):
    write(tmp_path, {"driver-pod-template.yaml": SPARK_POD_TEMPLATE, "driver-pod.yaml": SPARK_POD_TEMPLATE})
    found = sorted((Path(f.location.file).name, said(f)) for f in lint_paths([str(tmp_path)], Config()).active)
    assert found == [
        ("driver-pod-template.yaml", 'unknown field "spec.tolerationz" (did you mean "tolerations"?)'),
        ("driver-pod.yaml", 'missing required field "containers" in spec'),
        ("driver-pod.yaml", 'unknown field "spec.tolerationz" (did you mean "tolerations"?)'),
    ]


def test_pre_commit_hook_passes_the_files_a_directory_run_picks_up(tmp_path):
    import re

    import yaml

    from eksmllint.loader import discover

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    pattern = next(h for h in hooks if h["id"] == "eksmllint")["files"]
    names = [
        "a.yaml",
        "b.yml",
        "c.json",
        "d.sbatch",
        "e.slurm",
        "f.sh",
        "g.bash",
        "h.yaml-template",
        "i.yml.tpl",
        "j.yaml.tmpl",
        "k.yaml.template",
        "l.yaml.j2",
        "m.template",
        "n.tpl",
        "o.tmpl",
    ]
    others = ["nginx.conf.j2", "notes.txt", "x.py"]
    for name in names + others:
        (tmp_path / name).write_text("kind: ConfigMap\n", encoding="utf-8")
    assert sorted(n for n in names + others if re.search(pattern, n)) == sorted(names)
    assert sorted(Path(f).name for f in discover([str(tmp_path)])[0]) == sorted(names)
