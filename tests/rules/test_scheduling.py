"""Rule family 7xx (scheduling graph, references): behaviour the bad/good fixtures do not pin
down — noise guards, options, webhook mode, fixes."""

from __future__ import annotations

import pytest
import yaml
from builders import container, manifest, pod_template, pytorchjob, replica, said
from repository import ROOT
from scheduling_storage_manifests import CPU_POD, GPU_POD, MALFORMED, docs, findings, job, pool, pvc

from eksmllint.config import Config
from eksmllint.core.engine import lint_loaded, lint_paths, lint_text
from eksmllint.core.finding import Severity
from eksmllint.fix.apply import apply_fix
from eksmllint.loader import LoadResult, parse_source
from eksmllint.resource import SourceFile


# --- EML701 -------------------------------------------------------------------------------------
def test_701_reports_gpu_pod_and_fix_tolerates_the_taint():
    text = docs(pool("gpu", '"g5.2xlarge"'), job("train", GPU_POD))
    [f] = findings(text, "EML701")
    assert "nvidia.com/gpu=true:NoSchedule" in said(f)
    fixed = apply_fix(text, f.fix, doc_index=1)
    assert "operator: Equal" in fixed and findings(fixed, "EML701") == []


def test_701_ignores_cpu_pod_without_selector_even_if_every_pool_is_tainted():
    """The MPIJob-launcher case: it may run on a managed node group the run does not describe."""
    text = docs(pool("gpu", '"g5.2xlarge"'), pool("trn", '"trn1.32xlarge"'), job("launcher", CPU_POD))
    assert findings(text, "EML701") == []


def test_701_only_counts_pools_that_can_serve_the_devices():
    """A GPU pod is not 'blocked' by a Trainium pool: the fix names the GPU pool's taint only."""
    trn = pool("trn", '"trn1.32xlarge"').replace("nvidia.com/gpu", "aws.amazon.com/neuron")
    text = docs(trn, pool("gpu", '"g5.2xlarge"'), job("train", GPU_POD))
    [f] = findings(text, "EML701")
    assert "NodePool gpu" in said(f) and "neuron" not in said(f)
    assert [op.value["key"] for op in f.fix.ops] == ["nvidia.com/gpu"]


def test_701_silent_when_an_untainted_pool_serves_the_pod():
    text = docs(pool("gpu", '"g5.2xlarge"'), pool("gpu-open", '"g5.4xlarge"', tainted=False), job("train", GPU_POD))
    assert findings(text, "EML701") == []


def test_701_skips_daemonsets_and_non_karpenter_selectors():
    ds = job("plugin", GPU_POD.replace("restartPolicy: Never\n", ""), kind="DaemonSet", api="apps/v1")
    mng = job("mng", "nodeSelector:\n  eks.amazonaws.com/nodegroup: gpu\n" + GPU_POD)
    assert findings(docs(pool("gpu", '"g5.2xlarge"'), ds, mng), "EML701") == []


def _kueue(flavor_spec: str, covered: str = "[cpu, memory, nvidia.com/gpu]") -> str:
    """LocalQueue q (namespace ml) -> ClusterQueue cq -> ResourceFlavor gpu with ``flavor_spec``."""
    return docs(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: gpu\nspec:\n" + flavor_spec,
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\nspec:\n  resourceGroups:\n"
        f"    - coveredResources: {covered}\n      flavors:\n        - name: gpu\n"
        "          resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n  namespace: ml\n"
        "spec:\n  clusterQueue: cq\n",
    )


def _queued(body: str) -> str:
    return job("train", body).replace("  name: train\n", "  name: train\n  labels: {kueue.x-k8s.io/queue-name: q}\n")


_FLAVOR_TAINT = "  nodeTaints:\n    - {key: team, value: vision, effect: NoSchedule}\n"


def test_701_a_flavor_whose_node_taints_the_pods_do_not_tolerate_is_never_admitted():
    """Kueue admits a workload to a ResourceFlavor only if its pods tolerate the flavor's nodeTaints,
    and adds no toleration for them (kueue.sigs.k8s.io/docs/concepts/resource_flavor)."""
    text = docs(_kueue(_FLAVOR_TAINT), _queued(GPU_POD))
    [f] = findings(text, "EML701")
    assert "no ResourceFlavor" in said(f) and "gpu (team=vision:NoSchedule)" in said(f)
    assert findings(apply_fix(text, f.fix, doc_index=3), "EML701") == []


def test_701_a_flavor_that_tolerates_its_own_node_taints_admits_anyone():
    """kubernetes-sigs/kueue#4646: nodeTaints the flavor's own tolerations match are not considered."""
    own = _FLAVOR_TAINT + "  tolerations:\n    - {key: team, operator: Exists, effect: NoSchedule}\n"
    assert findings(docs(_kueue(own), _queued(GPU_POD)), "EML701") == []


def test_701_flavor_tolerations_are_added_to_the_pods():
    """The NodePool's nvidia.com/gpu taint is tolerated through the flavor's tolerations."""
    flavor = "  tolerations:\n    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
    pooled = docs(pool("gpu", '"g5.2xlarge"'), _queued(GPU_POD))
    assert len(findings(pooled, "EML701")) == 1  # the pod alone does not tolerate it
    assert findings(docs(pooled, _kueue(flavor)), "EML701") == []


def test_701_the_fix_leaves_out_taints_the_flavor_tolerates():
    flavor = "  tolerations:\n    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
    team = pool("gpu", '"g5.2xlarge"').replace(
        "          effect: NoSchedule\n",
        "          effect: NoSchedule\n        - {key: team, value: a, effect: NoSchedule}\n",
    )
    [f] = findings(docs(team, _queued(GPU_POD), _kueue(flavor)), "EML701")
    assert [op.value["key"] for op in f.fix.ops] == ["team"]


def test_701_flavor_taints_bind_only_pods_requesting_what_the_flavor_covers():
    """A flavor of a group covering nvidia.com/gpu is not assigned to a pod requesting only cpu."""
    cpu = CPU_POD.replace("launcher:1.0\n", "launcher:1.0\n    resources: {requests: {cpu: 1}}\n")
    assert findings(docs(_kueue(_FLAVOR_TAINT, covered="[nvidia.com/gpu]"), _queued(cpu)), "EML701") == []


# --- EML702 -------------------------------------------------------------------------------------
def test_702_misspelt_nodepool_name_is_reported_at_the_selector():
    body = "nodeSelector:\n  karpenter.sh/nodepool: gpu-larg\n" + CPU_POD
    [f] = findings(docs(pool("gpu-large", '"g5.2xlarge"', tainted=False), job("j", body)), "EML702")
    assert f.location.path[-1] == "karpenter.sh/nodepool" and "gpu-larg" in said(f)


def test_702_silent_for_a_nodepool_the_run_does_not_hold():
    """Open world: a pod pinned to a pool created elsewhere (Terraform; Auto Mode is not in use here)."""
    body = "nodeSelector:\n  karpenter.sh/nodepool: gpu-large\n" + CPU_POD
    assert findings(docs(pool("gpu", '"g5.2xlarge"', tainted=False), job("j", body)), "EML702") == []


AUTO_MODE_CLASS = """\
apiVersion: eks.amazonaws.com/v1
kind: NodeClass
metadata:
  name: custom
spec:
  role: AmazonEKSAutoNodeRole
"""


def _pinned(pool_name: str, body: str = GPU_POD) -> str:
    return job("train", f"nodeSelector:\n  karpenter.sh/nodepool: {pool_name}\n" + body)


def test_702_a_gpu_pod_pinned_to_a_built_in_auto_mode_pool_never_lands():
    """EKS Auto Mode's general-purpose and system pools launch c/m/r instances only
    (docs.aws.amazon.com/eks/latest/userguide/set-builtin-node-pools.html)."""
    for name in ("general-purpose", "system"):
        [f] = findings(docs(AUTO_MODE_CLASS, _pinned(name)), "EML702")
        assert f"NodePool {name}" in said(f) and "instance categories c, m, r" in said(f)
        assert "NodeClass custom of the run" in said(f) and f.location.path[-1] == "karpenter.sh/nodepool"


def test_702_built_in_pools_only_where_the_run_says_auto_mode_is_in_use():
    """Open world: a cluster not known to run Auto Mode has no built-in pools; config decides both ways."""
    from eksmllint.platform import Platform

    on, off = (Config().model_copy(update={"platform": Platform(eks_auto_mode=v)}) for v in (True, False))
    assert findings(_pinned("general-purpose"), "EML702") == []
    assert len(findings(_pinned("general-purpose"), "EML702", on)) == 1
    assert findings(docs(AUTO_MODE_CLASS, _pinned("general-purpose")), "EML702", off) == []
    assert findings(docs(AUTO_MODE_CLASS, _pinned("gpu-pool")), "EML702") == []  # a pool made elsewhere


def test_cpu_pods_pinned_to_built_in_pools_are_fine_unless_the_system_taint_is_untolerated():
    assert findings(docs(AUTO_MODE_CLASS, _pinned("general-purpose", CPU_POD)), "EML702") == []
    assert findings(docs(AUTO_MODE_CLASS, _pinned("general-purpose", CPU_POD)), "EML701") == []
    text = docs(AUTO_MODE_CLASS, _pinned("system", CPU_POD))
    [f] = findings(text, "EML701")
    assert "CriticalAddonsOnly:NoSchedule" in said(f) and findings(text, "EML702") == []
    assert findings(apply_fix(text, f.fix, doc_index=1), "EML701") == []


def test_702_silent_without_nodepools_and_for_hyperpod_instance_types():
    pinned = "nodeSelector:\n  node.kubernetes.io/instance-type: ml.g5.8xlarge\n" + GPU_POD
    assert findings(job("j", pinned), "EML702") == []
    assert findings(docs(pool("gpu", '"g5.2xlarge"', tainted=False), job("j", pinned)), "EML702") == []


def test_702_not_reported_when_only_taints_or_zone_are_the_problem():
    zoned = "nodeSelector:\n  topology.kubernetes.io/zone: us-west-2b\n" + GPU_POD
    text = docs(pool("gpu", '"g5.2xlarge"'), job("tainted", GPU_POD), job("zoned", zoned))
    assert findings(text, "EML702") == []
    assert len(findings(text, "EML701")) == 1 and len(findings(text, "EML705")) == 1


# --- EML703 -------------------------------------------------------------------------------------
CM_JOB = job("j", CPU_POD + "    envFrom:\n      - configMapRef:\n          name: settings\n")
A_CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n  namespace: ml\n"


def test_703_lone_job_is_not_checked_until_the_run_holds_the_kind():
    assert findings(CM_JOB, "EML703") == []
    assert len(findings(docs(CM_JOB, A_CONFIGMAP), "EML703")) == 1


@pytest.mark.parametrize(
    "cfg",
    [
        {"rules": {"EML703": {"kinds": ["ConfigMap"]}}},
        {"rules": {"dangling-reference": {"kinds": ["configmap"]}}},
        {"reference-kinds": ["ConfigMap"]},
    ],
)
def test_703_explicit_kinds_check_absent_kinds(cfg):
    assert len(findings(CM_JOB, "EML703", Config.model_validate(cfg))) == 1


def test_703_exclude_kinds_opts_out():
    cfg = Config.model_validate({"rules": {"EML703": {"exclude-kinds": ["ConfigMap"]}}})
    assert findings(docs(CM_JOB, A_CONFIGMAP), "EML703", cfg) == []


def _webhook(text: str, context: str | None):
    src = SourceFile("admission.yaml", text)
    resources, problems = parse_source(src)
    ctx = None
    if context is not None:
        csrc = SourceFile("cluster.yaml", context)
        cres, _ = parse_source(csrc)
        ctx = LoadResult([csrc], cres, [])
    cfg = Config.model_validate({"select": ["EML703"], "rules": {"EML703": {"kinds": ["ConfigMap", "Secret"]}}})
    result = lint_loaded(LoadResult([src], resources, problems), cfg, context=ctx, mode="webhook")
    return [f for f in result.active if f.code == "EML703"]


def test_703_webhook_is_silent_without_context_and_limited_to_context_kinds():
    text = job(
        "j",
        CPU_POD + "    envFrom:\n      - configMapRef:\n          name: settings\n"
        "      - secretRef:\n          name: token\n",
    )
    assert _webhook(text, None) == []
    [f] = _webhook(text, A_CONFIGMAP)  # Secret is configured but the context holds none
    assert "ConfigMap 'settings'" in said(f)


def test_703_builtins_generated_secrets_placeholders_and_optional_refs_never_dangle():
    body = (
        CPU_POD
        + """\
    envFrom:
      - secretRef:
          name: hf-token
      - secretRef:
          name: maybe
          optional: true
serviceAccountName: default
volumes:
  - name: ca
    configMap:
      name: kube-root-ca.crt
  - name: data
    persistentVolumeClaim:
      claimName: __PVC_NAME__
"""
    )
    others = """\
apiVersion: v1
kind: Secret
metadata:
  name: unrelated
  namespace: ml
---
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: hf
  namespace: ml
spec:
  target:
    name: hf-token
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: trainer
  namespace: ml
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: ml
"""
    assert findings(docs(job("j", body), A_CONFIGMAP, others), "EML703") == []


def test_703_leaves_cross_namespace_pvc_to_704():
    pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: storage\n"
    body = CPU_POD + "volumes:\n  - name: d\n    persistentVolumeClaim:\n      claimName: data\n"
    text = docs(job("j", body), pvc)
    assert findings(text, "EML703") == []
    [f] = findings(text, "EML704")
    assert "namespace storage" in said(f)


def test_seed_manifests(shared):
    result = lint_paths([str(shared / "seed" / "manifests")], Config(select=("EML7",)))
    msgs = " ".join(said(f) for f in result.active if f.code == "EML703")
    assert "bionemo-models-pvc" in msgs and "molecule-data-pvc" in msgs
    launcher = [f for f in result.active if f.code == "EML701" and "launcher" in said(f)]
    assert launcher == []


# --- EML705 -------------------------------------------------------------------------------------
def test_705_storage_class_allowed_topologies_conflict_with_pod_zone():
    sc = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ebs-2b
provisioner: ebs.csi.aws.com
allowedTopologies:
  - matchLabelExpressions:
      - key: topology.ebs.csi.aws.com/zone
        values: ["us-west-2b"]
"""
    body = (
        "nodeSelector:\n  topology.kubernetes.io/zone: us-west-2a\n"
        + CPU_POD
        + "volumes:\n  - name: d\n    persistentVolumeClaim:\n      claimName: data\n"
    )
    [f] = findings(docs(sc, pvc("data", "ebs-2b"), job("j", body)), "EML705")
    assert "us-west-2b" in said(f) and f.location.path[-1] == "claimName"
    assert findings(docs(sc.replace("us-west-2b", "us-west-2a"), pvc("data", "ebs-2b"), job("j", body)), "EML705") == []


# --- robustness ------------------------------------------------------------------------------------
def test_malformed_input_never_crashes_the_rules():
    result = lint_text(docs(*MALFORMED), Config(select=("EML7",)), name="bad.yaml")
    crashes = [said(f) for f in result.findings if f.code == "EML000"]
    assert crashes == []


# --- reserved capacity (ODCRs, Capacity Blocks) ------------------------------------------------------
def selecting(labels: str) -> str:
    return "nodeSelector:\n" + "".join(f"  {line}\n" for line in labels.split(";")) + GPU_POD


@pytest.mark.parametrize(
    "capacity,selector,reported",
    [
        # reservation labels are only set on nodes launched into a reservation (capacity type reserved)
        ("In [on-demand, spot]", "karpenter.k8s.aws/capacity-reservation-type: capacity-block", True),
        ("NotIn [reserved]", "karpenter.k8s.aws/capacity-reservation-id: cr-0123456789abcdef0", True),
        ("In [reserved, on-demand]", "karpenter.k8s.aws/capacity-reservation-type: capacity-block", False),
        (None, "karpenter.k8s.aws/capacity-reservation-type: capacity-block", False),
        # reserved is its own capacity type: neither on-demand nor spot serves it, nor it them
        ("In [on-demand, spot]", "karpenter.sh/capacity-type: reserved", True),
        ("In [reserved]", "karpenter.sh/capacity-type: on-demand", True),
        ("In [reserved, spot]", "karpenter.sh/capacity-type: reserved", False),
        (None, "karpenter.sh/capacity-type: reserved", False),
    ],
)
def test_702_reserved_capacity_is_its_own_capacity_type(capacity, selector, reported):
    text = docs(pool("gpu", '"p5.48xlarge"', tainted=False, capacity=capacity), job("j", selecting(selector)))
    found = findings(text, "EML702")
    assert bool(found) == reported, [said(f) for f in found]
    if found:
        assert "karpenter.sh/capacity-type" in said(found[0]) and found[0].location.path[-1] == selector.split(":")[0]


def test_702_a_reservation_label_excluded_by_notin_needs_no_reserved_node():
    body = (
        "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      nodeSelectorTerms:\n        - matchExpressions:\n"
        "            - {key: karpenter.k8s.aws/capacity-reservation-type, operator: NotIn, values: [capacity-block]}\n"
        + GPU_POD
    )
    text = docs(pool("gpu", '"p5.48xlarge"', tainted=False, capacity="In [on-demand]"), job("j", body))
    assert findings(text, "EML702") == []


def test_reservation_labels_decide_where_the_pod_lands_for_every_rule():
    """One placement answer: a pod selecting a Capacity Block never lands on an on-demand pool, so
    the disruption rules do not judge it there either (EML502 said 'it lands on NodePool gpu')."""
    body = selecting("karpenter.k8s.aws/capacity-reservation-type: capacity-block")
    text = docs(pool("gpu", '"p5.48xlarge"', tainted=False, capacity="In [on-demand]"), job("j", body))
    result = lint_text(text, Config(select=("EML5", "EML7")), name="test.yaml")
    assert sorted(f.code for f in result.active) == ["EML501", "EML702"]
    [pool_finding] = [f for f in result.active if f.code == "EML501"]
    assert "Job" not in said(pool_finding)  # judged by its own definition, not by the pod


# --- DRA ResourceClaims: devices the rules cannot count --------------------------------------------
DRA_POD = """\
restartPolicy: Never
nodeSelector:
  karpenter.sh/capacity-type: on-demand{zone}
resourceClaims:
  - name: gpus
    resourceClaimTemplateName: eight-gpus
containers:
  - name: c
    image: example.com/train:1.0
    resources:
      claims:
        - name: gpus
"""
TRN_POOL = pool("a-trn", '"trn1.32xlarge"').replace("nvidia.com/gpu", "aws.amazon.com/neuron")


def dra_job(zone: str | None = None) -> str:
    return job("j", DRA_POD.format(zone=f"\n  topology.kubernetes.io/zone: {zone}" if zone else ""))


def test_701_does_not_pick_a_pool_for_devices_claimed_through_dra():
    """A pod whose GPUs come from a ResourceClaim is not device-less: which tainted pool has its
    devices is unknown, so the finding stands (no pool its selectors allow tolerates it) but no
    fix tolerates a pool chosen as if it needed none (here the Trainium pool, first by name)."""
    [f] = findings(docs(TRN_POOL, pool("gpu", '"p5.48xlarge"'), dra_job()), "EML701")
    assert f.fix is None
    assert "ResourceClaims" in said(f) and "that can serve them" not in said(f)
    # one candidate pool: it is the only place the pod can go, devices or not, so the fix stays
    [f] = findings(docs(pool("gpu", '"p5.48xlarge"'), dra_job()), "EML701")
    assert f.fix is not None and "NodePool gpu" in f.fix.title


def test_705_names_the_pools_of_a_dra_pod_by_its_selectors():
    [f] = findings(docs(TRN_POOL, pool("gpu", '"p5.48xlarge"'), dra_job("us-west-2b")), "EML705")
    assert "that could serve them" not in said(f) and "ResourceClaims" in said(f)


def test_702_never_blames_devices_a_dra_pod_claims():
    """No device reason without a device count: a DRA pod is reported only for its labels."""
    assert findings(docs(TRN_POOL, dra_job()), "EML702") == []
    body = DRA_POD.format(zone="\n  karpenter.sh/nodepool: a-trn1")  # a near miss of a-trn
    [f] = findings(docs(TRN_POOL, job("j", body)), "EML702")
    assert f.location.path[-1] == "karpenter.sh/nodepool"


# --- EML707 -------------------------------------------------------------------------------------
def _rwo_case(modes: str, gpus: int | None, claim: str = "ckpt") -> str:
    limits = {"nvidia.com/gpu": gpus} if gpus else {"cpu": "2"}
    worker = container(
        "c",
        command=["torchrun", "--nnodes=2", "train.py"],
        limits=limits,
        volumeMounts=[{"name": "v", "mountPath": "/ckpt"}],
    )
    volumes = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
    claim_doc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "ckpt", "namespace": "ml"},
        "spec": {"accessModes": yaml.safe_load(modes), "resources": {"requests": {"storage": "10Gi"}}},
    }
    return manifest(
        claim_doc, pytorchjob("pt", worker=replica(2, pod_template(worker, volumes=volumes)), namespace="ml")
    )


def test_707_rwo_reported_only_for_pods_that_cannot_share_a_node():
    assert len(findings(_rwo_case("[ReadWriteOnce]", 8), "EML707")) == 1
    assert findings(_rwo_case("[ReadWriteOnce]", 1), "EML707") == []  # two 1-GPU pods fit one node
    assert findings(_rwo_case("[ReadWriteOnce]", None), "EML707") == []  # CPU pods may share a node
    assert findings(_rwo_case("[ReadWriteMany]", 8), "EML707") == []
    assert findings(_rwo_case("[ReadWriteOnce, ReadOnlyMany]", 8), "EML707") == []
    assert findings(_rwo_case("[ReadWriteOnce]", 8, claim="elsewhere"), "EML707") == []  # modes unknown


def test_707_read_write_once_pod_conflicts_on_one_node_too():
    [f] = findings(_rwo_case("[ReadWriteOncePod]", None), "EML707")
    assert "ReadWriteOncePod" in said(f)


# --- EML706 -------------------------------------------------------------------------------------
_TAS_DIR = "fixtures/rules/EML706-topology-level-missing"


def _tas_case(annotation: str = "podset-required-topology", level: str = "topology.k8s.aws/network-node-layer-4"):
    text = (ROOT / _TAS_DIR / "bad.yaml").read_text()
    return text.replace(
        "kueue.x-k8s.io/podset-required-topology: topology.k8s.aws/network-node-layer-4  # expect: EML706",
        f"kueue.x-k8s.io/{annotation}: {level}",
    )


def test_706_preferred_level_is_a_warning_and_required_an_error():
    [required] = findings(_tas_case(), "EML706")
    assert required.severity is Severity.ERROR and "never admitted" in said(required)
    [preferred] = findings(_tas_case("podset-preferred-topology"), "EML706")
    assert preferred.severity is Severity.WARNING and "ignored" in said(preferred)
    assert findings(_tas_case(level="kubernetes.io/hostname"), "EML706") == []


def test_706_silent_when_the_chain_is_incomplete_or_kueue_predates_tas():
    text = _tas_case()
    assert findings(text.replace("clusterQueue: training", "clusterQueue: elsewhere"), "EML706") == []
    assert findings(text.replace("  topologyName: ec2-network\n", ""), "EML706") == []  # no TAS flavor
    old = Config.model_validate({"platform": {"kueue": "0.8"}})
    assert findings(text, "EML706", old) == []
