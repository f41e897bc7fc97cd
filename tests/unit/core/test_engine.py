"""Engine behaviour: crash isolation, determinism, suppression, selection, config."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint.config import ConfigError, parse_config, resolve_config
from eksmllint.core.engine import lint_text
from eksmllint.core.registry import Registry, default_registry
from eksmllint.core.rule import Rule

SHM_JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {name}
  namespace: training
{annotations}spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch{comment}
              image: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime
              resources:
                limits:
                  nvidia.com/gpu: 4
                  memory: 64Gi
"""


def job(name="j", annotations="", comment=""):
    return SHM_JOB.format(name=name, annotations=annotations, comment=comment)


def codes(result):
    return [f.code for f in result.active]


def test_finding_has_location_and_resource():
    (f,) = [f for f in lint_text(job(), name="job.yaml").active if f.code == "EML301"]
    assert (f.location.file, f.location.line) == ("job.yaml", 13)
    assert f.resource.kind == "PyTorchJob" and f.resource.name == "j" and f.resource.namespace == "training"
    assert f.fix is not None


def test_crashing_rule_becomes_internal_error_and_run_continues():
    base = default_registry()

    def boom(ctx, target):
        raise ZeroDivisionError("bad maths")

    broken = Rule(base.get("EML301").spec.model_copy(update={"code": "EML399", "slug": "always-crashes"}), boom)
    registry = Registry(list(base) + [broken])
    result = lint_text(job(), registry=registry)
    internal = [f for f in result.active if f.code == "EML000"]
    assert internal and "EML399" in internal[0].message and "PyTorchJob training/j" in internal[0].message
    assert "EML301" in codes(result)  # the other rules still ran


def test_annotation_suppresses_exactly_the_named_rule():
    plain = lint_text(job())
    ann = '  annotations:\n    eksmllint.io/ignore: "shm-missing # benchmark of the default"\n'
    suppressed = lint_text(job(annotations=ann))
    assert "EML301" in codes(plain) and "EML301" not in codes(suppressed)
    assert sorted(codes(plain)) == sorted(codes(suppressed) + ["EML301"])
    assert [f.code for f in suppressed.suppressed] == ["EML301"]


def test_inline_comment_suppresses_on_the_line_and_reports_unused():
    result = lint_text(job(comment="  # eksmllint: disable=EML301"))
    assert "EML301" not in codes(result)
    stale = lint_text(job(comment="  # eksmllint: disable=EML302"))
    assert "EML006" in codes(stale)


def test_unknown_rule_in_suppression_is_reported():
    ann = '  annotations:\n    eksmllint.io/ignore: "EML999"\n'
    result = lint_text(job(annotations=ann))
    assert any(f.code == "EML006" and "EML999" in f.message for f in result.active)


def test_yaml_errors_cannot_be_suppressed():
    result = lint_text("a: 1\na: 2  # eksmllint: disable=EML001\n")
    # the finding stays, and the directive that tried to hide it is reported as useless
    assert codes(result) == ["EML001", "EML006"]


def test_per_path_ignores_and_severity_override():
    cfg = parse_config({"per-path-ignores": {"jobs/*.yaml": ["EML301"]}}, "cfg")
    assert "EML301" not in codes(lint_text(job(), cfg, name="jobs/a.yaml"))
    cfg = parse_config({"severity": {"shm-missing": "error"}}, "cfg")
    (f,) = [f for f in lint_text(job(), cfg).active if f.code == "EML301"]
    assert str(f.severity) == "error"


def test_select_and_ignore():
    assert codes(lint_text(job(), parse_config({"ignore": ["shm"]}, "c"))).count("EML301") == 0
    only = codes(lint_text(job(), parse_config({"select": ["EML301"]}, "c")))
    assert set(only) == {"EML301"}
    with pytest.raises(ConfigError, match="no such rule"):
        lint_text(job(), parse_config({"select": ["EML777"]}, "c"))


def test_config_unknown_key_names_key_and_file(tmp_path):
    (tmp_path / ".eksmllint.yaml").write_text("fail-on: error\nselec: [EML301]\n")
    with pytest.raises(ConfigError) as err:
        resolve_config(None, tmp_path)
    assert "selec" in str(err.value) and ".eksmllint.yaml" in str(err.value)


def test_config_found_upwards_and_in_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.eksmllint]\nkubernetes-version = "1.32"\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    cfg = resolve_config(None, sub)
    assert cfg.kubernetes_version == "1.32" and cfg.source.endswith("pyproject.toml")


def test_output_is_sorted_and_deterministic():
    text = job("b") + "---\n" + job("a")
    first = lint_text(text).findings
    assert first == lint_text(text).findings
    assert first == sorted(first, key=lambda f: f.sort_key())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta"]), min_size=1, max_size=4, unique=True))
def test_document_order_does_not_change_findings(names):
    docs = [job(n) for n in names]
    forward = {(f.code, f.resource.name) for f in lint_text("---\n".join(docs)).active}
    backward = {(f.code, f.resource.name) for f in lint_text("---\n".join(reversed(docs))).active}
    assert forward == backward
