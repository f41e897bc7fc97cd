"""Hostile or unlucky input never crashes, hangs or leaks (issue 16): every problem is a finding
with its file and line, or a clear error, and the rest of the run goes on."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from eksmllint.cli import cli
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint import quantity
from eksmllint.quantity import parse_count, parse_quantity

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  parallelism: {parallelism}
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: trainer:1.0
          resources:
            limits:
              nvidia.com/gpu: {gpus}
              memory: {memory}
"""


def job(parallelism="2", gpus="8", memory="64Gi") -> str:
    return JOB.format(parallelism=parallelism, gpus=gpus, memory=memory)


def lint_cli(*args: str, input: str | None = None):
    """The lint command in-process; an exception escaping it fails the test (no traceback ever)."""
    return CliRunner().invoke(cli, ["lint", "--no-frames", *args], input=input, catch_exceptions=False)


def codes(result) -> list[str]:
    return [f.code for f in result.active]


# -- item 5: numbers and tags that used to crash the run or a rule -------------------------------
@pytest.mark.parametrize(("text", "field", "line"), [
    (job().replace("  parallelism: 2", "  parallelism: 2\n  suspend: !!bool maybe"), "spec.suspend", 7),
    (job(parallelism='"²"'), "spec.parallelism", 6),
    (job(parallelism="9" * 5000), "spec.parallelism", 6),
])
def test_whole_run_crashes_are_findings_with_a_line(tmp_path, text, field, line):
    path = tmp_path / "job.yaml"
    path.write_text(text)
    result = lint_cli("--format", "json", str(path))
    findings = json.loads(result.output)["findings"]
    schema = [f for f in findings if f["code"] == "EML002"]
    assert schema and field in schema[0]["message"] and schema[0]["line"] == line
    assert not [f for f in findings if f["code"] == "EML000"]


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e400", '"1e999999999"', '"1e-999999999"',
                                   "9" * 5000, "99999999999999999999999999999999999"])
def test_non_finite_and_huge_numbers_never_crash_a_rule(value):
    for text in (job(gpus=value), job(memory=value), job(parallelism=value)):
        result = lint_text(text, Config(), "job.yaml")
        assert "EML000" not in codes(result), [f.message for f in result.active if f.code == "EML000"]


def test_one_infinite_gpu_count_does_not_disable_rules_for_the_other_workloads():
    # rules that look at the whole run (EML807, EML105 ...) used to crash on the one .inf and so
    # reported nothing for any workload; the .inf workload itself has an unknown GPU count now
    hostile = job(gpus=".inf").replace("name: train", "name: inf")
    tagged = job().replace("trainer:1.0", "trainer:latest")
    alone = lint_text(tagged, Config(), "jobs.yaml")
    together = lint_text(hostile + "---\n" + tagged, Config(), "jobs.yaml")
    assert "EML000" not in codes(together)
    expected = sorted((f.code, f.message) for f in alone.active)
    assert "EML807" in codes(alone)
    assert sorted((f.code, f.message) for f in together.active if f.resource.name == "train") == expected


def test_list_valued_names_never_crash_a_rule():
    text = job().replace("          resources:", "          volumeMounts:\n            - name: [a, b]\n"
                         "              mountPath: /dev/shm\n          resources:")
    text = text.replace("      restartPolicy: Never", "      restartPolicy: Never\n      volumes:\n"
                        "        - name: {a: b}\n          emptyDir: {medium: Memory}")
    assert "EML000" not in codes(lint_text(text, Config(), "job.yaml"))


def test_numbers_are_bounded_centrally():
    assert parse_quantity(float("inf")) is None and parse_quantity(float("nan")) is None
    assert parse_quantity("1e999999999") is None and parse_quantity(10**5000) is None
    assert parse_quantity("64Gi") == 64 * 2**30 and parse_quantity(0.5) == parse_quantity("500m")
    assert parse_count(float("inf")) is None and parse_count("8") == 8
    assert quantity.parse_int("²") is None and quantity.parse_int("9" * 5000) is None and quantity.parse_int(" 16 ") == 16
    assert quantity.parse_int(True) is None and quantity.parse_int(-3) == -3 and quantity.parse_int("-3") is None


def test_a_crashing_workload_view_is_an_eml000_on_that_resource_only(monkeypatch):
    import eksmllint.core.engine as engine

    real = engine.workload_of

    def broken(resource):
        if resource.name == "bad":
            raise RuntimeError("boom")
        return real(resource)

    monkeypatch.setattr(engine, "workload_of", broken)
    text = job().replace("name: train", "name: bad") + "---\n" + job().replace("trainer:1.0", "trainer:latest")
    result = lint_text(text, Config(), "jobs.yaml")
    crashes = [f for f in result.active if f.code == "EML000"]
    assert len(crashes) == 1 and "Job bad" in crashes[0].message and crashes[0].location.line == 1
    assert any(f.code == "EML807" and f.resource.name == "train" for f in result.active)


def test_a_parser_bug_is_a_finding_on_that_file_and_the_run_goes_on(tmp_path, monkeypatch):
    import eksmllint.loader as loader

    real = loader.parse_text

    def broken(text, kind):
        if "bad" in text:
            raise RuntimeError("boom")
        return real(text, kind)

    monkeypatch.setattr(loader, "parse_text", broken)
    (tmp_path / "a.yaml").write_text(job().replace("name: train", "name: bad"))
    (tmp_path / "b.yaml").write_text(job().replace("trainer:1.0", "trainer:latest"))
    findings = json.loads(lint_cli("--format", "json", "-j", "1", str(tmp_path)).output)["findings"]
    assert [f["file"].endswith("a.yaml") for f in findings if f["code"] == "EML000"] == [True]
    assert any(f["code"] == "EML807" and f["file"].endswith("b.yaml") for f in findings)
