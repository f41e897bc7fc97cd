"""Latency of an admission through a real kube-apiserver, with and without eksmllint's webhooks.

Starts etcd + kube-apiserver (``scripts/e2e/build-control-plane.sh`` builds them) and
``eksmllint serve`` as the Helm chart runs it (validating + mutating, ``server.mutate: [EML301]``),
registers the chart's webhook configurations with a URL clientConfig on loopback, and times
dry-run creates from the Kubernetes Python client: first with no webhook registered, then with
them. Prints medians and 95th percentiles (milliseconds)::

    python bench/admission_latency.py --repeat 100 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import builders as b
import trustme
from controlplane import (
    RELEASE_NS,
    ControlPlane,
    Webhook,
    binaries,
    install_crds,
    of_kind,
    point_at,
    render_chart,
)
from kubernetes import client

NS = "bench"


def objects() -> dict[str, tuple[str, dict]]:
    limits = {"nvidia.com/gpu": 8, "cpu": "90", "memory": "1000Gi"}
    pod = b.pod("p", b.container("c", "python:3.11.9-slim", limits={"cpu": "1", "memory": "1Gi"}))
    worker = b.replica(
        2, b.pod_template(b.container("pytorch", command=["torchrun", "--nproc_per_node=8", "t.py"], limits=limits))
    )
    job = b.pytorchjob("llm", None, worker, namespace=NS, runPolicy={"schedulingPolicy": {"minAvailable": 2}})
    return {"Pod": ("pods", pod), "PyTorchJob": ("pytorchjobs", job)}


def timed(api, what: str, body: dict, repeat: int) -> list[float]:
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    out = []
    for i in range(repeat):
        obj = {**body, "metadata": {**body["metadata"], "name": f"{body['metadata']['name']}-{i}", "namespace": NS}}
        began = time.perf_counter()
        if what == "pods":
            core.create_namespaced_pod(NS, obj, dry_run="All")
        else:
            custom.create_namespaced_custom_object("kubeflow.org", "v1", NS, what, obj, dry_run="All")
        out.append((time.perf_counter() - began) * 1000)
    return out


def summary(samples: list[float]) -> str:
    p95 = statistics.quantiles(samples, n=20)[-1]
    return f"median {statistics.median(samples):6.1f} ms, p95 {p95:6.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100, help="creates per object, set-up and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    found = binaries()
    if isinstance(found, str):
        print(found, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        plane = ControlPlane(Path(tmp) / "plane", *found).start()
        try:
            api = plane.api_client()
            install_crds(api)
            client.CoreV1Api(api).create_namespace({"metadata": {"name": NS}})
            client.CoreV1Api(api).create_namespace({"metadata": {"name": RELEASE_NS}})
            docs = render_chart({"server": {"mutate": ["EML301"]}})
            (deployment,) = of_kind(docs, "Deployment")
            chart_args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
            chart_args = [a for a in chart_args if not a.startswith("--cluster-context")]
            ca = trustme.CA()
            kubeconfig = plane.kubeconfig(Path(tmp) / "kubeconfig")
            (Path(tmp) / "webhook").mkdir()
            server = Webhook(Path(tmp) / "webhook", ca, chart_args, kubeconfig).start()
            try:
                results: dict[tuple[str, str], list[float]] = {}
                admission = client.AdmissionregistrationV1Api(api)
                configs = [
                    (
                        admission.create_validating_webhook_configuration,
                        admission.delete_validating_webhook_configuration,
                        of_kind(docs, "ValidatingWebhookConfiguration")[0],
                    ),
                    (
                        admission.create_mutating_webhook_configuration,
                        admission.delete_mutating_webhook_configuration,
                        of_kind(docs, "MutatingWebhookConfiguration")[0],
                    ),
                ]
                # Alternate the two set-ups (the machine's load drifts within minutes).
                for _round in range(args.rounds):
                    for setup in ("no webhook", "eksmllint webhooks"):
                        for create, delete, config in configs:
                            if setup == "no webhook":
                                try:
                                    delete(config["metadata"]["name"])
                                except client.exceptions.ApiException:
                                    pass
                            else:
                                create(point_at(config, server.url, ca.cert_pem.bytes()))
                        time.sleep(3)  # configurations reach the admission chain through an informer
                        for label, (plural, body) in objects().items():
                            timed(api, plural, body, 5)  # warm up
                            results.setdefault((label, setup), []).extend(timed(api, plural, body, args.repeat))
            finally:
                server.stop()
        finally:
            plane.stop()
    print(f"dry-run creates through kube-apiserver, {args.rounds} x {args.repeat} each (loopback):")
    for (label, setup), samples in sorted(results.items()):
        print(f"  {label:10} {setup:18} {summary(samples)}")
    for label in dict.fromkeys(label for label, _ in results):
        added = statistics.median(results[(label, "eksmllint webhooks")]) - statistics.median(
            results[(label, "no webhook")]
        )
        print(f"  {label:10} added by the webhooks (difference of medians): {added:5.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
