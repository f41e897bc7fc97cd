"""Label keys and extended-resource names Karpenter and the device plugins put on the catalogue's
instance types, and the capacity types a node can be launched with.

Capacity types
--------------
:data:`CAPACITY_TYPES` lists ``karpenter.sh/capacity-type`` values in Karpenter's launch preference.
``reserved`` covers on-demand capacity reservations and Capacity Blocks; a reservation labelled
``capacity-reservation-interruptible: "true"`` can be reclaimed like spot. The reservation labels
(:data:`RESERVATION_LABELS`) are only present on reserved nodes, so a pod selecting one needs a
NodePool that allows ``reserved`` (source ``karpenter-capacity-types``).
"""

from __future__ import annotations

from collections.abc import Mapping

from eksmllint.platform.provisioners import label_aliases

# --------------------------------------------------------------------------------------------
# Label keys and resource names
# --------------------------------------------------------------------------------------------
_K = "karpenter.k8s.aws/"
L_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
L_ARCH = "kubernetes.io/arch"
L_OS = "kubernetes.io/os"
L_FAMILY = _K + "instance-family"
L_CATEGORY = _K + "instance-category"
L_GENERATION = _K + "instance-generation"
L_SIZE = _K + "instance-size"
L_CPU = _K + "instance-cpu"
L_CPU_MANUFACTURER = _K + "instance-cpu-manufacturer"
L_MEMORY = _K + "instance-memory"
L_NETWORK_BANDWIDTH = _K + "instance-network-bandwidth"
L_LOCAL_NVME = _K + "instance-local-nvme"
L_GPU_NAME = _K + "instance-gpu-name"
L_GPU_COUNT = _K + "instance-gpu-count"
L_GPU_MANUFACTURER = _K + "instance-gpu-manufacturer"
L_GPU_MEMORY = _K + "instance-gpu-memory"
L_ACCELERATOR_NAME = _K + "instance-accelerator-name"
L_ACCELERATOR_COUNT = _K + "instance-accelerator-count"
L_ACCELERATOR_MANUFACTURER = _K + "instance-accelerator-manufacturer"

INSTANCE_LABEL_KEYS: frozenset[str] = frozenset(
    {
        L_INSTANCE_TYPE,
        L_ARCH,
        L_OS,
        L_FAMILY,
        L_CATEGORY,
        L_GENERATION,
        L_SIZE,
        L_CPU,
        L_CPU_MANUFACTURER,
        L_MEMORY,
        L_NETWORK_BANDWIDTH,
        L_LOCAL_NVME,
        L_GPU_NAME,
        L_GPU_COUNT,
        L_GPU_MANUFACTURER,
        L_GPU_MEMORY,
        L_ACCELERATOR_NAME,
        L_ACCELERATOR_COUNT,
        L_ACCELERATOR_MANUFACTURER,
    }
)
"""Label keys :meth:`Catalogue.matching` evaluates; requirements on other keys are ignored."""

LABEL_ALIASES: Mapping[str, str] = label_aliases()
"""Other labels for the same facts: the deprecated beta labels Kubernetes still normalises to the
GA keys, and EKS Auto Mode's ``eks.amazonaws.com/instance-*`` (platform/provisioners.yaml)."""

SAGEMAKER_PREFIX = "ml."
"""SageMaker HyperPod names its nodes' instance types ``ml.<EC2 type>`` (source: sagemaker-hyperpod-names)."""


def ec2_instance_name(name: str) -> str:
    """The EC2 twin of a SageMaker HyperPod instance name (``ml.p5.48xlarge`` -> ``p5.48xlarge``);
    other names unchanged."""
    return name[len(SAGEMAKER_PREFIX) :] if name.startswith(SAGEMAKER_PREFIX) else name


L_CAPACITY_TYPE = "karpenter.sh/capacity-type"
L_RESERVATION_INTERRUPTIBLE = _K + "capacity-reservation-interruptible"
L_RESERVATION_ID = _K + "capacity-reservation-id"
L_RESERVATION_TYPE = _K + "capacity-reservation-type"
RESERVATION_LABELS: tuple[str, ...] = (L_RESERVATION_ID, L_RESERVATION_TYPE, L_RESERVATION_INTERRUPTIBLE)
"""Labels Karpenter sets only on nodes launched into a capacity reservation (capacity type ``reserved``)."""
CAPACITY_TYPES: tuple[str, ...] = ("reserved", "spot", "on-demand")
"""``karpenter.sh/capacity-type`` values, in the order Karpenter prefers them when several are allowed."""
RECLAIMABLE_CAPACITY_TYPES: frozenset[str] = frozenset({"spot"})
"""Capacity EC2 can take back with a short notice (plus reservations marked interruptible)."""

R_NVIDIA_GPU = "nvidia.com/gpu"
R_NEURON = "aws.amazon.com/neuron"
R_NEURONDEVICE = "aws.amazon.com/neurondevice"
R_NEURONCORE = "aws.amazon.com/neuroncore"
R_EFA = "vpc.amazonaws.com/efa"
ACCELERATOR_RESOURCES: tuple[str, ...] = (R_NVIDIA_GPU, R_NEURON, R_NEURONDEVICE, R_NEURONCORE, R_EFA)
