"""The webhook under hostile load, and the memory of `kind: List` input (issue 22). Not a test:
run it by hand.

    python bench/hostile_webhook.py                 # 20 s of load, then the List memory ratio
    python bench/hostile_webhook.py --duration 10 --skip-memory

Webhook: starts ``eksmllint serve --insecure-http`` on 127.0.0.1 (plain HTTP on loopback keeps
the client lean; the connection handling under test is the same as over TLS), then, at once:

- 64 slow-body connections: each sends a review's headers and 20 bytes of its body, then stalls;
  when the server drops it (408 at --body-timeout, or evicted for a newer body) it reconnects;
- four clients that send a denied PyTorchJob padded to ~1.4 MB, one after another, each object
  different (no cache hits): ``--pad args`` (default) with 75,000 command arguments after
  ``torchrun ... train.py`` (what the launch and precision rules read), ``--pad volumes`` with
  12,000 ConfigMap volumes and mounts;
- one client sending an ordinary denied job every 20 ms (a different name each time), whose
  latency is what is reported: client-side p50/p99 and the server's own histogram
  (``eksmllint_webhook_request_duration_seconds{lane="small"}``, bucket upper bounds).

It also reports what the big objects and the ordinary ones were answered (judged and denied,
denied unjudged, or admitted: admitted would be a bypass), an unloaded baseline, and five 1.4 MB
objects sent one at a time with nothing else in flight.

Memory: peak RSS of ``eksmllint lint`` (a child process) on 25,000 one-line Pods (~2.4 MB) as
one ``kind: List``, as 25,000 documents, and on an empty file (the start-up floor); the ratio is
(peak - floor) / input size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

STALLED = 64
BIG = 4
PAD = "args"  # what pads the big objects (--pad)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PADDING = {"args": 75_000, "volumes": 12_000}  # ~1.4 MB each


def denied_job(name: str, volumes: int = 0, args: int = 0) -> dict:
    """EML601 (GPUs requested, no CPU/memory): denied; ``volumes`` pads it with ConfigMap mounts,
    ``args`` with command arguments."""
    container: dict = {
        "name": "pytorch",
        "image": "python:3.11.9-slim",
        "resources": {"requests": {"nvidia.com/gpu": 1}},
    }
    spec: dict = {"restartPolicy": "Never", "containers": [container]}
    if args:
        container["command"] = ["torchrun", "--nproc_per_node=1", "train.py"] + [
            f"--opt-{i:05d}=val" for i in range(args)
        ]
    if volumes:
        spec["volumes"] = [{"name": f"config-{i}", "configMap": {"name": f"settings-{i}"}} for i in range(volumes)]
        container["volumeMounts"] = [{"name": f"config-{i}", "mountPath": f"/etc/settings/{i}"} for i in range(volumes)]
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": spec}}}},
    }


def review_bytes(obj: dict, uid: str) -> bytes:
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": "CREATE", "namespace": "ml", "object": obj},
    }
    return json.dumps(body, separators=(",", ":")).encode()


def request_head(length: int) -> bytes:
    return (
        b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % length
    )


async def post(port: int, body: bytes) -> tuple[float, dict | None]:
    """(seconds, the AdmissionReview response or None on a non-200) over a fresh connection."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request_head(len(body)) + body)
        await writer.drain()
        status = await reader.readline()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        payload = await reader.readexactly(length)
        elapsed = time.perf_counter() - started
        return elapsed, (json.loads(payload)["response"] if b" 200 " in status else None)
    finally:
        writer.close()


def outcome(resp: dict | None) -> str:
    if resp is None:
        return "http-error"
    if resp["allowed"]:
        return "ADMITTED"
    return (
        "denied-unjudged"
        if "not judged" in resp["status"]["message"] or "already" in resp["status"]["message"]
        else "denied"
    )


async def stalled_body(port: int, stop: asyncio.Event, counts: dict) -> None:
    body = review_bytes(denied_job("stalled"), "stalled")
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.write(request_head(len(body)) + body[:20])
        counts["stalled"] += 1
        try:
            reading = asyncio.ensure_future(reader.read())
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
            reading.cancel()
            stopping.cancel()
        finally:
            writer.close()


def big_job(name: str) -> dict:
    return denied_job(name, **{PAD: PADDING[PAD]})


async def big_client(port: int, stop: asyncio.Event, results: list, k: int) -> None:
    # Built once, renamed per request (same length): encoding 1.4 MB in this process, on the
    # event loop the ordinary client's timings run on, would count as the server's latency.
    template = review_bytes(big_job(f"big-{k}-000000"), f"big-{k}-000000")
    i = 0
    while not stop.is_set():
        body = template.replace(b"-000000", b"-%06d" % i)
        results.append((len(body), *(await post(port, body))))
        i += 1


async def ordinary(port: int, n: int, gap: float, prefix: str) -> list[tuple[float, dict | None]]:
    out = []
    for i in range(n):
        out.append(await post(port, review_bytes(denied_job(f"{prefix}-{i}"), f"{prefix}-{i}")))
        await asyncio.sleep(gap)
    return out


def small_lane_buckets(port: int) -> list[tuple[float, float]]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    out = []
    for line in text.splitlines():
        if line.startswith("eksmllint_webhook_request_duration_seconds_bucket{") and 'endpoint="validate"' in line:
            if 'lane="small"' in line:
                le = line.split('le="', 1)[1].split('"', 1)[0]
                out.append((float("inf") if le == "+Inf" else float(le), float(line.rsplit(" ", 1)[1])))
    return sorted(out)


def bucket_quantile(before: list, after: list, q: float) -> float:
    prior = dict(before)
    delta = [(le, count - prior.get(le, 0.0)) for le, count in after]
    total = delta[-1][1] if delta else 0
    for le, count in delta:
        if count >= q * total:
            return le
    return float("inf")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(label: str, answers: list[tuple[float, dict | None]], show: bool = False) -> None:
    ms = [t * 1000 for t, _ in answers]
    kinds: dict[str, int] = {}
    for _, resp in answers:
        kinds[outcome(resp)] = kinds.get(outcome(resp), 0) + 1
    print(f"{label}: n={len(ms)} client p50 {percentile(ms, 0.5):.1f} ms  p99 {percentile(ms, 0.99):.1f} ms  {kinds}")
    if show:
        resp = next((r for _, r in answers if r is not None), None)
        if resp is not None:
            said = resp.get("status", {}).get("message", "")
            print(f"  first answer: {said[:160]!r} warnings: {[w[:100] for w in resp.get('warnings') or []]}")


async def hostile(port: int, duration: float) -> None:
    gap = 0.02
    n = max(20, int(duration / (gap + 0.01)))
    before = small_lane_buckets(port)
    report("unloaded ordinary reviews", await ordinary(port, 100, gap, "calm"))
    mid = small_lane_buckets(port)
    print(f"  server histogram (small lane) p99 <= {bucket_quantile(before, mid, 0.99) * 1000:g} ms")
    alone = [await post(port, review_bytes(big_job(f"alone-{i}"), f"alone-{i}")) for i in range(5)]
    report("1.4 MB objects one at a time, nothing else in flight", alone, show=True)
    stop = asyncio.Event()
    counts = {"stalled": 0}
    bigs: list = []
    tasks = [asyncio.create_task(stalled_body(port, stop, counts)) for _ in range(STALLED)]
    tasks += [asyncio.create_task(big_client(port, stop, bigs, k)) for k in range(BIG)]
    await asyncio.sleep(1.0)  # the attack is in place
    answers = await ordinary(port, n, gap, "busy")
    after = small_lane_buckets(port)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    report(f"ordinary reviews with {STALLED} stalled bodies and {BIG} x 1.4 MB in flight", answers)
    print(f"  server histogram (small lane) p99 <= {bucket_quantile(mid, after, 0.99) * 1000:g} ms")
    print(f"  stalled-body connections opened: {counts['stalled']}")
    if bigs:
        size = bigs[0][0]
        report(f"1.4 MB objects ({size / 1e6:.2f} MB each)", [(t, r) for _, t, r in bigs], show=True)


def serve(args: argparse.Namespace) -> int:
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="eksmllint-hostile-", suffix=".log", delete=False)
    cmd = [sys.executable, "-m", "eksmllint", "serve", "--insecure-http", "--port", str(port), "--log-level", "error"]
    proc = subprocess.Popen([*cmd, *args.server_arg], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            print(f"server did not start (log: {log.name})", file=sys.stderr)
            return 1
        asyncio.run(hostile(port, args.duration))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return 0


def peak_rss_mb(path: str) -> float:
    """Peak RSS (MB) of one ``eksmllint lint`` child (each in a fresh process: ru_maxrss of
    RUSAGE_CHILDREN is the largest child so far, so the floor is measured first)."""
    code = (
        "import resource, subprocess, sys;"
        "subprocess.run([sys.executable, '-m', 'eksmllint', 'lint', '--format', 'json', sys.argv[1]],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True)
    return int(out.stdout) / 1024


def memory() -> None:
    pods = [
        f"{{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: [{{name: c, image: x}}]}}}}"
        for i in range(25_000)
    ]
    with tempfile.TemporaryDirectory(prefix="eksmllint-list-") as tmp:
        empty = Path(tmp) / "empty.yaml"
        empty.write_text("")
        as_list = Path(tmp) / "list.yaml"
        as_list.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(f"- {p}\n" for p in pods))
        as_docs = Path(tmp) / "docs.yaml"
        as_docs.write_text("\n---\n".join(pods) + "\n")
        floor = peak_rss_mb(str(empty))
        print(f"start-up floor: {floor:.0f} MB")
        for label, path in (("kind: List of 25,000 Pods", as_list), ("25,000 documents", as_docs)):
            size = os.path.getsize(path) / 1e6
            peak = peak_rss_mb(str(path))
            print(
                f"{label}: input {size:.2f} MB, peak {peak:.0f} MB, ratio {(peak - floor) / size:.0f}x above the floor"
            )


def main() -> int:
    global PAD  # a bench script's one setting
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=20.0, help="seconds of hostile load")
    ap.add_argument("--skip-memory", action="store_true", help="skip the kind: List memory measurement")
    ap.add_argument("--skip-webhook", action="store_true", help="only the memory measurement")
    ap.add_argument("--server-arg", action="append", default=[], help="extra argument for eksmllint serve")
    ap.add_argument("--pad", choices=sorted(PADDING), default=PAD, help="what pads the 1.4 MB objects")
    args = ap.parse_args()
    PAD = args.pad
    resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))
    rc = 0 if args.skip_webhook else serve(args)
    if not args.skip_memory:
        memory()
    return rc


if __name__ == "__main__":
    sys.exit(main())
