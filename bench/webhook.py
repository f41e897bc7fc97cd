"""Benchmark the admission webhook over TLS (not a test: run it by hand).

    python bench/webhook.py                      # 200 req/s for 10 s, 16 connections, /validate
    python bench/webhook.py --rate 0 --duration 5   # closed loop: as fast as the server answers
    python bench/webhook.py --vary               # a different object per request (no cache hits)

Starts ``eksmllint serve`` on 127.0.0.1 (a free port, a throwaway CA from trustme) with a context
directory of 50 NodePools, then sends a PyTorchJob AdmissionReview (2 masters+workers of 8 GPUs,
pinned to p4d.24xlarge) from concurrent keep-alive TLS connections for a fixed time.

With ``--rate R`` the load is open-loop: request *i* is due at ``start + i/R`` and its latency is
measured from that due time, so a server that falls behind is charged for the queueing it causes
(no coordinated omission). The client is a minimal HTTP/1.1 writer/reader on asyncio streams, to
leave the CPU to the server on a small machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

INSTANCE_TYPES = [
    "p4d.24xlarge",
    "p5.48xlarge",
    "g5.12xlarge",
    "g5.48xlarge",
    "trn1.32xlarge",
    "g6e.12xlarge",
    "p4de.24xlarge",
]
ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"]


def nodepool(i: int) -> str:
    itype = INSTANCE_TYPES[i % len(INSTANCE_TYPES)]
    zone = ZONES[i % len(ZONES)]
    return f"""apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool-{i:02d}
spec:
  template:
    metadata:
      labels:
        team: team-{i % 5}
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["{itype}"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["{zone}"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      expireAfter: Never
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
    budgets:
      - nodes: "0"
"""


def pytorchjob(name: str) -> dict:
    def replica(n: int) -> dict:
        return {
            "replicas": n,
            "restartPolicy": "OnFailure",
            "template": {
                "metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}},
                "spec": {
                    "nodeSelector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
                    "containers": [
                        {
                            "name": "pytorch",
                            "image": "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-ec2",
                            "command": ["torchrun", "--nproc_per_node=8", "train.py"],
                            "resources": {
                                "limits": {
                                    "nvidia.com/gpu": 8,
                                    "vpc.amazonaws.com/efa": 4,
                                    "cpu": "90",
                                    "memory": "1000Gi",
                                }
                            },
                            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
                        }
                    ],
                    "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "250Gi"}}],
                },
            },
        }

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": "training"},
        "spec": {
            "runPolicy": {"schedulingPolicy": {"minAvailable": 4}},
            "pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(3)},
        },
    }


def review(i: int, vary: bool) -> bytes:
    name = f"llama-pretrain-{i}" if vary else "llama-pretrain"
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": f"00000000-0000-0000-0000-{i:012d}",
            "operation": "CREATE",
            "namespace": "training",
            "kind": {"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"},
            "object": pytorchjob(name),
            "dryRun": False,
        },
    }
    return json.dumps(body, separators=(",", ":")).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)
    return status


async def load(
    port: int, ctx: ssl.SSLContext, endpoint: str, rate: float, duration: float, connections: int, vary: bool
) -> tuple[list[float], dict[int, int], float]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    start = time.perf_counter() + 0.2
    deadline = start + duration
    counter = iter(range(10**9))
    fixed = None if vary else review(0, False)

    def request(i: int) -> bytes:
        body = review(i, True) if vary else fixed
        return (
            f"POST {endpoint} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body

    async def worker() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx, server_hostname="127.0.0.1")
        try:
            while True:
                i = next(counter)
                due = start + i / rate if rate > 0 else time.perf_counter()
                if due >= deadline:
                    return
                now = time.perf_counter()
                if due > now:
                    await asyncio.sleep(due - now)
                sent = max(due, time.perf_counter()) if rate <= 0 else due
                writer.write(request(i))
                status = await read_response(reader)
                latencies.append(time.perf_counter() - sent)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return latencies, statuses, time.perf_counter() - start


def cpu_seconds(pid: int) -> float | None:
    """User+system CPU time of a process (Linux /proc), to report CPU per request: unlike
    latency, it does not depend on what else the machine is running."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def server_buckets(metrics: str, endpoint: str) -> list[tuple[float, float]]:
    """(upper bound, cumulative count) of the server's latency histogram for ``endpoint``."""
    out = []
    prefix = "eksmllint_webhook_request_duration_seconds_bucket{"
    for line in metrics.splitlines():
        if line.startswith(prefix) and f'endpoint="{endpoint}"' in line:
            le = line.split('le="', 1)[1].split('"', 1)[0]
            out.append((float("inf") if le == "+Inf" else float(le), float(line.rsplit(" ", 1)[1])))
    return sorted(out)


def bucket_quantile(buckets: list[tuple[float, float]], q: float) -> float:
    total = buckets[-1][1] if buckets else 0
    for le, count in buckets:
        if count >= q * total:
            return le
    return float("inf")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=200.0, help="requests/s, open loop (0 = closed loop)")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of load")
    ap.add_argument("--connections", type=int, default=16, help="concurrent keep-alive TLS connections")
    ap.add_argument("--endpoint", default="/validate", choices=["/validate", "/mutate"])
    ap.add_argument("--vary", action="store_true", help="a different object per request (defeats the cache)")
    ap.add_argument("--nodepools", type=int, default=50)
    ap.add_argument("--server-arg", action="append", default=[], help="extra argument for eksmllint serve")
    args = ap.parse_args()
    try:
        import trustme
    except ImportError:
        print("bench/webhook.py needs trustme (pip install -e '.[test]')", file=sys.stderr)
        return 2
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:
        pass

    with tempfile.TemporaryDirectory(prefix="eksmllint-bench-") as tmp:
        tmpdir = Path(tmp)
        ctxdir = tmpdir / "context"
        ctxdir.mkdir()
        for i in range(args.nodepools):
            (ctxdir / f"nodepool-{i:02d}.yaml").write_text(nodepool(i))
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        cert.cert_chain_pems[0].write_to_path(str(tmpdir / "tls.crt"))
        cert.private_key_pem.write_to_path(str(tmpdir / "tls.key"))
        client_ctx = ssl.create_default_context()
        ca.configure_trust(client_ctx)
        port = free_port()
        cmd = [
            sys.executable,
            "-m",
            "eksmllint",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--tls-cert",
            str(tmpdir / "tls.crt"),
            "--tls-key",
            str(tmpdir / "tls.key"),
            "--context-dir",
            str(ctxdir),
            "--log-level",
            "warning",
            "--mutate",
            "EML301",
            *args.server_arg,
        ]
        server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=client_ctx, timeout=1) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    print("server did not become ready:\n" + server.stderr.read().decode(), file=sys.stderr)
                    return 1
                time.sleep(0.1)
            # warm up (imports, first lint, TLS session setup)
            asyncio.run(load(port, client_ctx, args.endpoint, 0, 1.0, 2, args.vary))
            cpu_before = cpu_seconds(server.pid)
            latencies, statuses, elapsed = asyncio.run(
                load(port, client_ctx, args.endpoint, args.rate, args.duration, args.connections, args.vary)
            )
            cpu_after = cpu_seconds(server.pid)
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", context=client_ctx, timeout=5) as r:
                metrics = r.read().decode()
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
    cache = {
        line.split('"')[1]: float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("eksmllint_webhook_cache_total")
    }
    ms = [x * 1000 for x in latencies]
    mode = f"open loop at {args.rate:g} req/s" if args.rate > 0 else "closed loop"
    print(
        f"eksmllint webhook benchmark: {args.endpoint}, PyTorchJob review, {args.nodepools} NodePools of context, "
        f"{args.connections} TLS connections, {mode}, {'a new object per request' if args.vary else 'one object'}, "
        f"{os.cpu_count()} CPUs"
    )
    print(f"requests: {len(ms)} in {elapsed:.1f}s -> throughput {len(ms) / elapsed:.1f} req/s; statuses {statuses}")
    if ms:
        print(
            f"latency ms: p50 {percentile(ms, 0.50):.2f}  p90 {percentile(ms, 0.90):.2f}  "
            f"p99 {percentile(ms, 0.99):.2f}  max {max(ms):.2f}  mean {statistics.fmean(ms):.2f}"
        )
    if cpu_before is not None and cpu_after is not None and ms:
        print(
            f"server CPU: {(cpu_after - cpu_before) * 1000 / len(ms):.2f} ms per request "
            f"({(cpu_after - cpu_before) / elapsed * 100:.0f}% of one core); load average {os.getloadavg()[0]:.1f}"
        )
    if cache:
        print(f"decision cache: {int(cache.get('hit', 0))} hits, {int(cache.get('miss', 0))} misses")
    buckets = server_buckets(metrics, args.endpoint.strip("/"))
    if buckets:
        print(
            "server-side (histogram upper bounds): p50 <= {:g} ms, p99 <= {:g} ms".format(
                *(bucket_quantile(buckets, q) * 1000 for q in (0.5, 0.99))
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
