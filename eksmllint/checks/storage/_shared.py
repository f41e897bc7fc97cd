"""What EML901-904 share: reading FSx for Lustre StorageClasses (EML901, EML902) and recognising
Karpenter EC2NodeClasses (EML903, EML904).

FSx facts (facts file section 13): the CSI driver's StorageClass ``parameters`` are strings;
``deploymentType`` defaults to SCRATCH_1; a StorageClass naming ``fileSystemId`` shares an
existing file system instead of creating one per PVC.
"""

from __future__ import annotations

from eksmllint.resource import Resource

FSX_PROVISIONER = "fsx.csi.aws.com"
NODECLASS_GROUP = "karpenter.k8s.aws"
SCRATCH = ("SCRATCH_1", "SCRATCH_2")
PERSISTENT = ("PERSISTENT_1", "PERSISTENT_2")
DEPLOYMENT_TYPES = SCRATCH + PERSISTENT
DEFAULT_DEPLOYMENT = "SCRATCH_1"


def text(value: object) -> str | None:
    """A parameter as the driver reads it (a stripped string); None for null and booleans."""
    if isinstance(value, bool) or value is None:
        return None
    return str(value).strip()


def is_fsx_storage_class(sc: Resource) -> bool:
    return sc.kind == "StorageClass" and sc.get(("provisioner",)) == FSX_PROVISIONER


def fsx_parameters(sc: Resource) -> dict:
    params = sc.get(("parameters",))
    return params if isinstance(params, dict) else {}


def provisions_new_filesystem(sc: Resource) -> bool:
    """A StorageClass naming ``fileSystemId`` shares an existing file system (its other
    parameters are ignored); otherwise each PVC creates a new file system."""
    return is_fsx_storage_class(sc) and "fileSystemId" not in fsx_parameters(sc)


def fsx_deployment_type(sc: Resource) -> str | None:
    """Deployment type of the file systems an FSx StorageClass creates (SCRATCH_1 when unset);
    None when the value is not literal."""
    value = fsx_parameters(sc).get("deploymentType")
    return DEFAULT_DEPLOYMENT if value is None else text(value)


def is_nodeclass(r: Resource) -> bool:
    """A Karpenter AWS EC2NodeClass."""
    return r.kind == "EC2NodeClass" and r.group == NODECLASS_GROUP
