"""Tests of the 1xx EFA rules beyond their fixtures: severities, fix operations and values, and
the boundaries of each check."""

from __future__ import annotations

import textwrap

import pytest
from builders import ec2nodeclass, manifest

from eksmllint.checks.efa.eml104_efa_env_conflict import transport_conflict
from eksmllint.checks.efa.eml106_spot_for_collective import allowed_capacity
from eksmllint.checks.efa.eml108_socket_ifname_unmatched import nccl_interfaces
from eksmllint.config import parse_config
from eksmllint.core.engine import lint_text
from eksmllint.core.finding import Applicability, SetValue


def lint(text: str, *codes: str, **cfg):
    data = {"select": list(codes)} | cfg
    result = lint_text(textwrap.dedent(text), parse_config(data, "test"), name="m.yaml")
    crashes = [f for f in result.findings if f.code in ("EML000", "EML001")]
    assert not crashes, crashes
    return [f for f in result.active if f.code in codes]


ON_DEMAND = 'operator: In\n          values: ["on-demand"]'


def pool(
    name="gpu",
    types=("p4d.24xlarge",),
    zones=("us-west-2a",),
    capacity=ON_DEMAND,
    extra_reqs="",
    taints="",
    node_class="gpu",
):
    reqs = f"""
        - key: node.kubernetes.io/instance-type
          operator: In
          values: [{", ".join(types)}]"""
    if capacity is not None:
        reqs += f"""
        - key: karpenter.sh/capacity-type
          {capacity}"""
    if zones:
        reqs += f"""
        - key: topology.kubernetes.io/zone
          operator: In
          values: [{", ".join(zones)}]"""
    reqs += extra_reqs
    return f"""
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {name}
spec:
  template:
    spec:
      requirements:{reqs}
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: {node_class}
{taints}
"""


def pytorchjob(replicas=2, gpus=8, efa=None, selector="", env="", requests=""):
    efa_line = f"\n                  vpc.amazonaws.com/efa: {efa}" if efa is not None else ""
    return f"""
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: job
  namespace: ml
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: {replicas}
      template:
        spec:{selector}
          containers:
            - name: pytorch
              image: pytorch:2.3.0{env}
              resources:{requests}
                limits:
                  nvidia.com/gpu: {gpus}{efa_line}
"""


def _ops(finding):
    return finding.fix.ops if finding.fix else ()


# --- EML101 ---------------------------------------------------------------------------------


def test_efa_multi_az_fix_pins_first_zone_unsafely():
    found = lint(pool(zones=("us-west-2b", "us-west-2a")) + pytorchjob(efa=4), "EML101")
    assert len(found) == 1
    fix = found[0].fix
    assert fix.applicability is Applicability.UNSAFE
    assert fix.ops == (SetValue(("spec", "template", "spec", "requirements", 2, "values"), ["us-west-2b"]),)


def test_efa_multi_az_silent_without_efa_pods_or_with_pod_zone_pin():
    assert not lint(pool(zones=()) + pytorchjob(efa=None), "EML101")
    assert not lint(pool(zones=()) + pytorchjob(replicas=1, efa=4), "EML101")  # one pod, one node
    selector = """
          nodeSelector:
            topology.kubernetes.io/zone: us-west-2a"""
    assert not lint(pool(zones=("us-west-2a", "us-west-2b")) + pytorchjob(efa=4, selector=selector), "EML101")


def test_efa_multi_az_no_fix_when_no_zone_listed():
    found = lint(pool(zones=()) + pytorchjob(efa=4), "EML101")
    assert len(found) == 1 and found[0].fix is None
    assert "does not pin a zone" in found[0].message


def test_efa_multi_az_ignores_pool_without_the_pods_accelerators():
    # A CPU pool (instance-category c/m) cannot give a GPU pod its GPUs, so it is not "serving" it.
    cpu = pool(
        name="cpu",
        types=(),
        zones=(),
        extra_reqs="""
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: [c, m]""",
    ).replace(
        """
        - key: node.kubernetes.io/instance-type
          operator: In
          values: []""",
        "",
    )
    assert not lint(cpu + pytorchjob(efa=4), "EML101")


# --- EML102 ---------------------------------------------------------------------------------


def test_efa_over_request_sets_min_instance_maximum_in_limits_and_requests():
    requests = """
                requests:
                  nvidia.com/gpu: 8
                  vpc.amazonaws.com/efa: 32"""
    found = lint(pool(types=("p4d.24xlarge", "p5.48xlarge")) + pytorchjob(efa=40, requests=requests), "EML102")
    assert len(found) == 1 and "at most 32" in found[0].message
    c = ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers", 0, "resources")
    assert set(_ops(found[0])) == {
        SetValue(c + ("limits", "vpc.amazonaws.com/efa"), 4),
        SetValue(c + ("requests", "vpc.amazonaws.com/efa"), 4),
    }


def test_efa_over_request_silent_when_it_fits_or_types_unknown():
    assert not lint(pool() + pytorchjob(efa=4), "EML102")
    assert not lint(pytorchjob(efa=64), "EML102")  # nothing pins the instance type


def test_efa_over_request_on_types_without_efa_has_no_fix():
    found = lint(pool(types=("g5.12xlarge",)) + pytorchjob(gpus=4, efa=2), "EML102")
    assert len(found) == 1 and "at most 1" in found[0].message and [op.value for op in _ops(found[0])] == [1]
    found = lint(pool(types=("g5.4xlarge",)) + pytorchjob(gpus=1, efa=1), "EML102")
    assert len(found) == 1 and found[0].fix is None and "none of the instance types" in found[0].message


def node_class(name="gpu", efa_only_cards=None):
    """An EC2NodeClass; with ``efa_only_cards`` it lists networkInterfaces: the primary ENA interface
    on card 0 and one efa-only interface on each card given (device 1 on card 0, else device 0)."""
    interfaces = ""
    if efa_only_cards is not None:
        items = ["    - {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}"]
        items += [
            f"    - {{networkCardIndex: {c}, deviceIndex: {1 if c == 0 else 0}, interfaceType: efa-only}}"
            for c in efa_only_cards
        ]
        interfaces = "\n  networkInterfaces:\n" + "\n".join(items)
    return f"""
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: {name}
spec:
  amiSelectorTerms: [{{alias: al2023@latest}}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: ml}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: ml}}}}]{interfaces}
"""


P5 = ("p5.48xlarge",)


def test_efa_over_request_counts_the_node_class_efa_only_interfaces():
    # 8 efa-only interfaces on a p5.48xlarge (32 network cards): a node has 8 EFA devices.
    found = lint(pool(types=P5) + node_class(efa_only_cards=range(8)) + pytorchjob(efa=32), "EML102")
    assert len(found) == 1
    assert (
        "at most 8" in found[0].message and "EC2NodeClass 'gpu' lists 8 efa-only networkInterfaces" in found[0].message
    )
    assert "Karpenter 1." in found[0].message  # the release assumed is named
    assert [op.value for op in _ops(found[0])] == [8]
    assert not lint(pool(types=P5) + node_class(efa_only_cards=range(8)) + pytorchjob(efa=8), "EML102")
    # Before Karpenter 1.11 the EC2NodeClass has no networkInterfaces: the instance maximum applies.
    old = lint(
        pool(types=P5) + node_class(efa_only_cards=range(8)) + pytorchjob(efa=32),
        "EML102",
        platform={"karpenter": "1.10"},
    )
    assert not old


def test_efa_over_request_node_class_without_efa_only_interfaces():
    found = lint(pool(types=P5) + node_class(efa_only_cards=()) + pytorchjob(efa=32), "EML102")
    assert len(found) == 1 and "lists no efa-only networkInterfaces" in found[0].message and found[0].fix is None


# --- EML103 ---------------------------------------------------------------------------------


def test_efa_not_requested_fix_uses_instance_maximum():
    found = lint(pool(types=("p5.48xlarge",)) + pytorchjob(), "EML103")
    assert len(found) == 1
    path = (
        "spec",
        "pytorchReplicaSpecs",
        "Worker",
        "template",
        "spec",
        "containers",
        0,
        "resources",
        "limits",
        "vpc.amazonaws.com/efa",
    )
    assert _ops(found[0]) == (SetValue(path, 32),)


def test_efa_not_requested_adds_requests_when_device_requests_exist():
    requests = """
                requests:
                  nvidia.com/gpu: 8"""
    found = lint(pool() + pytorchjob(requests=requests), "EML103")
    assert [op.path[-2] for op in _ops(found[0])] == ["limits", "requests"]
    assert all(op.value == 4 for op in _ops(found[0]))


def test_efa_not_requested_partial_node_share():
    # 2 of 8 GPUs on p4d (4 EFAs): one EFA per pod keeps four pods per node.
    found = lint(pool() + pytorchjob(replicas=4, gpus=2), "EML103")
    assert [op.value for op in _ops(found[0])] == [1]
    # 1 of 4 GPUs on g5.12xlarge (1 EFA): any EFA request would change the packing, so no fix.
    found = lint(pool(types=("g5.12xlarge",)) + pytorchjob(replicas=8, gpus=1), "EML103")
    assert len(found) == 1 and found[0].fix is None


def test_efa_not_requested_reads_the_node_class_interfaces():
    # Nodes of a class that lists no efa-only interface have no EFA: requesting one would not schedule.
    assert not lint(pool(types=P5) + node_class(efa_only_cards=()) + pytorchjob(), "EML103")
    # Eight efa-only interfaces: the fix asks for the eight the node has, not the instance's 32.
    found = lint(pool(types=P5) + node_class(efa_only_cards=range(8)) + pytorchjob(), "EML103")
    assert [op.value for op in _ops(found[0])] == [8]


def test_efa_multi_az_silent_when_the_node_class_attaches_no_efa():
    multi_az = pool(zones=("us-west-2a", "us-west-2b"))
    assert lint(multi_az + node_class() + pytorchjob(efa=4), "EML101")
    assert not lint(multi_az + node_class(efa_only_cards=()) + pytorchjob(efa=4), "EML101")


def test_efa_not_requested_silent_cases():
    assert not lint(pool() + pytorchjob(replicas=1), "EML103")  # single pod
    assert not lint(pool() + pytorchjob(efa=4), "EML103")
    assert not lint(pool(types=("p4d.24xlarge", "g5.2xlarge")) + pytorchjob(gpus=1), "EML103")  # g5.2xlarge: no EFA
    assert not lint(pytorchjob(), "EML103")  # landing unknown


# --- EML104 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,value,conflict",
    [
        ("FI_PROVIDER", "efa", False),
        ("FI_PROVIDER", "efa,tcp", False),
        ("FI_PROVIDER", "tcp", True),
        ("FI_PROVIDER", "^efa", True),
        ("FI_PROVIDER", "^tcp", False),
        ("FI_PROVIDER", "", False),
        ("NCCL_NET", "Socket", True),
        ("NCCL_NET", "IB", True),
        ("NCCL_NET", "AWS Libfabric", False),
        ("NCCL_NET_PLUGIN", "none", True),
        ("NCCL_NET_PLUGIN", "aws-ofi-nccl", False),
    ],
)
def test_transport_conflict(name, value, conflict):
    assert (transport_conflict(name, value) is not None) is conflict


def test_efa_env_conflict_only_with_efa_requested():
    env = """
              env:
                - name: NCCL_NET
                  value: Socket"""
    assert len(lint(pytorchjob(efa=4, env=env), "EML104")) == 1
    assert not lint(pytorchjob(env=env), "EML104")


def test_efa_env_conflict_reads_genv_and_value_from_is_ignored():
    text = pytorchjob(
        efa=4,
        env="""
              command: ["mpirun", "-genv", "FI_PROVIDER", "sockets", "python", "t.py"]
              env:
                - name: NCCL_NET
                  valueFrom:
                    configMapKeyRef: {name: nccl, key: net}""",
    )
    found = lint(text, "EML104")
    assert len(found) == 1 and "FI_PROVIDER=sockets" in found[0].message
    assert found[0].location.path[-2:] == ("command", 3)


# --- EML105 ---------------------------------------------------------------------------------


def plugin(node_selector="", tolerations=""):
    return f"""
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: efa-plugin
  namespace: kube-system
spec:
  selector:
    matchLabels: {{name: efa}}
  template:
    metadata:
      labels: {{name: efa}}
    spec:{node_selector}{tolerations}
      containers:
        - name: plugin
          image: 602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.6
"""


def test_device_plugin_coverage_without_nodepools_compares_pinned_types():
    selector = """
          nodeSelector:
            node.kubernetes.io/instance-type: p4de.24xlarge"""
    ds = plugin(
        node_selector="""
      nodeSelector:
        node.kubernetes.io/instance-type: p4d.24xlarge"""
    )
    found = lint(ds + pytorchjob(efa=4, selector=selector), "EML105")
    assert len(found) == 1 and "p4de.24xlarge" in found[0].message
    assert not lint(plugin() + pytorchjob(efa=4, selector=selector), "EML105")  # plugin runs everywhere


def test_device_plugin_coverage_needs_a_plugin_and_checks_taints():
    taints = """
      taints:
        - key: dedicated
          value: ml
          effect: NoSchedule"""
    tol = """
          tolerations:
            - {key: dedicated, operator: Exists}"""
    job = pytorchjob(efa=4, selector=tol)
    assert not lint(pool(taints=taints) + job, "EML105")  # no plugin DaemonSet in the run
    found = lint(pool(taints=taints) + job + plugin(), "EML105")
    assert len(found) == 1 and "dedicated=ml:NoSchedule" in found[0].message
    ok = plugin(
        tolerations="""
      tolerations:
        - operator: Exists"""
    )
    assert not lint(pool(taints=taints) + job + ok, "EML105")


# --- EML106 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reqs,expected",
    [
        ([], None),
        ([("karpenter.sh/capacity-type", "In", ("spot", "on-demand"))], {"spot", "on-demand"}),
        ([("karpenter.sh/capacity-type", "NotIn", ("spot",))], {"on-demand", "reserved"}),
        ([("karpenter.sh/capacity-type", "Exists", ())], {"on-demand", "reserved", "spot"}),
    ],
)
def test_allowed_capacity(reqs, expected):
    assert allowed_capacity(reqs, None) == expected


def test_spot_for_collective_cases():
    spot = 'operator: In\n          values: ["spot", "on-demand"]'
    found = lint(pool(capacity=spot) + pytorchjob(efa=4), "EML106")
    assert len(found) == 1 and found[0].fix.applicability is Applicability.UNSAFE
    assert _ops(found[0]) == (SetValue(("spec", "template", "spec", "requirements", 1, "values"), ["on-demand"]),)
    exists = lint(pool(capacity="operator: Exists") + pytorchjob(efa=4), "EML106")
    assert [op.value for op in _ops(exists[0])] == ["In", ["reserved", "on-demand"]]
    # no capacity-type requirement: Karpenter v1 has no on-demand default, spot is allowed and preferred
    (bare,) = lint(pool(capacity=None) + pytorchjob(efa=4), "EML106")
    assert "no karpenter.sh/capacity-type requirement" in bare.message
    assert [(type(op).__name__, op.value) for op in _ops(bare)] == [
        ("AppendItem", {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]})
    ]
    assert not lint(pool(capacity=spot) + pytorchjob(replicas=1, efa=4), "EML106")  # not multi-node
    on_demand = """
          nodeSelector:
            karpenter.sh/capacity-type: on-demand"""
    assert not lint(pool(capacity=spot) + pytorchjob(efa=4, selector=on_demand), "EML106")


def test_spot_for_collective_silent_for_a_pod_that_selects_a_capacity_reservation():
    """Karpenter sets the capacity-reservation labels on reserved nodes only: a pod selecting one
    on a [reserved, spot] pool never gets spot (a false positive before)."""
    both = 'operator: In\n          values: ["reserved", "spot"]'
    reservation = """
          nodeSelector:
            karpenter.k8s.aws/capacity-reservation-type: capacity-block"""
    assert lint(pool(capacity=both) + pytorchjob(efa=4), "EML106")  # without the selector: spot is possible
    assert not lint(pool(capacity=both) + pytorchjob(efa=4, selector=reservation), "EML106")


# --- EML103: EFA settings without an EFA request (landing types unknown) --------------------


def _env(**values: str) -> str:
    items = "".join(f"\n                - name: {k}\n                  value: {v!r}" for k, v in values.items())
    return "\n              env:" + items


def test_efa_not_requested_reads_the_aws_ofi_nccl_plugin_settings():
    forced = lint(pytorchjob(env=_env(NCCL_NET="AWS Libfabric")), "EML103")
    assert len(forced) == 1 and "aws-ofi-nccl plugin" in forced[0].message
    assert "fails to initialise" in forced[0].message and forced[0].fix is None
    plugin = lint(pytorchjob(env=_env(NCCL_NET_PLUGIN="/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so")), "EML103")
    assert len(plugin) == 1 and "falls back to TCP sockets" in plugin[0].message
    # one finding per pod, however many settings say EFA
    assert len(lint(pytorchjob(env=_env(FI_PROVIDER="efa", NCCL_NET="AWS Libfabric")), "EML103")) == 1


def test_efa_not_requested_plugin_with_another_libfabric_provider_is_silent():
    # aws-ofi-nccl drives HPE Slingshot through libfabric's cxi provider: no EFA intent
    assert not lint(pytorchjob(env=_env(NCCL_NET="AWS Libfabric", FI_PROVIDER="cxi")), "EML103")
    assert not lint(pytorchjob(env=_env(NCCL_NET="Socket", NCCL_NET_PLUGIN="none")), "EML103")
    assert not lint(pytorchjob(efa=4, env=_env(NCCL_NET="AWS Libfabric")), "EML103")  # EFA requested


MPIJOB = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: nccl-tests
  namespace: ml
spec:
  slotsPerWorker: 8
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: nccl-tests:1
              command: [mpirun, -np, "16", -x, {setting}, /opt/nccl-tests/build/all_reduce_perf]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: worker
              image: nccl-tests:1
              resources:
                limits:
                  nvidia.com/gpu: 8{efa}
"""


def test_efa_not_requested_reads_what_the_mpi_launcher_passes_to_the_workers():
    found = lint(MPIJOB.format(setting="FI_PROVIDER=efa", efa=""), "EML103")
    assert len(found) == 1 and found[0].message.startswith("launcher container 'launcher' selects")
    assert found[0].location.path[:3] == ("spec", "mpiReplicaSpecs", "Launcher")
    assert not lint(
        MPIJOB.format(setting="FI_PROVIDER=efa", efa="\n                  vpc.amazonaws.com/efa: 4"), "EML103"
    )
    assert not lint(MPIJOB.format(setting="NCCL_DEBUG=INFO", efa=""), "EML103")


# --- a platform repository linted alone: NodePools judged by their own definition ----------

TRAINING_TAINT = """
      taints:
        - key: workload
          value: training
          effect: NoSchedule"""
TWO_ZONES = ("us-west-2a", "us-west-2b")


def test_efa_multi_az_judges_a_training_pool_without_workloads():
    found = lint(pool(types=P5, zones=TWO_ZONES, taints=TRAINING_TAINT), "EML101")
    assert len(found) == 1
    message = found[0].message
    assert "by its own definition" in message and "no pod of this run that requests accelerators" in message
    assert "workload=training:NoSchedule" in message and "allows 2 zones" in message
    assert _ops(found[0]) == (SetValue(("spec", "template", "spec", "requirements", 2, "values"), ["us-west-2a"]),)
    # an EC2NodeClass that attaches efa-only interfaces says the same
    by_class = lint(pool(types=P5, zones=TWO_ZONES) + node_class(efa_only_cards=range(4)), "EML101")
    assert len(by_class) == 1 and "attaches 4 efa-only interfaces" in by_class[0].message
    # a device-plugin DaemonSet is no workload: it says nothing about what the pool is for
    assert lint(pool(types=P5, zones=TWO_ZONES, taints=TRAINING_TAINT) + plugin(), "EML101")


def test_efa_multi_az_by_definition_needs_clear_evidence():
    # EFA-capable accelerators alone do not make a training pool (trn1 and p5 serve inference too)
    assert not lint(pool(types=P5, zones=TWO_ZONES), "EML101")
    assert not lint(pool(types=("trn1.32xlarge",), zones=TWO_ZONES), "EML101")
    # a type without EFA in the pool, or types not known from the catalogue
    assert not lint(pool(types=("p5.48xlarge", "g5.2xlarge"), zones=TWO_ZONES, taints=TRAINING_TAINT), "EML101")
    assert not lint(pool(types=("m7i.48xlarge",), zones=TWO_ZONES, taints=TRAINING_TAINT), "EML101")
    # one zone; the option switched off
    assert not lint(pool(types=P5, zones=("us-west-2a",), taints=TRAINING_TAINT), "EML101")
    off = {"EML101": {"unused-training-pools": False}}
    assert not lint(pool(types=P5, zones=TWO_ZONES, taints=TRAINING_TAINT), "EML101", rules=off)


def test_efa_multi_az_by_definition_only_without_accelerator_workloads():
    tolerate = """
          tolerations:
            - {key: workload, operator: Exists}"""
    # a single-pod GPU job lands there: the pool's use is seen, and a single pod needs no zone pin
    single = pytorchjob(replicas=1, selector=tolerate)
    assert not lint(pool(types=P5, zones=TWO_ZONES, taints=TRAINING_TAINT) + single, "EML101")
    # a multi-node EFA job: the usual finding, naming the job
    found = lint(
        pool(types=P5, zones=TWO_ZONES, taints=TRAINING_TAINT) + pytorchjob(efa=32, selector=tolerate), "EML101"
    )
    assert len(found) == 1 and "launches EFA nodes for" in found[0].message


def test_spot_for_collective_judges_a_training_pool_without_workloads():
    found = lint(pool(types=P5, capacity=None, taints=TRAINING_TAINT), "EML106")
    assert len(found) == 1 and "has no karpenter.sh/capacity-type requirement" in found[0].message
    assert "by its own definition" in found[0].message
    assert [type(op).__name__ for op in _ops(found[0])] == ["AppendItem"]
    spot = 'operator: In\n          values: ["spot", "on-demand"]'
    assert lint(pool(types=P5, capacity=spot, taints=TRAINING_TAINT), "EML106")
    assert not lint(pool(types=P5, taints=TRAINING_TAINT), "EML106")  # on-demand only
    assert not lint(pool(types=P5, capacity=spot), "EML106")  # nothing says training


def test_efa_not_requested_silent_on_pods_with_dra_claims():
    claims = """
          resourceClaims:
            - {name: gpus, resourceClaimTemplateName: eight-gpus}"""
    text = pool(types=P5) + pytorchjob(selector=claims)
    assert lint(text, "EML103")  # the claims are declared but no container uses them
    used = text.replace(
        "              resources:", "              resources:\n                claims: [{name: gpus}]", 1
    )
    assert not lint(used, "EML103")


RESERVED = 'operator: In\n          values: ["reserved"]'
ONE_RESERVATION = "\n---\n" + manifest(
    ec2nodeclass("gpu", capacityReservationSelectorTerms=[{"id": "cr-0123456789abcdef0"}])
)


def test_efa_multi_az_single_reservation_pool_is_single_az():
    # a pool limited to reserved capacity from one reservation by id lives in that reservation's zone
    assert not lint(pool(zones=(), capacity=RESERVED) + ONE_RESERVATION + pytorchjob(efa=4), "EML101")
    # an on-demand fallback without a zone requirement spans zones again: the real defect
    fallback = 'operator: In\n          values: ["reserved", "on-demand"]'
    assert len(lint(pool(zones=(), capacity=fallback) + ONE_RESERVATION + pytorchjob(efa=4), "EML101")) == 1
    # reservations selected by tags may sit in several zones
    by_tags = "\n---\n" + manifest(ec2nodeclass("gpu", capacityReservationSelectorTerms=[{"tags": {"team": "ml"}}]))
    assert len(lint(pool(zones=(), capacity=RESERVED) + by_tags + pytorchjob(efa=4), "EML101")) == 1


# --- EML107 / EML109 ----------------------------------------------------------------------


def _job(types: str, limits: str, env: str = "", requests: str = "") -> str:
    return f"""
---
apiVersion: batch/v1
kind: Job
metadata:
  name: j
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {{node.kubernetes.io/instance-type: {types}}}
      containers:
        - name: c
          image: pytorch:2.3.0{env}
          resources:{requests}
            limits: {limits}
"""


P2P_OFF = "\n          env: [{name: NCCL_P2P_DISABLE, value: '1'}]"


def test_nvlink_p2p_disabled_needs_nvlink_everywhere_and_several_gpus():
    assert len(lint(_job("p4d.24xlarge", "{nvidia.com/gpu: 8}", P2P_OFF), "EML107")) == 1
    assert not lint(_job("g6e.48xlarge", "{nvidia.com/gpu: 8}", P2P_OFF), "EML107")  # PCIe only
    assert not lint(_job("p4d.24xlarge", "{nvidia.com/gpu: 1}", P2P_OFF), "EML107")  # no peer
    level = "\n          env: [{name: NCCL_P2P_LEVEL, value: NVL}]"
    assert not lint(_job("p5.48xlarge", "{nvidia.com/gpu: 8}", level), "EML107")
    # instance types unknown (a pool open to every GPU type): silent
    open_pool = pool(types=("p4d.24xlarge", "g6e.48xlarge"), zones=())
    assert not lint(
        open_pool
        + _job("p4d.24xlarge", "{nvidia.com/gpu: 8}", P2P_OFF).replace(
            "nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}", "nodeSelector: {}"
        ),
        "EML107",
    )


def test_efa_hugepages_boundaries_and_fixes():
    at_max = "{vpc.amazonaws.com/efa: 32, nvidia.com/gpu: 8, hugepages-2Mi: 10256Mi}"
    assert not lint(_job("p5.48xlarge", at_max), "EML109")
    [over] = lint(_job("p5.48xlarge", at_max.replace("10256Mi", "10258Mi")), "EML109")
    assert _ops(over) == (
        SetValue(("spec", "template", "spec", "containers", 0, "resources", "limits", "hugepages-2Mi"), "5120Mi"),
    )
    # no EFA: the node's huge pages are not the EFA driver's
    assert not lint(_job("p5.48xlarge", "{nvidia.com/gpu: 8, hugepages-2Mi: 32Gi}"), "EML109")
    # requests without limits
    only_req = "\n            requests: {hugepages-2Mi: 2Gi}"
    [mismatch] = lint(_job("p5.48xlarge", "{vpc.amazonaws.com/efa: 32}", requests=only_req), "EML109")
    assert "limits none" in mismatch.message
    assert [op.value for op in _ops(mismatch)] == ["2Gi", "2Gi"]


def test_efa_hugepages_silent_when_the_node_class_sets_huge_pages():
    script = "#!/bin/bash\necho 16384 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages\n"
    user_data = "\n---\n" + manifest(ec2nodeclass("gpu", userData=script))
    limits = "{vpc.amazonaws.com/efa: 32, nvidia.com/gpu: 8, hugepages-2Mi: 32Gi}"
    job = _job("p5.48xlarge", limits)
    p5 = pool(types=("p5.48xlarge",))
    assert len(lint(p5 + job, "EML109")) == 1
    assert not lint(p5 + user_data + job, "EML109")


# --- EML108 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,chosen",
    [
        ("eth", ["eth0"]),
        ("=eth0", ["eth0"]),
        ("=eth", []),
        ("en", []),  # the cheatsheet's host value: eth0 does not start with "en"
        ("ens5,enp", []),
        ("^docker,lo,veth", ["eth0"]),
        ("^lo", ["eth0"]),
        ("^eth", []),
        ("^=eth0", []),
        ("lo", ["lo"]),  # loopback only when named
        ("eth0,", None),
    ],
)
def test_nccl_socket_ifname_syntax(value, chosen):
    assert nccl_interfaces(value) == chosen


def test_socket_ifname_silent_for_host_network_multus_and_substitutions():
    def job(env_value: str, spec: str = "", annotations: str = "") -> str:
        return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: j}}
spec:
  template:{annotations}
    spec:{spec}
      restartPolicy: Never
      containers:
        - name: c
          image: pytorch:2.3.0
          env: [{{name: NCCL_SOCKET_IFNAME, value: "{env_value}"}}]
"""

    assert len(lint(job("ens5"), "EML108")) == 1
    assert not lint(job("ens5", spec="\n      hostNetwork: true"), "EML108")
    multus = "\n    metadata: {annotations: {k8s.v1.cni.cncf.io/networks: efa-net}}"
    assert not lint(job("ens5", annotations=multus), "EML108")
    assert not lint(job("$IFACE"), "EML108")


def test_spot_for_collective_reports_a_collective_that_selects_spot_on_a_mixed_pool():
    mixed = 'operator: In\n          values: ["spot", "on-demand"]'
    spot_selector = """
          nodeSelector:
            karpenter.sh/capacity-type: spot"""
    [finding] = lint(pool(capacity=mixed) + pytorchjob(efa=4, selector=spot_selector), "EML106")
    assert finding.fix is None  # dropping spot from the pool would strand the pod
    assert "selects spot itself although it offers on-demand" in finding.message
    # without the pod's own selector, the pool's fix drops spot
    [plain] = lint(pool(capacity=mixed) + pytorchjob(efa=4), "EML106")
    assert plain.fix is not None and "itself" not in plain.message
    # a spot-only pool: the pool is the defect, the pod's selector merely agrees with it
    spot_only = 'operator: In\n          values: ["spot"]'
    [only] = lint(pool(capacity=spot_only) + pytorchjob(efa=4, selector=spot_selector), "EML106")
    assert "itself" not in only.message
