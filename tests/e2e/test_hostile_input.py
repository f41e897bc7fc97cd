"""Hostile or unlucky input never crashes, hangs or leaks (issue 16): every problem is a finding
with its file and line, or a clear error, and the rest of the run goes on."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repository import ROOT

from eksmllint import quantity
from eksmllint.cli import cli
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.core.registry import default_registry
from eksmllint.fix import writer
from eksmllint.formatters import RenderOptions, get_renderer
from eksmllint.loader import decode
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
@pytest.mark.parametrize(
    ("text", "field", "line"),
    [
        (job().replace("  parallelism: 2", "  parallelism: 2\n  suspend: !!bool maybe"), "spec.suspend", 7),
        (job(parallelism='"²"'), "spec.parallelism", 6),
        (job(parallelism="9" * 5000), "spec.parallelism", 6),
    ],
)
def test_whole_run_crashes_are_findings_with_a_line(tmp_path, text, field, line):
    path = tmp_path / "job.yaml"
    path.write_text(text)
    result = lint_cli("--format", "json", str(path))
    findings = json.loads(result.output)["findings"]
    schema = [f for f in findings if f["code"] == "EML002"]
    assert schema and field in schema[0]["message"] and schema[0]["line"] == line
    assert not [f for f in findings if f["code"] == "EML000"]


@pytest.mark.parametrize(
    "value",
    [
        ".inf",
        "-.inf",
        ".nan",
        "1e400",
        '"1e999999999"',
        '"1e-999999999"',
        "9" * 5000,
        "99999999999999999999999999999999999",
    ],
)
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
    text = job().replace(
        "          resources:",
        "          volumeMounts:\n            - name: [a, b]\n              mountPath: /dev/shm\n          resources:",
    )
    text = text.replace(
        "      restartPolicy: Never",
        "      restartPolicy: Never\n      volumes:\n        - name: {a: b}\n          emptyDir: {medium: Memory}",
    )
    assert "EML000" not in codes(lint_text(text, Config(), "job.yaml"))


def test_numbers_are_bounded_centrally():
    assert parse_quantity(float("inf")) is None and parse_quantity(float("nan")) is None
    assert parse_quantity("1e999999999") is None and parse_quantity(10**5000) is None
    assert parse_quantity("64Gi") == 64 * 2**30 and parse_quantity(0.5) == parse_quantity("500m")
    assert parse_count(float("inf")) is None and parse_count("8") == 8
    assert (
        quantity.parse_int("²") is None and quantity.parse_int("9" * 5000) is None and quantity.parse_int(" 16 ") == 16
    )
    assert quantity.parse_int(True) is None and quantity.parse_int(-3) == -3 and quantity.parse_int("-3") is None


def test_a_crashing_workload_view_is_an_eml000_on_that_resource_only(monkeypatch):
    from eksmllint.core import context

    real = context.workload_of

    def broken(resource):
        if resource.name == "bad":
            raise RuntimeError("boom")
        return real(resource)

    monkeypatch.setattr(context, "workload_of", broken)
    text = job().replace("name: train", "name: bad") + "---\n" + job().replace("trainer:1.0", "trainer:latest")
    result = lint_text(text, Config(), "jobs.yaml")
    crashes = [f for f in result.active if f.code == "EML000"]
    assert len(crashes) == 1 and "Job bad" in crashes[0].message and crashes[0].location.line == 1
    assert any(f.code == "EML807" and f.resource.name == "train" for f in result.active)


def test_a_parser_bug_is_a_finding_on_that_file_and_the_run_goes_on(tmp_path, monkeypatch):
    from eksmllint.loader import files

    real = files.parse_text

    def broken(text, kind):
        if "bad" in text:
            raise RuntimeError("boom")
        return real(text, kind)

    monkeypatch.setattr(files, "parse_text", broken)
    (tmp_path / "a.yaml").write_text(job().replace("name: train", "name: bad"))
    (tmp_path / "b.yaml").write_text(job().replace("trainer:1.0", "trainer:latest"))
    findings = json.loads(lint_cli("--format", "json", "-j", "1", str(tmp_path)).output)["findings"]
    assert [f["file"].endswith("a.yaml") for f in findings if f["code"] == "EML000"] == [True]
    assert any(f["code"] == "EML807" and f["file"].endswith("b.yaml") for f in findings)


# -- item 7: special files, unreadable paths, read-only folders, --output ------------------------
BAD301 = ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml"  # has a safe fix
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def eksmllint(*args: str, input: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The real console entry point in a subprocess (exit codes, tracebacks, hangs)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "eksmllint", *args],
        input=input,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", [["lint", "--format", "json"], ["fix"]])
def test_a_fifo_in_the_tree_is_never_opened(tmp_path, command):
    (tmp_path / "job.yaml").write_bytes(BAD301.read_bytes())
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it would block until a writer comes: never
    proc = eksmllint(*command, str(tmp_path))  # a hang ends in TimeoutExpired
    assert b"Traceback" not in proc.stderr and b"pipe.yaml" not in proc.stdout + proc.stderr
    assert proc.returncode in (0, 1)
    if command == ["fix"]:
        assert b"fixed " in proc.stderr and (tmp_path / "job.yaml").read_bytes() != BAD301.read_bytes()
    else:
        assert any(f["code"] == "EML301" for f in json.loads(proc.stdout)["findings"])


def test_an_unreadable_directory_is_reported_not_skipped(tmp_path, monkeypatch):
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "job.yaml").write_bytes(BAD301.read_bytes())
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    findings = json.loads(lint_cli("--format", "json", "-j", "1", str(tmp_path)).output)["findings"]
    problems = [f for f in findings if f["code"] == "EML001"]
    assert [(p["file"], p["message"]) for p in problems] == [(str(locked), "cannot read directory: Permission denied")]
    assert any(f["code"] == "EML301" for f in findings)  # the rest is still linted
    fixed = CliRunner().invoke(cli, ["fix", str(tmp_path)], catch_exceptions=False)
    assert fixed.exit_code == 1 and f"{locked}: cannot read directory" in fixed.output
    assert "fixed " in fixed.output  # and the readable file was fixed


def test_an_unreadable_file_is_reported(tmp_path, monkeypatch):
    from eksmllint.loader import files

    (tmp_path / "a.yaml").write_bytes(BAD301.read_bytes())
    (tmp_path / "b.yaml").write_bytes(BAD301.read_bytes())

    def guarded_open(path, *args, **kwargs):
        if str(path).endswith("a.yaml"):
            raise PermissionError(13, "Permission denied", str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(files, "open", guarded_open, raising=False)
    findings = json.loads(lint_cli("--format", "json", "-j", "1", str(tmp_path)).output)["findings"]
    assert [(f["file"], f["message"]) for f in findings if f["code"] == "EML001"] == [
        (str(tmp_path / "a.yaml"), "cannot read file: Permission denied")
    ]
    assert any(f["code"] == "EML301" and f["file"] == str(tmp_path / "b.yaml") for f in findings)


@pytest.mark.skipif(IS_ROOT or not hasattr(os, "geteuid"), reason="permissions do not bind root")
def test_really_unreadable_directory_and_file(tmp_path):
    (tmp_path / "locked").mkdir()
    (tmp_path / "secret.yaml").write_text("a: 1\n")
    os.chmod(tmp_path / "secret.yaml", 0)
    os.chmod(tmp_path / "locked", 0)
    try:
        findings = json.loads(lint_cli("--format", "json", str(tmp_path)).output)["findings"]
    finally:
        os.chmod(tmp_path / "locked", 0o755)
    messages = sorted(f["message"] for f in findings if f["code"] == "EML001")
    assert messages == ["cannot read directory: Permission denied", "cannot read file: Permission denied"]


def test_fix_goes_on_after_a_folder_it_cannot_write(tmp_path, monkeypatch):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "job.yaml").write_bytes(BAD301.read_bytes())
    real = writer.tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir == str(tmp_path / "a"):
            raise PermissionError(13, "Permission denied")  # what a read-only folder answers
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(writer.tempfile, "mkstemp", mkstemp)
    result = CliRunner().invoke(cli, ["fix", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"{tmp_path / 'a' / 'job.yaml'} could not be written" in result.output
    assert (tmp_path / "a" / "job.yaml").read_bytes() == BAD301.read_bytes()
    assert (tmp_path / "b" / "job.yaml").read_bytes() != BAD301.read_bytes()  # the later file is fixed


@pytest.mark.skipif(IS_ROOT, reason="permissions do not bind root")
def test_fix_in_a_really_read_only_folder(tmp_path):
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "job.yaml").write_bytes(BAD301.read_bytes())
    os.chmod(tmp_path / "ro", 0o555)
    try:
        proc = eksmllint("fix", str(tmp_path))
    finally:
        os.chmod(tmp_path / "ro", 0o755)
    assert proc.returncode == 1 and b"could not be written" in proc.stderr and b"Traceback" not in proc.stderr


def test_output_into_a_missing_directory_is_a_usage_error(tmp_path):
    proc = eksmllint("lint", "--format", "json", "--output", str(tmp_path / "nope" / "r.json"), str(BAD301))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert b"does not exist" in proc.stderr and str(tmp_path / "nope").encode() in proc.stderr


# -- item 8: symlinks leading outside the tree -----------------------------------------------------
SECRET = "AKIAHOSTILESECRETKEY0"


def _tree_with_outside_link(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    # a manifest with a finding on the secret's line: a code frame or an HTML report would show it
    (outside / "secret.yaml").write_text(BAD301.read_text().replace("containers:", f"containers:  # {SECRET}", 1))
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "job.yaml").write_bytes(BAD301.read_bytes())
    (tree / "link.yaml").symlink_to(outside / "secret.yaml")
    (tree / "sub" / "inside.yaml").symlink_to(tree / "job.yaml")  # inside the tree: followed
    (tree / "dirlink").symlink_to(outside, target_is_directory=True)
    (tree / "loop").symlink_to(tree, target_is_directory=True)  # a loop when following
    return tree


@pytest.mark.parametrize("fmt", ["json", "html", "text"])
def test_symlinks_out_of_the_tree_are_not_followed_by_default(tmp_path, fmt):
    tree = _tree_with_outside_link(tmp_path)
    out = tmp_path / f"report.{fmt}"
    result = CliRunner().invoke(cli, ["lint", "--format", fmt, "--output", str(out), str(tree)], catch_exceptions=False)
    report = out.read_text() + result.output
    assert SECRET not in report and "link.yaml" not in report
    assert "inside.yaml" in report and "job.yaml" in report


def test_follow_symlinks_opts_in(tmp_path):
    tree = _tree_with_outside_link(tmp_path)
    result = lint_cli("--format", "json", "--follow-symlinks", str(tree))
    files = {Path(f["file"]).relative_to(tree).as_posix() for f in json.loads(result.output)["findings"]}
    assert {"job.yaml", "link.yaml", "sub/inside.yaml", "dirlink/secret.yaml"} <= files
    assert not any(f.startswith("loop/loop") for f in files)  # the loop is walked at most once


def test_fix_does_not_read_symlinks_out_of_the_tree_unless_asked(tmp_path):
    tree = _tree_with_outside_link(tmp_path)
    result = CliRunner().invoke(cli, ["fix", "--diff", str(tree)], catch_exceptions=False)
    assert SECRET not in result.output and "link.yaml" not in result.output and "job.yaml" in result.output
    result = CliRunner().invoke(cli, ["fix", "--diff", "--follow-symlinks", str(tree)], catch_exceptions=False)
    assert "link.yaml" in result.output


# -- item 11: what fix keeps, refuses and cleans up ------------------------------------------------
def test_fix_refuses_to_split_hard_links(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_bytes(BAD301.read_bytes())
    os.link(a, b)
    result = CliRunner().invoke(cli, ["fix", str(a)], catch_exceptions=False)
    assert result.exit_code == 1 and "has 2 hard links; not written" in result.output
    assert a.read_bytes() == BAD301.read_bytes() and os.stat(a).st_ino == os.stat(b).st_ino


@pytest.mark.skipif(not IS_ROOT, reason="only root can give a file to another user")
def test_fix_keeps_owner_group_and_mode(tmp_path):
    p = tmp_path / "job.yaml"
    p.write_bytes(BAD301.read_bytes())
    os.chown(p, 4321, 4322)
    os.chmod(p, 0o664)
    result = CliRunner().invoke(cli, ["fix", str(p)], catch_exceptions=False)
    st = os.stat(p)
    assert result.exit_code == 0 and p.read_bytes() != BAD301.read_bytes()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o664)


def test_fix_refuses_when_the_owner_cannot_be_kept(tmp_path, monkeypatch):
    p = tmp_path / "job.yaml"
    p.write_bytes(BAD301.read_bytes())
    real_stat = os.stat

    def other_owner(path, *args, **kwargs):  # the file looks like another user's
        st = real_stat(path, *args, **kwargs)
        if os.fspath(path) == str(p):
            return os.stat_result(
                (
                    st.st_mode,
                    st.st_ino,
                    st.st_dev,
                    st.st_nlink,
                    st.st_uid + 1,
                    st.st_gid,
                    st.st_size,
                    st.st_atime,
                    st.st_mtime,
                    st.st_ctime,
                )
            )
        return st

    def chown(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(writer.os, "stat", other_owner)
    monkeypatch.setattr(writer.os, "chown", chown)
    result = CliRunner().invoke(cli, ["fix", str(p)], catch_exceptions=False)
    assert result.exit_code == 1 and "belongs to another owner" in result.output
    assert p.read_bytes() == BAD301.read_bytes() and os.listdir(tmp_path) == ["job.yaml"]


def test_a_killed_writers_temp_file_is_removed_by_the_next_run(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process id that no longer runs
    p = tmp_path / "job.yaml"
    p.write_bytes(BAD301.read_bytes())
    stale = tmp_path / f".job.yaml.{gone.pid}.k1ll3d{writer.TMP_SUFFIX}"
    live = tmp_path / f".job.yaml.{os.getppid()}.alive0{writer.TMP_SUFFIX}"  # a running writer's
    stale.write_bytes(b"half")
    live.write_bytes(b"busy")
    assert CliRunner().invoke(cli, ["fix", str(p)], catch_exceptions=False).exit_code == 0
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, "job.yaml"])


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX signals")
def test_sigterm_during_a_write_leaves_no_temp_file_and_the_original(tmp_path):
    p = tmp_path / "job.yaml"
    p.write_bytes(BAD301.read_bytes())
    script = (
        "import os, signal, sys\n"
        "real = os.fsync\n"
        "def fsync(fd):\n"
        "    real(fd)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)  # the kill lands mid-write\n"
        "os.fsync = fsync\n"
        f"sys.argv = ['eksmllint', 'fix', {str(p)!r}]\n"
        "from eksmllint.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 128 + signal.SIGTERM and b"interrupted by signal" in proc.stderr
    assert os.listdir(tmp_path) == ["job.yaml"] and p.read_bytes() == BAD301.read_bytes()


@pytest.mark.slow
def test_fix_stdin_binary_oversized_and_invalid_yaml_are_errors():
    for data, message in [
        (b"kind: Pod\x00\x01", b"binary file"),
        (b"a: " + b"x" * (Config().max_file_size + 10), b"larger than"),
        (b"apiVersion: v1\nkind: [unclosed\n", b"<stdin>:3:1: EML001"),
    ]:
        proc = eksmllint("fix", "-", input=data)
        assert proc.returncode == 1 and message in proc.stderr and proc.stdout == b"", proc.stderr
        assert b"Traceback" not in proc.stderr


def test_fix_stdin_reads_no_more_than_the_size_limit(monkeypatch):
    from types import SimpleNamespace

    from eksmllint.fix.run import read_sources

    class Endless:
        def read(self, size=-1):
            assert 0 <= size <= Config().max_file_size + 1, "unbounded read of stdin"
            return b"a" * size

    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=Endless()))
    sources, _raw, problems, _missing = read_sources(["-"], Config())
    assert not sources and "larger than" in problems[0].message


# -- item 9: memory budgets ----------------------------------------------------------------------
@pytest.mark.slow
def test_a_file_over_the_node_budget_is_an_error_naming_it_and_earlier_documents_are_linted(tmp_path):
    from eksmllint.yamlpos import MAX_NODES

    path = tmp_path / "huge.yaml"
    path.write_text(job().replace("trainer:1.0", "trainer:latest") + "---\n[" + "1," * MAX_NODES + "1]\n")
    findings = json.loads(lint_cli("--format", "json", str(path)).output)["findings"]
    budget = [f for f in findings if f["code"] == "EML001"]
    assert len(budget) == 1 and "node budget" in budget[0]["message"]
    assert budget[0]["file"] == str(path) and budget[0]["line"] == job().count("\n") + 2
    assert any(f["code"] == "EML807" for f in findings)  # the document before it is still linted


def test_a_file_over_the_document_budget_keeps_the_first_documents(monkeypatch):
    from eksmllint import yamlpos

    monkeypatch.setattr(yamlpos, "MAX_DOCUMENTS", 3)
    docs, err = yamlpos.load_yaml_stream("---\nkind: A\n" * 5)
    assert len(docs) == 3 and "document budget" in err.message and err.line == 8


def test_a_run_over_its_budget_names_the_file_where_it_ran_out(tmp_path, monkeypatch):
    from eksmllint import loader

    monkeypatch.setattr(loader, "MAX_RUN_DOCUMENTS", 3)
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.yaml").write_text("---\n".join([job()] * 2))
    result = loader.load([str(tmp_path)])
    (problem,) = result.problems
    assert problem.file == str(tmp_path / "b.yaml") and "run budget" in problem.message
    assert "the 1 after it are not linted" in problem.message
    assert [f.path for f in result.files] == [str(tmp_path / "a.yaml")]


@pytest.mark.slow
def test_memory_stays_bounded_on_a_huge_single_line_file(tmp_path):
    # 4.9 MB, a node every two bytes: 983 MiB before the node budget (issue 16), ~190 MiB now
    path = tmp_path / "line.yaml"
    path.write_text("[" + "1," * 2_450_000 + "1]\n")
    script = (
        "import os, resource, subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-m', 'eksmllint', 'lint', '-j', '1', '--format', 'json',"
        f" {str(path)!r}], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "_, status, usage = os.wait4(p.pid, 0)\n"
        "print(usage.ru_maxrss // 1024, os.waitstatus_to_exitcode(status))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    peak_mib, code = map(int, proc.stdout.split())
    assert code == 1 and peak_mib < 400, (peak_mib, code, proc.stderr)


# -- the fuzz test: mutated rule fixtures never crash the lint pipeline ----------------------------
FUZZ_EXAMPLES = int(os.environ.get("EKSMLLINT_FUZZ_EXAMPLES", "600"))
FIXTURES = sorted(
    p
    for p in (ROOT / "fixtures").rglob("*")
    if p.suffix in (".yaml", ".yml", ".json", ".sbatch", ".sh") and p.is_file()
)
#: What an attacker or a typo puts where a value was: non-finite and huge numbers, other digits,
#: wrong types, tags whose constructor fails, unknown tags, aliases to nothing, empty values.
HOSTILE_VALUES = [
    ".inf",
    "-.inf",
    ".nan",
    ".NaN",
    "1e400",
    '"1e999999999"',
    '"1e-999999999"',
    "9" * 5000,
    "-" + "9" * 4400,
    '"²"',
    '"٣"',
    "0x1F",
    "0o17",
    "1_000",
    "99999999999999999999999999999999999",
    "-1",
    "0",
    "[1, 2]",
    "{a: 1}",
    "[]",
    "{}",
    "~",
    "true",
    "!!bool maybe",
    "!!int x",
    "!!float .",
    "!!binary AAAA",
    "!!timestamp 2001-13-99",
    "!custom {a: b}",
    "*nowhere",
    '"\\n"',
    '""',
    "&a [*a]",
    "'9Ei'",
    "'1e3Gi'",
    "'+.5m'",
]
_VALUE = re.compile(r"(?m)(:[ \t]+|^[ \t]*- )([^\s#&*!|>][^#\n]*?)[ \t]*$")
_NUMBER = re.compile(r"\d+(\.\d+)?")
_REGISTRY = default_registry()


def _replace_nth(pattern: re.Pattern, text: str, n: int, group: int, new) -> str:
    """``text`` with the ``n``-th match's ``group`` replaced by ``new`` (a string, or a function
    of the old text)."""
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = matches[n % len(matches)]
    old = m.group(group)
    return text[: m.start(group)] + (new(old) if callable(new) else new) + text[m.end(group) :]


TAGS = ["!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq", "!!binary", "!!timestamp", "!x"]
ODD_NUMBERS = ["9" * 5000, "0", "99999999999999999999999999", "1e999", "²"]


def _mutate(data: bytes, op: tuple) -> bytes:
    kind, n, arg = op
    if kind == "flip":  # one byte anywhere
        i = n % max(len(data), 1)
        return data[:i] + bytes([arg % 256]) + data[i + 1 :]
    text = data.decode("utf-8", "surrogateescape")
    if kind == "value":  # a value swapped for a hostile one (number, type, tag, alias ...)
        text = _replace_nth(_VALUE, text, n, 2, HOSTILE_VALUES[arg % len(HOSTILE_VALUES)])
    elif kind == "number":  # a number inside a value ("8", "64Gi", "--nproc_per_node=8") made huge or odd
        text = _replace_nth(_NUMBER, text, n, 0, ODD_NUMBERS[arg % len(ODD_NUMBERS)])
    else:  # a tag in front of a value
        text = _replace_nth(_VALUE, text, n, 2, lambda old: f"{TAGS[arg % len(TAGS)]} {old}")
    return text.encode("utf-8", "surrogateescape")


_OPS = st.tuples(
    st.sampled_from(["flip", "value", "value", "number", "tag"]), st.integers(0, 10**6), st.integers(0, 10**6)
)


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=5000,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@pytest.mark.slow
@given(fixture=st.sampled_from(FIXTURES), ops=st.lists(_OPS, min_size=1, max_size=4))
def test_mutated_fixtures_never_crash_the_lint_pipeline(fixture, ops):
    data = fixture.read_bytes()
    for op in ops:
        data = _mutate(data, op)
    name = fixture.name
    text, problem = decode(name, data)
    if text is None:
        assert problem is not None and problem.message  # a clear reason, never an exception
        return
    result = lint_text(text, Config(), name, _REGISTRY)
    crashes = [f.message for f in result.findings if f.code == "EML000"]
    assert not crashes, (fixture.name, ops, crashes)
    for fmt in ("text", "json"):  # what the user sees must render too
        assert isinstance(get_renderer(fmt)(result, _REGISTRY, RenderOptions()), str)


def test_digit_runs_read_by_rules_are_bounded():
    # found by the fuzz test and by reading every int(m.group(...)) fed by user text
    from eksmllint.checks.helpers import index_ranges
    from eksmllint.checks.precision.eml404_neuron_precision_env import neuron_sdk_of_image
    from eksmllint.checks.storage.eml903_ami_family_unsupported import _version
    from eksmllint.launch.slurm import parse_slurm_memory_mb

    huge = "9" * 5000
    assert neuron_sdk_of_image(f"x:py310-sdk{huge}.1-u") is None
    assert neuron_sdk_of_image("x:py310-sdk2.20.0-ubuntu20.04") == (2, 20)
    assert _version(f"v{huge}.1") is None and _version("v1.32") == (1, 32)
    assert index_ranges(f"0,{huge}") is None and index_ranges("0,2-3") == [(0, 0), (2, 3)]
    with pytest.raises(ValueError, match="memory specification"):  # an sbatch error (EML005), not a crash
        parse_slurm_memory_mb(huge[:400] + "K")
    assert parse_slurm_memory_mb("64G") == 65536
