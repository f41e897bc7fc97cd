"""The install story (issue 25 item 9): one image name everywhere, a GitHub Action whose steps
run, a GitLab CI template, a container build where the machine can run one."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml
from controlplane import wait_for_build
from repository import E2E_REQUIRED, ROOT, registry_unreachable

from eksmllint import __version__

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
IMAGE_BUILD = ROOT / "scripts" / "e2e" / "build-image.sh"
DOCKERFILE_CHROOT = ROOT / "scripts" / "e2e" / "dockerfile_chroot.py"
ACTION = ROOT / "action.yml"
GITLAB_TEMPLATE = ROOT / "ci" / "eksmllint.gitlab-ci.yml"


def built_image() -> str:
    """The tag deploy/Dockerfile documents building (its `docker build ... -t IMAGE .` line)."""
    m = re.search(r"^#\s+docker build -f deploy/Dockerfile -t (\S+) \.$", DOCKERFILE.read_text(), re.MULTILINE)
    assert m, "deploy/Dockerfile no longer says how to build it"
    return m.group(1)


def test_one_image_name_everywhere():
    """The chart's default image is what the Dockerfile builds, tagged with the package version,
    and it is what the docker pre-commit hook, the README and the push command use."""
    chart = yaml.safe_load((ROOT / "charts" / "eksmllint" / "Chart.yaml").read_text())
    values = yaml.safe_load((ROOT / "charts" / "eksmllint" / "values.yaml").read_text())
    default = f"{values['image']['repository']}:{values['image']['tag'] or chart['appVersion']}"
    image = built_image()
    assert image == default == f"ghcr.io/eksmllint/eksmllint:{__version__}"
    assert f"docker push {image}" in DOCKERFILE.read_text()
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["eksmllint-docker"]["language"] == "docker_image"
    assert shlex.split(hooks["eksmllint-docker"]["entry"])[:3] == ["--entrypoint", "eksmllint", image]
    readme = (ROOT / "README.md").read_text()
    assert f"docker build -f deploy/Dockerfile -t {image} ." in readme and f"docker push {image}" in readme


def _docker_unusable() -> str | None:
    docker = shutil.which("docker")
    if docker is None:
        return "no docker client"
    probe = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return f"docker cannot run a build here: {(probe.stderr.strip().splitlines() or ['docker info failed'])[-1]}"
    return None


@pytest.mark.slow
def test_image_builds_and_runs_the_cli_and_the_webhook(tmp_path):
    """Builds deploy/Dockerfile (PYTHON_IMAGE: a Python base the daemon has or can pull, e.g. one
    made offline with debootstrap and `docker import`), then lints the examples in it."""
    reason = _docker_unusable()
    if reason:
        pytest.skip(reason)
    base = os.environ.get("EKSMLLINT_PYTHON_IMAGE", "python:3.11.13-slim-bookworm")
    tag = "eksmllint-test:local"
    subprocess.run(
        ["docker", "build", "-f", str(DOCKERFILE), "--build-arg", f"PYTHON_IMAGE={base}", "-t", tag, str(ROOT)],
        check=True,
        timeout=1800,
    )
    examples = ROOT / "fixtures" / "examples"
    lint = subprocess.run(
        ["docker", "run", "--rm", "-v", f"{examples}:/src:ro", "-w", "/src", "--entrypoint", "eksmllint", tag]
        + ["lint", "--exit-zero", "."],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert lint.returncode == 0 and "Linted " in lint.stdout, lint.stderr
    serve = subprocess.run(["docker", "run", "--rm", tag, "--help"], capture_output=True, text=True, timeout=300)
    assert serve.returncode == 0 and "--tls-cert" in serve.stdout


def _chroot_unusable() -> str | None:
    if os.geteuid() != 0:
        return "not root: chroot, unshare and mount need it"
    missing = [tool for tool in ("debootstrap", "chroot", "unshare", "mount") if shutil.which(tool) is None]
    return f"{', '.join(missing)} not installed (apt-get install debootstrap)" if missing else None


def _image_cache() -> Path:
    return Path(os.environ.get("EKSMLLINT_IMAGE_CACHE") or Path.home() / ".cache" / "eksmllint-image")


def _in_image(image: str, *args: str, entrypoint: str | None = None, mount: str | None = None, workdir=None):
    extra = [f"--entrypoint={entrypoint}"] * bool(entrypoint) + [f"--mount={mount}"] * bool(mount)
    extra += [f"--workdir={workdir}"] * bool(workdir)
    return subprocess.run(
        [sys.executable, str(DOCKERFILE_CHROOT), "run", image, *extra, "--", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _dockerfile_chroot():
    import importlib.util

    spec = importlib.util.spec_from_file_location("dockerfile_chroot", DOCKERFILE_CHROOT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_offline_build_interprets_every_instruction_of_the_dockerfile():
    """Always (no root needed): what the offline build reads of deploy/Dockerfile, so a new
    instruction there fails here first, and the base it stands in for."""
    chroot = _dockerfile_chroot()
    steps = chroot.instructions(DOCKERFILE.read_text())
    assert {word for _, word, _ in steps} <= set(chroot.INTERPRETED)
    default = next(rest for _, word, rest in steps if word == "ARG" and rest.startswith("PYTHON_IMAGE="))
    assert chroot.debian_release(default.partition("=")[2]) == ("bookworm", "3.11")
    env = chroot.env_pairs("PATH=/opt/eksmllint/bin:$PATH \tA=1", {"PATH": "/usr/bin"})
    assert env == {"PATH": "/opt/eksmllint/bin:/usr/bin", "A": "1"}
    with pytest.raises(chroot.BuildError):
        chroot.debian_release("alpine:3.20")


@pytest.mark.slow
def test_image_builds_and_runs_without_a_docker_engine():
    """The same build and the same two runs as above where no Docker engine runs: deploy/Dockerfile
    interpreted instruction by instruction over a debootstrapped Debian root (python:3.11-slim's
    release, Debian's python3 3.11) by scripts/e2e/build-image.sh, which .ci/run starts in the
    background. In CI a machine that cannot do it fails the test instead of skipping it."""
    reason = _chroot_unusable()
    if reason:
        if E2E_REQUIRED:
            pytest.fail(f"the offline image build is required here, but {reason}", pytrace=False)
        pytest.skip(reason)
    wait_for_build(timeout=45 * 60, pid_file=_image_cache() / "build.pid")  # .ci/run's, if running
    build = subprocess.run([str(IMAGE_BUILD)], capture_output=True, text=True, timeout=1800)
    assert build.returncode == 0, build.stderr[-4000:]  # reused when the tree is unchanged
    image = build.stdout.strip().splitlines()[-1]
    examples = ROOT / "fixtures" / "examples"
    lint = _in_image(
        image, "lint", "--exit-zero", ".", entrypoint="eksmllint", mount=f"{examples}:/src:ro", workdir="/src"
    )
    assert lint.returncode == 0 and "Linted " in lint.stdout and "EML" in lint.stdout, lint.stderr
    serve = _in_image(image, "--help")  # ENTRYPOINT ["eksmllint", "serve"] with the arguments given
    assert serve.returncode == 0 and "--tls-cert" in serve.stdout, serve.stderr
    whoami = _in_image(image, "-c", "import os; print(os.getuid())", entrypoint="python")
    assert whoami.stdout.strip() == "65532"  # USER: the webhook does not run as root


def _action_steps() -> list[dict]:
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    return action["runs"]["steps"]


def _expand(text: str, values: dict[str, str]) -> str:
    """GitHub's ${{ ... }} expressions the steps use, as the runner would expand them."""

    def value(m: re.Match) -> str:
        key = m.group(1).strip()
        if key not in values:
            raise AssertionError(f"action.yml uses {key!r}, which this test does not provide")
        return values[key]

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def test_action_uses_only_pinned_actions_and_lints_once():
    used = [s["uses"] for s in _action_steps() if "uses" in s]
    assert used == ["actions/setup-python@v5", "github/codeql-action/upload-sarif@v3"]
    lint = next(s for s in _action_steps() if s.get("id") == "lint")
    assert lint["run"].count("eksmllint lint") == 1 and "sarif:" in lint["run"] and "--format github" in lint["run"]


@pytest.mark.slow
def test_action_steps_run(tmp_path):
    """Runs the action's shell steps as the runner would (setup-python and upload-sarif are
    GitHub's own actions): installs this checkout into a fresh environment, lints a bad manifest
    into SARIF and annotations, and fails the job."""
    reason = registry_unreachable()
    if reason:
        pytest.skip(f"package registry unreachable, the install step needs it: {reason}")
    env_dir = tmp_path / "python"
    venv.create(env_dir, with_pip=True)
    work = tmp_path / "repo"
    (work / "k8s").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml", work / "k8s" / "job.yaml")
    (work / ".git").mkdir()  # report paths are relative to the repository root
    output = tmp_path / "github_output"
    output.write_text("")
    env = dict(os.environ, PATH=f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}", GITHUB_OUTPUT=str(output))
    values = {
        "github.action_path": str(ROOT),
        "inputs.paths": "k8s/",
        "inputs.args": "",
        "inputs.sarif-file": "eksmllint.sarif",
        "inputs.upload-sarif": "true",
    }
    results = []
    for step in _action_steps():
        if "run" not in step:
            continue
        if "exit-code" in step["run"] and "steps.lint" in step["run"]:
            outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
            values["steps.lint.outputs.exit-code"] = outputs["exit-code"]
        proc = subprocess.run(
            [step.get("shell", "bash"), "-e", "-c", _expand(step["run"], values)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        results.append((step.get("name"), proc))
    (_, install), (_, lint), (_, fail) = results
    assert install.returncode == 0, install.stderr
    assert lint.returncode == 0 and "::warning file=k8s/job.yaml," in lint.stdout, lint.stderr
    sarif = (work / "eksmllint.sarif").read_text()
    assert '"ruleId": "EML301"' in sarif
    assert fail.returncode == 1  # findings fail the job after the upload


def test_gitlab_template_is_a_job_to_extend_with_one_run():
    template = yaml.safe_load(GITLAB_TEMPLATE.read_text())
    job = template[".eksmllint"]
    (script,) = job["script"]
    args = shlex.split(script.replace("$EKSMLLINT_ARGS", "").replace("$EKSMLLINT_PATHS", "k8s/"))
    from eksmllint.cli import cli

    cli.get_command(None, "lint").make_context("lint", args[2:])  # the CLI accepts it as written
    reports = job["artifacts"]["reports"]
    assert f"gitlab:{reports['codequality']}" in script and f"junit:{reports['junit']}" in script
    assert "git+" in job["variables"]["EKSMLLINT_PACKAGE"]  # not on an index yet


def test_readme_install_section_names_what_the_tests_install():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    for needle in ("pipx install", "git+https://", "pip wheel", "uses: OWNER/eksmllint@", GITLAB_TEMPLATE.name):
        assert needle in section, needle
    assert sys.version_info >= (3, 11)
