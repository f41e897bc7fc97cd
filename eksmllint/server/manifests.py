"""Kubernetes manifests that deploy the webhook, for any namespace (``eksmllint webhook-manifests``).

``deploy/`` in the repository is this module's output for the default namespace (a test keeps the
two identical), so there is one source of truth and ``--namespace`` is a parameter, not a sed.
"""

from __future__ import annotations

from typing import Any

import yaml

from eksmllint import __version__
from eksmllint.platform.kinds import webhook_resources
from eksmllint.server.cluster import CLUSTER_KINDS

DEFAULT_NAMESPACE = "eksmllint"
NAME = "eksmllint"
DEFAULT_IMAGE = f"ghcr.io/eksmllint/eksmllint:{__version__}"
PORT = 8443
TLS_SECRET = f"{NAME}-tls"
SERVING_CERT = f"{NAME}-serving"
CONTEXT_CONFIGMAP = f"{NAME}-context"
WEBHOOK_TIMEOUT_S = 5
#: Namespaces labelled with this (value "disabled") are not sent to the webhook at all.
NAMESPACE_OPT_OUT_LABEL = "eksmllint.io/webhook"

#: The workload kinds the kinds table sends to the webhook, plus the Karpenter objects rules
#: judge. (group, versions, resources)
WEBHOOK_RESOURCES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    *webhook_resources(),
    ("karpenter.sh", ("v1",), ("nodepools",)),
    ("karpenter.k8s.aws", ("v1",), ("ec2nodeclasses",)),
)


def _labels(component: str | None = None) -> dict[str, str]:
    labels = {
        "app.kubernetes.io/name": NAME,
        "app.kubernetes.io/part-of": NAME,
        "app.kubernetes.io/version": __version__,
    }
    if component:
        labels["app.kubernetes.io/component"] = component
    return labels


def _selector() -> dict[str, str]:
    return {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "webhook"}


def _meta(name: str, namespace: str | None, component: str | None = None, **extra: Any) -> dict:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = _labels(component)
    meta.update(extra)
    return meta


def namespace_docs(ns: str) -> list[dict]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": ns,
                "labels": {
                    **_labels(),
                    NAMESPACE_OPT_OUT_LABEL: "disabled",
                    "pod-security.kubernetes.io/enforce": "restricted",
                },
            },
        }
    ]


def context_reader_rules() -> list[dict]:
    """Read-only access to the kinds the cluster context watches."""
    rules: dict[str, set[str]] = {}
    for spec in CLUSTER_KINDS:
        rules.setdefault(spec.group, set()).add(spec.plural)
    return [
        {"apiGroups": [group], "resources": sorted(res), "verbs": ["get", "list", "watch"]}
        for group, res in sorted(rules.items())
    ]


def rbac_docs(ns: str) -> list[dict]:
    cluster_role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _meta(f"{NAME}-context-reader", None, "webhook"),
        "rules": context_reader_rules(),
    }
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(NAME, ns, "webhook"),
            "automountServiceAccountToken": True,
        },
        cluster_role,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(f"{NAME}-context-reader", None, "webhook"),
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": f"{NAME}-context-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}],
        },
    ]


def server_args(mutate: tuple[str, ...] = ()) -> list[str]:
    """``eksmllint serve`` arguments of the Deployment (the Helm chart builds the same list)."""
    args = [
        "--tls-cert=/etc/eksmllint/tls/tls.crt",
        "--tls-key=/etc/eksmllint/tls/tls.key",
        f"--port={PORT}",
        "--context-dir=/etc/eksmllint/context",
        "--cluster-context",
        "--deny-on=error",
        "--failure-mode=open",
        "--time-budget=3",
        "--shutdown-delay=5",
    ]
    if mutate:
        args.append(f"--mutate={','.join(mutate)}")
    return args


def deployment_docs(ns: str, image: str, replicas: int = 2, mutate: tuple[str, ...] = ()) -> list[dict]:
    probe = {"scheme": "HTTPS", "port": "https"}
    container = {
        "name": "webhook",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": server_args(mutate),
        "ports": [{"name": "https", "containerPort": PORT, "protocol": "TCP"}],
        "env": [{"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}, {"name": "PYTHONUNBUFFERED", "value": "1"}],
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "startupProbe": {"httpGet": {"path": "/healthz", **probe}, "periodSeconds": 2, "failureThreshold": 30},
        "livenessProbe": {
            "httpGet": {"path": "/healthz", **probe},
            "periodSeconds": 10,
            "timeoutSeconds": 2,
            "failureThreshold": 3,
        },
        "readinessProbe": {
            "httpGet": {"path": "/readyz", **probe},
            "periodSeconds": 5,
            "timeoutSeconds": 2,
            "failureThreshold": 2,
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "runAsUser": 65532,
            "runAsGroup": 65532,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [
            {"name": "tls", "mountPath": "/etc/eksmllint/tls", "readOnly": True},
            {"name": "context", "mountPath": "/etc/eksmllint/context", "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }
    pod_spec = {
        "serviceAccountName": NAME,
        "automountServiceAccountToken": True,
        "terminationGracePeriodSeconds": 30,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65532,
            "runAsGroup": 65532,
            "fsGroup": 65532,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": _selector()},
            },
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": _selector()},
            },
        ],
        "containers": [container],
        "volumes": [
            {"name": "tls", "secret": {"secretName": TLS_SECRET, "defaultMode": 0o440}},
            {"name": "context", "configMap": {"name": CONTEXT_CONFIGMAP, "optional": True}},
            {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}},
        ],
    }
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": _meta(NAME, ns, "webhook"),
            "spec": {
                "replicas": replicas,
                "revisionHistoryLimit": 3,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
                "selector": {"matchLabels": _selector()},
                "template": {"metadata": {"labels": {**_labels("webhook")}}, "spec": pod_spec},
            },
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": _meta(NAME, ns, "webhook"),
            "spec": {"minAvailable": 1, "selector": {"matchLabels": _selector()}},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(NAME, ns, "webhook"),
            "spec": {
                "type": "ClusterIP",
                "selector": _selector(),
                "ports": [{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}],
            },
        },
    ]


def _rules(operations: list[str]) -> list[dict]:
    return [
        {"apiGroups": [g], "apiVersions": list(v), "resources": list(r), "operations": list(operations), "scope": "*"}
        for g, v, r in WEBHOOK_RESOURCES
    ]


def _namespace_selector(ns: str) -> dict:
    return {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [ns, "kube-system"]},
            {"key": NAMESPACE_OPT_OUT_LABEL, "operator": "NotIn", "values": ["disabled"]},
        ]
    }


def webhook_docs(ns: str, mutate: tuple[str, ...] = ()) -> list[dict]:
    """The ValidatingWebhookConfiguration; the mutating one only when rules to fix are given (a
    mutating webhook with nothing to apply would still sit in every Pod's admission path)."""
    inject = {"cert-manager.io/inject-ca-from": f"{ns}/{SERVING_CERT}"}

    def hook(name: str, path: str, operations: list[str], **extra: Any) -> dict:
        return {
            "name": name,
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "timeoutSeconds": WEBHOOK_TIMEOUT_S,
            # Ignore: a linter must not take the cluster down with it; the server itself answers
            # internal errors per --failure-mode.
            "failurePolicy": "Ignore",
            "matchPolicy": "Equivalent",
            "namespaceSelector": _namespace_selector(ns),
            "clientConfig": {"service": {"namespace": ns, "name": NAME, "path": path, "port": 443}},
            "rules": _rules(operations),
            **extra,
        }

    docs = [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": _meta(NAME, None, "webhook", annotations=inject),
            "webhooks": [hook("validate.eksmllint.io", "/validate", ["CREATE", "UPDATE"])],
        },
    ]
    if mutate:
        docs.append(
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingWebhookConfiguration",
                "metadata": _meta(NAME, None, "webhook", annotations=inject),
                # CREATE only: fixes touch fields that are immutable afterwards (Pod spec, Job template).
                "webhooks": [hook("mutate.eksmllint.io", "/mutate", ["CREATE"], reinvocationPolicy="IfNeeded")],
            }
        )
    return docs


def certificate_docs(ns: str) -> list[dict]:
    """A private CA (so rotating the serving certificate does not change the caBundle) and the
    serving certificate, from cert-manager; cainjector copies the CA into the webhooks."""
    svc = f"{NAME}.{ns}.svc"
    return [
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": _meta(f"{NAME}-selfsigned", ns, "webhook"),
            "spec": {"selfSigned": {}},
        },
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": _meta(f"{NAME}-ca", ns, "webhook"),
            "spec": {
                "isCA": True,
                "commonName": f"{NAME}-ca",
                "secretName": f"{NAME}-ca",
                "duration": "87600h",
                "renewBefore": "720h",
                "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                "issuerRef": {"group": "cert-manager.io", "kind": "Issuer", "name": f"{NAME}-selfsigned"},
            },
        },
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": _meta(f"{NAME}-ca", ns, "webhook"),
            "spec": {"ca": {"secretName": f"{NAME}-ca"}},
        },
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": _meta(SERVING_CERT, ns, "webhook"),
            "spec": {
                "secretName": TLS_SECRET,
                "dnsNames": [svc, f"{svc}.cluster.local"],
                "duration": "2160h",
                "renewBefore": "360h",
                "usages": ["server auth", "digital signature", "key encipherment"],
                "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                "issuerRef": {"group": "cert-manager.io", "kind": "Issuer", "name": f"{NAME}-ca"},
            },
        },
    ]


def manifest_files(
    namespace: str = DEFAULT_NAMESPACE, image: str = DEFAULT_IMAGE, replicas: int = 2, mutate: tuple[str, ...] = ()
) -> dict[str, list[dict]]:
    """File name -> documents, in the order to apply them."""
    return {
        "namespace.yaml": namespace_docs(namespace),
        "rbac.yaml": rbac_docs(namespace),
        "deployment.yaml": deployment_docs(namespace, image, replicas, mutate),
        "certificates.yaml": certificate_docs(namespace),
        "webhooks.yaml": webhook_docs(namespace, mutate),
    }


#: The Helm chart reads the facts above from this file (charts/eksmllint/files/generated.yaml);
#: tests/e2e/test_server_chart.py keeps it equal to :func:`chart_data`.
CHART_DATA_HEADER = (
    "# Generated from eksmllint.server.manifests (python -m eksmllint.server.manifests "
    "charts/eksmllint/files/generated.yaml); do not edit by hand.\n"
)


def chart_data() -> dict:
    return {
        "clusterRoleRules": context_reader_rules(),
        "webhookResources": [
            {"apiGroups": [g], "apiVersions": list(v), "resources": list(r)} for g, v, r in WEBHOOK_RESOURCES
        ],
    }


def dump_chart_data() -> str:
    return CHART_DATA_HEADER + yaml.dump(chart_data(), Dumper=_Dumper, sort_keys=False, default_flow_style=False)


class _Dumper(yaml.SafeDumper):
    """Block style, keys in the order written, no aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump(docs: list[dict]) -> str:
    header = "# Generated by `eksmllint webhook-manifests`; do not edit by hand.\n"
    return header + yaml.dump_all(
        docs, Dumper=_Dumper, sort_keys=False, default_flow_style=False, explicit_start=True, width=120
    )


def render(
    namespace: str = DEFAULT_NAMESPACE, image: str = DEFAULT_IMAGE, replicas: int = 2, mutate: tuple[str, ...] = ()
) -> str:
    return dump([d for docs in manifest_files(namespace, image, replicas, mutate).values() for d in docs])


def valid_namespace(name: str) -> bool:
    """RFC 1123 label, as Kubernetes requires of namespace names."""
    import re

    return bool(re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", name))


if __name__ == "__main__":  # regenerate the Helm chart's data file
    import sys

    with open(sys.argv[1], "w", encoding="utf-8") as fh:
        fh.write(dump_chart_data())
