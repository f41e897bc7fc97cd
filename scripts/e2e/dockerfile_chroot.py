#!/usr/bin/env python3
"""Build and run a Dockerfile's image without a Docker engine: a small interpreter of the
instructions deploy/Dockerfile uses, over a Debian root made with debootstrap (issue 25 item 9).

    dockerfile_chroot.py build [--build-arg K=V]... DOCKERFILE CONTEXT   -> prints the image folder
    dockerfile_chroot.py run IMAGE [--entrypoint PATH] [--mount HOST:DIR] [--workdir DIR] [-- ARG...]

FROM ``python:X.Y…-<release>`` is Debian <release> from debootstrap (python3, python3-venv,
python-is-python3, ca-certificates), cached under ``${EKSMLLINT_IMAGE_CACHE:-~/.cache/eksmllint-image}``;
the build fails when that release's python3 is not X.Y (it then cannot stand in for the image). It
is Debian's python3 (/usr/bin) at Debian's patch level, not python.org's build in /usr/local: the
closest reproducible base offline. FROM a stage name, ENV, ARG, WORKDIR, COPY (also --from),
RUN (exec and shell form, in ``chroot`` inside ``unshare`` mount and PID namespaces), USER,
EXPOSE, ENTRYPOINT and CMD are interpreted as Docker does; any other instruction fails the build.
RUN reaches the network as the host does: its resolv.conf and its pip settings (index, extra
index, trusted hosts, CA bundle, proxies; what ``pip config list`` and the proxy variables say)
are lent for the step, as a ``docker build --build-arg`` would pass them, and are not in the image.
Images are cached by a digest of the Dockerfile, the build arguments and every context file COPY
reads, so an unchanged tree is not rebuilt. Needs root (chroot, mount). Standard library only.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = "python3,python3-venv,python-is-python3,ca-certificates"
BASE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
#: pip settings a build may borrow from the host (network only; never paths into the host's tree).
PIP_NETWORK = ("index-url", "extra-index-url", "trusted-host", "cert", "client-cert", "proxy", "timeout", "retries")
PIP_FILES = ("cert", "client-cert")
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy")
LENT = "/run/eksmllint-build"  # where lent host files appear during RUN
INTERPRETED = ("ARG", "FROM", "ENV", "WORKDIR", "COPY", "RUN", "USER", "EXPOSE", "ENTRYPOINT", "CMD")


class BuildError(Exception):
    pass


def cache_dir() -> Path:
    return Path(os.environ.get("EKSMLLINT_IMAGE_CACHE") or Path.home() / ".cache" / "eksmllint-image")


def log(msg: str) -> None:
    print(f"dockerfile-chroot: {msg}", file=sys.stderr, flush=True)


# -- parsing -------------------------------------------------------------------------------------
def instructions(text: str) -> list[tuple[int, str, str]]:
    """(line, INSTRUCTION, rest) with continuations joined and comment lines dropped."""
    out: list[tuple[int, str, str]] = []
    buf, start = "", 0
    for no, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue  # comments inside a continued instruction are dropped, as Docker does
        if not buf:
            start = no
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += stripped
        word, _, rest = buf.partition(" ")
        out.append((start, word.upper(), rest.strip()))
        buf = ""
    if buf:
        raise BuildError("the Dockerfile ends inside a continued line")
    return out


_VAR = re.compile(r"\$(?:\{(\w+)(?::-([^}]*))?\}|(\w+))")


def expand(text: str, env: dict[str, str]) -> str:
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(3), m.group(2) or ""), text)


def exec_form(rest: str) -> list[str] | None:
    if rest.startswith("["):
        try:
            value = json.loads(rest)
        except json.JSONDecodeError:
            return None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    return None


def command(rest: str) -> list[str]:
    return exec_form(rest) or ["/bin/sh", "-c", rest]


def env_pairs(rest: str, env: dict[str, str]) -> dict[str, str]:
    words = shlex.split(rest)
    if words and "=" not in words[0]:  # legacy ENV KEY value
        return {words[0]: expand(" ".join(words[1:]), env)}
    out = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:
            raise BuildError(f"ENV {word!r}: expected KEY=VALUE")
        out[key] = expand(value, {**env, **out})
    return out


@dataclass
class Stage:
    name: str | None
    root: Path
    env: dict[str, str] = field(default_factory=lambda: dict(BASE_ENV))
    workdir: str = "/"
    user: str | None = None
    entrypoint: list[str] | None = None
    cmd: list[str] | None = None
    expose: list[str] = field(default_factory=list)


# -- the base root -------------------------------------------------------------------------------
def debian_release(image: str) -> tuple[str, str]:
    """(Debian codename, Python X.Y) of an official ``python:`` image reference."""
    m = re.fullmatch(r"(?:docker\.io/)?(?:library/)?python:(\d+\.\d+)[\w.-]*?-(\w+)", image)
    if not m:
        raise BuildError(f"FROM {image}: only python:X.Y...-<debian release> images can be made offline")
    version, release = m.groups()
    if not Path("/usr/share/debootstrap/scripts", release).exists():
        raise BuildError(f"FROM {image}: {release!r} is not a release debootstrap knows")
    return release, version


def host_mirror(release: str) -> str | None:
    """The Debian archive the host's apt uses for ``release``-like suites (never a guessed host)."""
    entries: list[tuple[str, list[str]]] = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for stanza in Path(path).read_text().split("\n\n"):
            fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.MULTILINE))
            if "deb" in fields.get("Types", "").split() and fields.get("Enabled", "yes") != "no":
                entries += [(uri, fields.get("Suites", "").split()) for uri in fields.get("URIs", "").split()]
    for path in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]:
        if os.path.exists(path):
            for line in Path(path).read_text().splitlines():
                words = re.sub(r"\[.*?\]", "", line).split()
                if len(words) >= 3 and words[0] == "deb":
                    entries.append((words[1], [words[2]]))
    plain = [uri for uri, suites in entries if any("-" not in s and "/" not in s for s in suites)]
    return plain[0] if plain else None


def base_root(image: str) -> Path:
    release, version = debian_release(image)
    root = cache_dir() / f"debian-{release}" / "rootfs"
    if not (root / "usr" / "bin" / "python3").exists():
        if shutil.which("debootstrap") is None:
            raise BuildError("debootstrap is not installed (apt-get install debootstrap)")
        tmp = Path(tempfile.mkdtemp(prefix="debootstrap-", dir=ensure(cache_dir())))
        mirror = host_mirror(release)
        log(f"debootstrap {release} from {mirror or 'its default mirror'} (a few minutes)")
        argv = ["debootstrap", "--variant=minbase", f"--include={PACKAGES}", release, str(tmp / "rootfs")]
        run_checked(argv + ([mirror] if mirror else []), "debootstrap")
        root.parent.mkdir(parents=True, exist_ok=True)
        if root.exists():
            shutil.rmtree(root)
        os.replace(tmp / "rootfs", root)
        shutil.rmtree(tmp, ignore_errors=True)
    found = subprocess.run(
        ["chroot", str(root), "python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if found != version:
        raise BuildError(f"FROM {image}: Debian {release}'s python3 is {found or 'missing'}, not {version}")
    return root


def run_checked(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, check=False)
    if proc.returncode != 0:
        raise BuildError(f"{what} failed (exit {proc.returncode}): {shlex.join(argv)}")


# -- running inside a root -----------------------------------------------------------------------
def host_pip_settings() -> tuple[dict[str, str], dict[str, str]]:
    """(PIP_* variables, lent file -> host path) from the host's pip configuration and proxies."""
    env: dict[str, str] = {k: v for k, v in os.environ.items() if k in PROXY_VARS}
    files: dict[str, str] = {}
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    )
    for line in listed.stdout.splitlines():
        m = re.fullmatch(r"[^.]*\.([\w-]+)='(.*)'", line.strip())
        if not m or m.group(1) not in PIP_NETWORK:
            continue
        key, value = m.groups()
        if key in PIP_FILES:
            if not os.path.isfile(value):
                continue
            files[key] = value
            value = f"{LENT}/{key}.pem"
        env["PIP_" + key.upper().replace("-", "_")] = value
    return env, files


def in_root(
    root: Path,
    argv: list[str],
    env: dict[str, str],
    workdir: str,
    user: str | None,
    mounts: list[tuple[str, str, bool]] = (),
    **kw,
) -> subprocess.CompletedProcess:
    """Run ``argv`` in ``root`` as Docker would run a container process: its own mount and PID
    namespaces, /proc, the host's DNS, ``mounts`` (host, path in root, read-only) bound in."""
    script = ["set -e", f"mount -t proc proc {shlex.quote(str(root / 'proc'))}"]
    binds = [("/etc/resolv.conf", "/etc/resolv.conf", True), *mounts]
    for host, inside, ro in binds:
        target = root / inside.lstrip("/")
        if target.is_symlink():
            target.unlink()  # never let a bind follow a link out of the root
        if os.path.isdir(host):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch(exist_ok=True)
        script.append(f"mount --bind {shlex.quote(host)} {shlex.quote(str(target))}")
        if ro:
            script.append(f"mount -o remount,bind,ro {shlex.quote(str(target))}")
    chroot = ["chroot"] + ([f"--userspec={user}"] if user else []) + [str(root)]
    inner = chroot + ["/usr/bin/env", "-i", "-C", workdir] + [f"{k}={v}" for k, v in env.items()] + argv
    script.append("exec " + shlex.join(inner))
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "sh", "-c", "\n".join(script)],
        check=False,
        **kw,
    )


# -- building ------------------------------------------------------------------------------------
def inside(root: Path, path: str) -> Path:
    return root / os.path.normpath("/" + path).lstrip("/")


def copy_into(sources: list[Path], dest: Path, many: bool) -> None:
    if many or str(dest).endswith("/"):
        dest.mkdir(parents=True, exist_ok=True)
    for src in sources:
        if src.is_dir():
            shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
        else:
            target = dest / src.name if dest.is_dir() else dest
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target, follow_symlinks=False)


def context_sources(context: Path, patterns: list[str]) -> list[Path]:
    found: list[Path] = []
    for pattern in patterns:
        hits = sorted(glob.glob(str(context / pattern))) or []
        if not hits:
            raise BuildError(f"COPY {pattern}: no such file in the build context")
        for hit in map(Path, hits):
            if os.path.relpath(hit.resolve(), context.resolve()).startswith(".."):
                raise BuildError(f"COPY {pattern}: outside the build context")
            found.append(hit)
    return found


def copy_args(rest: str, env: dict[str, str]) -> tuple[dict[str, str], list[str], str]:
    words = exec_form(rest) or shlex.split(rest)
    flags = {}
    while words and words[0].startswith("--"):
        key, _, value = words.pop(0)[2:].partition("=")
        flags[key] = value
    words = [expand(w, env) for w in words]
    if len(words) < 2:
        raise BuildError(f"COPY {rest}: needs a source and a destination")
    return flags, words[:-1], words[-1]


def digest(dockerfile: Path, context: Path, args: dict[str, str]) -> str:
    """What the image is made of: the Dockerfile, the build arguments, every context file COPY reads."""
    h = hashlib.sha256(dockerfile.read_bytes())
    h.update(json.dumps(args, sort_keys=True).encode())
    for _, word, rest in instructions(dockerfile.read_text()):
        if word != "COPY":
            continue
        flags, sources, _ = copy_args(rest, args)
        if "from" in flags:
            continue
        for src in context_sources(context, sources):
            files = sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
            for f in files:
                if "__pycache__" in f.parts:
                    continue
                h.update(str(f.relative_to(context)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def build(dockerfile: Path, context: Path, build_args: dict[str, str]) -> Path:
    key = digest(dockerfile, context, build_args)
    image = cache_dir() / "images" / key
    if (image / "config.json").exists():
        log(f"reusing {image}")
        return image
    work = Path(tempfile.mkdtemp(prefix=f"build-{key}-", dir=ensure(cache_dir() / "images")))
    pip_env, lent = host_pip_settings()
    mounts = [(host, f"{LENT}/{name}.pem", True) for name, host in lent.items()]
    args: dict[str, str] = {}
    stages: list[Stage] = []
    stage: Stage | None = None
    try:
        for line, word, rest in instructions(dockerfile.read_text()):
            where = f"{dockerfile.name}:{line} {word}"
            if word == "ARG":
                name, eq, default = rest.partition("=")
                value = build_args.get(name, default if eq else "")
                (stage.env if stage else args)[name] = value
                continue
            if word == "FROM":
                words = expand(rest, args).split()
                ref, name = words[0], (words[2] if len(words) == 3 and words[1].upper() == "AS" else None)
                root = work / f"stage{len(stages)}"
                previous = next((s for s in stages if s.name == ref), None)
                log(f"{where} {ref}")
                # cp -a, not copytree: a root holds device nodes (/dev/zero), which must stay nodes
                run_checked(["cp", "-a", str(previous.root if previous else base_root(ref)), str(root)], "cp")
                stage = Stage(name, root)
                if previous:
                    stage.env, stage.workdir, stage.user = dict(previous.env), previous.workdir, previous.user
                stages.append(stage)
                continue
            if stage is None:
                raise BuildError(f"{where}: before any FROM")
            if word == "ENV":
                stage.env.update(env_pairs(rest, stage.env))
            elif word == "WORKDIR":
                stage.workdir = os.path.join(stage.workdir, expand(rest, stage.env))
                inside(stage.root, stage.workdir).mkdir(parents=True, exist_ok=True)
            elif word == "COPY":
                flags, patterns, dest = copy_args(rest, stage.env)
                unknown = set(flags) - {"from"}
                if unknown:
                    raise BuildError(f"{where}: --{', --'.join(sorted(unknown))} is not interpreted here")
                if "from" in flags:
                    src_stage = next((s for s in stages if s.name == flags["from"]), None)
                    if src_stage is None:
                        raise BuildError(f"{where}: no stage named {flags['from']!r}")
                    sources = [inside(src_stage.root, p) for p in patterns]
                else:
                    sources = context_sources(context, patterns)
                target = dest if dest.startswith("/") else os.path.join(stage.workdir, dest)
                copy_into(sources, inside(stage.root, target), len(sources) > 1 or dest.endswith("/"))
            elif word == "RUN":
                argv = command(rest)
                log(f"{where} {shlex.join(argv)}")
                proc = in_root(stage.root, argv, {**stage.env, **pip_env}, stage.workdir, stage.user, mounts)
                if proc.returncode != 0:
                    raise BuildError(f"{where}: exit {proc.returncode}")
            elif word == "USER":
                stage.user = expand(rest, stage.env)
            elif word == "EXPOSE":
                stage.expose += rest.split()
            elif word == "ENTRYPOINT":
                stage.entrypoint = command(rest)
                stage.cmd = None  # Docker resets CMD when ENTRYPOINT is set
            elif word == "CMD":
                stage.cmd = command(rest)
            else:
                raise BuildError(f"{where}: not interpreted here (extend scripts/e2e/dockerfile_chroot.py)")
        if stage is None:
            raise BuildError("no FROM in the Dockerfile")
        final = work / "image"
        final.mkdir()
        os.replace(stage.root, final / "rootfs")
        config = {
            "Env": stage.env,
            "WorkingDir": stage.workdir,
            "User": stage.user,
            "Entrypoint": stage.entrypoint,
            "Cmd": stage.cmd,
            "ExposedPorts": stage.expose,
        }
        (final / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        for old in (cache_dir() / "images").iterdir():  # one image kept: each is ~600 MB
            if old.is_dir() and old != work and not old.name.startswith("build-"):
                shutil.rmtree(old, ignore_errors=True)
        os.replace(final, image)
        log(f"built {image}")
        return image
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_image(image: Path, args: list[str], entrypoint: str | None, mounts: list[str], workdir: str | None) -> int:
    """``docker run --rm [--entrypoint E] [-v HOST:DIR] [-w DIR] IMAGE ARGS...`` on a copy-free
    root: the image's ENV, WORKDIR, USER, ENTRYPOINT and CMD as Docker applies them."""
    config = json.loads((image / "config.json").read_text())
    if entrypoint is not None:
        argv = [entrypoint, *args]
    else:
        argv = [*(config["Entrypoint"] or []), *(args or config["Cmd"] or [])]
    binds = []
    for spec in mounts:
        host, _, rest = spec.partition(":")
        target, _, mode = rest.partition(":")
        binds.append((os.path.abspath(host), target, mode == "ro"))
    env = dict(config["Env"])
    env.setdefault("HOME", "/root" if config["User"] in (None, "", "root", "0", "0:0") else "/")  # as Docker sets it
    proc = in_root(image / "rootfs", argv, env, workdir or config["WorkingDir"], config["User"], binds)
    return proc.returncode


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--build-arg", action="append", default=[])
    b.add_argument("dockerfile", type=Path)
    b.add_argument("context", type=Path)
    r = sub.add_parser("run")
    r.add_argument("image", type=Path)
    r.add_argument("--entrypoint")
    r.add_argument("--mount", action="append", default=[], metavar="HOST:DIR[:ro]")
    r.add_argument("--workdir")
    rest: list[str] = []
    if "--" in argv:  # the container's arguments, taken as they are
        argv, rest = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    ns = parser.parse_args(argv)
    ns.args = rest
    try:
        if ns.cmd == "build":
            build_args = dict(a.partition("=")[::2] for a in ns.build_arg)
            print(build(ns.dockerfile.resolve(), ns.context.resolve(), build_args))
            return 0
        return run_image(ns.image, ns.args, ns.entrypoint, ns.mount, ns.workdir)
    except BuildError as err:
        log(f"error: {err}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
