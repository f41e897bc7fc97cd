"""A real Kubernetes control plane for the end-to-end tests: etcd and kube-apiserver on loopback.

The binaries come from ``scripts/e2e/build-control-plane.sh`` (cached under
``~/.cache/eksmllint-e2e/``, or ``EKSMLLINT_E2E_CACHE``). Every port is a free loopback port, the
serving certificate is issued by a test CA (trustme), authorization is RBAC, and a static admin
token (``system:masters``) drives the tests; service-account tokens come from the TokenRequest
API, signed with a key made here. Without the binaries the tests skip with the reason, except in
CI (``CI=true``), where they fail: CI builds them first.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trustme
import yaml
from repository import ROOT

BUILD_SCRIPT = ROOT / "scripts" / "e2e" / "build-control-plane.sh"
GO_MOD = ROOT / "scripts" / "e2e" / "apiserver" / "go.mod"
ETCD_VERSION_DEFAULT = "3.5.1"
STARTUP_TIMEOUT_S = 90.0
ADMIN_TOKEN = "eksmllint-e2e-admin-token"
#: Left out of the CRDs installed: the watcher must fail soft on a kind the cluster does not serve.
ABSENT_CRD = "queues.scheduling.volcano.sh"


def cache_dir() -> Path:
    return Path(os.environ.get("EKSMLLINT_E2E_CACHE") or Path.home() / ".cache" / "eksmllint-e2e")


def kubernetes_version() -> str:
    for line in GO_MOD.read_text().splitlines():
        parts = line.split()
        if "k8s.io/kubernetes" in parts and parts[-1].startswith("v1."):
            return parts[-1]
    raise AssertionError(f"no k8s.io/kubernetes version in {GO_MOD}")


def binaries() -> tuple[Path, Path] | str:
    """(kube-apiserver, etcd), or why they are not there."""
    apiserver = cache_dir() / f"kubernetes-{kubernetes_version()}" / "kube-apiserver"
    etcd_version = os.environ.get("EKSMLLINT_E2E_ETCD", ETCD_VERSION_DEFAULT)
    etcd = cache_dir() / f"etcd-{etcd_version}" / "etcd"
    missing = [str(p) for p in (apiserver, etcd) if not os.access(p, os.X_OK)]
    if missing:
        return f"no control plane binaries ({', '.join(missing)}): run {BUILD_SCRIPT.relative_to(ROOT)}"
    return apiserver, etcd


def wait_for_build(timeout: float = 60 * 60, pid_file: Path | None = None) -> None:
    """Block while ``build-control-plane.sh`` runs (its ``build.pid`` names a live process): CI
    starts the build in the background before installing; a cold build takes about 10 minutes.
    ``pid_file``: another background build's (``build-image.sh``)."""
    pid_file = pid_file or cache_dir() / "build.pid"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid = int(pid_file.read_text().strip())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return  # no build, or it finished
        time.sleep(2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(predicate: Callable[[], bool], timeout: float, what: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-4000:]}")
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{what} not ready after {timeout:.0f}s:\n{log.read_text(errors='replace')[-4000:]}")


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@dataclass
class ControlPlane:
    """etcd + kube-apiserver in ``workdir``; :meth:`start`, then :meth:`stop`."""

    workdir: Path
    apiserver_bin: Path
    etcd_bin: Path
    ca: trustme.CA = field(default_factory=trustme.CA)
    port: int = 0
    etcd_port: int = 0
    procs: list[subprocess.Popen] = field(default_factory=list)
    started_in_s: float = 0.0

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def ca_file(self) -> Path:
        return self.workdir / "ca.crt"

    def start(self) -> ControlPlane:
        began = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
            env.pop(var, None)
        self.etcd_port, peer = free_port(), free_port()
        etcd_log = self.workdir / "etcd.log"
        self.procs.append(
            subprocess.Popen(
                [
                    str(self.etcd_bin),
                    "--name=e2e",
                    f"--data-dir={self.workdir / 'etcd'}",
                    f"--listen-client-urls={self.etcd_url}",
                    f"--advertise-client-urls={self.etcd_url}",
                    f"--listen-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-cluster=e2e=http://127.0.0.1:{peer}",
                    "--unsafe-no-fsync",
                    "--log-level=warn",
                ],
                stdout=open(etcd_log, "ab"),
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
        _wait(lambda: _http_ok(f"{self.etcd_url}/health"), 30, "etcd", self.procs[-1], etcd_log)

        cert = self.ca.issue_cert("127.0.0.1", "localhost")
        cert.cert_chain_pems[0].write_to_path(str(self.workdir / "serving.crt"))
        cert.private_key_pem.write_to_path(str(self.workdir / "serving.key"))
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        sa_key = self.workdir / "sa.key"
        sa_pub = self.workdir / "sa.pub"
        _write_rsa_key(sa_key, sa_pub)
        (self.workdir / "tokens.csv").write_text(f"{ADMIN_TOKEN},eksmllint-e2e-admin,1,system:masters\n")
        self.port = free_port()
        log = self.workdir / "kube-apiserver.log"
        self.procs.append(
            subprocess.Popen(
                [
                    str(self.apiserver_bin),
                    f"--etcd-servers={self.etcd_url}",
                    "--bind-address=127.0.0.1",
                    "--advertise-address=127.0.0.1",
                    f"--secure-port={self.port}",
                    f"--tls-cert-file={self.workdir / 'serving.crt'}",
                    f"--tls-private-key-file={self.workdir / 'serving.key'}",
                    f"--client-ca-file={self.ca_file}",
                    f"--token-auth-file={self.workdir / 'tokens.csv'}",
                    "--authorization-mode=RBAC",
                    f"--service-account-key-file={sa_pub}",
                    f"--service-account-signing-key-file={sa_key}",
                    "--service-account-issuer=https://kubernetes.default.svc",
                    "--api-audiences=https://kubernetes.default.svc",
                    "--service-cluster-ip-range=10.0.0.0/24",
                    # No controller-manager creates the "default" ServiceAccounts Pods would need.
                    "--disable-admission-plugins=ServiceAccount",
                    # Watches read etcd itself, so compacting etcd yields a real 410 Gone.
                    "--watch-cache=false",
                    "--enable-priority-and-fairness=false",
                    "--profiling=false",
                    "--v=1",
                ],
                stdout=open(log, "ab"),
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
        _wait(self._ready, STARTUP_TIMEOUT_S, "kube-apiserver", self.procs[-1], log)
        self.started_in_s = time.monotonic() - began
        return self

    def _ready(self) -> bool:
        import ssl

        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        req = urllib.request.Request(f"{self.url}/readyz", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=3) as resp:
                return resp.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        for proc in reversed(self.procs):
            _stop(proc)
        self.procs.clear()

    # -- clients ---------------------------------------------------------------------------------
    def kubeconfig(self, path: Path, token: str = ADMIN_TOKEN, user: str = "admin") -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "e2e",
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.ca.cert_pem.bytes()).decode(),
                    },
                }
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": user}}],
            "current-context": "e2e",
        }
        path.write_text(yaml.safe_dump(config))
        return path

    def api_client(self, token: str = ADMIN_TOKEN):
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.url
        cfg.ssl_ca_cert = str(self.ca_file)
        cfg.api_key = {"authorization": f"Bearer {token}"}
        cfg.proxy = None
        return client.ApiClient(cfg)

    # -- etcd ------------------------------------------------------------------------------------
    def compact_etcd(self) -> int:
        """Compact etcd at its current revision (what the API server's compactor does every 5
        minutes); returns that revision. Every older resourceVersion is then 410 Gone."""
        current = _post_json(f"{self.etcd_url}/v3/kv/range", {"key": base64.b64encode(b"/").decode()})
        revision = int(current["header"]["revision"])
        _post_json(f"{self.etcd_url}/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as resp:
        return resp.status == 200


def _post_json(url: str, body: dict) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def _write_rsa_key(key_path: Path, pub_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    pub_path.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def install_crds(api_client) -> list[str]:
    """eksmllint's generated CRDs (:mod:`eksmllint.crds`) but :data:`ABSENT_CRD`, established."""
    from kubernetes import client

    from eksmllint.crds import crds

    ext = client.ApiextensionsV1Api(api_client)
    names = []
    for crd in crds():
        if crd["metadata"]["name"] != ABSENT_CRD:
            ext.create_custom_resource_definition(crd)
            names.append(crd["metadata"]["name"])
    wait_established(api_client, names)
    return names


def wait_established(api_client, names: list[str], timeout: float = 30.0) -> None:
    from kubernetes import client

    ext = client.ApiextensionsV1Api(api_client)
    deadline = time.monotonic() + timeout
    pending = set(names)
    while pending and time.monotonic() < deadline:
        for name in list(pending):
            crd = ext.read_custom_resource_definition(name)
            conds = {c.type: c.status for c in (crd.status.conditions or [])}
            if conds.get("Established") == "True":
                pending.discard(name)
        time.sleep(0.1)
    if pending:
        raise AssertionError(f"CRDs not established after {timeout}s: {sorted(pending)}")


# -- the webhook, as the chart deploys it -------------------------------------------------------------
CHART = ROOT / "charts" / "eksmllint"
RELEASE_NS = "eksmllint"


def render_chart(values: dict) -> list[dict]:
    """The chart rendered by Helm's own template engine (helm-python-sdk, in the test extras)."""
    import helm_python as helm

    with helm.Chart.load(str(CHART)) as chart:
        out = chart.render(values, name="eksmllint", namespace=RELEASE_NS, is_install=True)
    return [d for text in out.values() for d in yaml.safe_load_all(text) if d]


def of_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def point_at(config: dict, url: str, ca_pem: bytes) -> dict:
    """The webhook configuration with each hook's service clientConfig replaced by ``url``."""
    out = copy.deepcopy(config)
    out["metadata"].pop("annotations", None)  # cert-manager's CA injection: the bundle is set here
    for hook in out["webhooks"]:
        path = hook["clientConfig"]["service"]["path"]
        hook["clientConfig"] = {"url": url + path, "caBundle": base64.b64encode(ca_pem).decode()}
    return out


class Webhook:
    """``eksmllint serve`` with the chart's container arguments, on a loopback port."""

    def __init__(
        self, workdir: Path, ca: trustme.CA, chart_args: list[str], kubeconfig: Path, context_interval: float = 0.5
    ) -> None:
        self.workdir = workdir
        self.ca = ca
        cert = ca.issue_cert("127.0.0.1")
        self.crt, self.key = workdir / "tls.crt", workdir / "tls.key"
        cert.cert_chain_pems[0].write_to_path(str(self.crt))
        cert.private_key_pem.write_to_path(str(self.key))
        self.context_dir = workdir / "context"
        self.context_dir.mkdir()
        self.log = workdir / "webhook.log"
        self.port = free_port()
        args = []
        for arg in chart_args:  # the Pod's paths and port are the chart's; here they are local
            name = arg.split("=", 1)[0]
            replaced = {
                "--tls-cert": f"--tls-cert={self.crt}",
                "--tls-key": f"--tls-key={self.key}",
                "--port": f"--port={self.port}",
                "--context-dir": f"--context-dir={self.context_dir}",
                "--shutdown-delay": "--shutdown-delay=0",
            }
            args.append(replaced.get(name, arg))
        self.cmd = [
            sys.executable,
            "-m",
            "eksmllint",
            "serve",
            *args,
            "--host=127.0.0.1",
            f"--kubeconfig={kubeconfig}",
            f"--context-interval={context_interval}",
        ]
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self) -> Webhook:
        self._out = open(self.log, "ab")
        self.proc = subprocess.Popen(self.cmd, stdout=self._out, stderr=subprocess.STDOUT, cwd=self.workdir)
        ctx = ssl.create_default_context()
        self.ca.configure_trust(ctx)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if httpx.get(f"{self.url}/readyz", verify=ctx, timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise AssertionError("webhook did not start:\n" + self.log.read_text(errors="replace"))

    def stop(self) -> None:
        _stop(self.proc)
        self._out.close()
