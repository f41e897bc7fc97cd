"""What EML901-904 share: reading FSx for Lustre StorageClasses (EML901, EML902) and recognising
Karpenter EC2NodeClasses (EML903, EML904).

FSx facts (facts file section 13): the CSI driver's StorageClass ``parameters`` are strings;
``deploymentType`` defaults to SCRATCH_1; a StorageClass naming ``fileSystemId`` shares an
existing file system instead of creating one per PVC.
"""

from __future__ import annotations

from eksmllint.resource import Resource

FSX_PROVISIONER = "fsx.csi.aws.com"
#: CSI drivers whose volumes are network file systems shared over the VPC (EML905), by the name
#: each driver registers: aws-fsx-csi-driver, aws-efs-csi-driver, mountpoint-s3-csi-driver.
NETWORK_FS_DRIVERS = {
    FSX_PROVISIONER: "FSx for Lustre",
    "efs.csi.aws.com": "EFS",
    "s3.csi.aws.com": "Mountpoint for S3",
}
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


def network_filesystem(run, namespace: str | None, volume: dict) -> str | None:
    """What network file system a pod ``volume`` mounts ("FSx for Lustre (PVC data)"): an inline
    ``nfs`` or CSI volume, or a PVC whose StorageClass (or bound PersistentVolume) uses a network
    file-system driver; None when it is not one or the run does not show it."""
    if isinstance(volume.get("nfs"), dict):
        return "NFS"
    csi = volume.get("csi")
    if isinstance(csi, dict) and csi.get("driver") in NETWORK_FS_DRIVERS:
        return NETWORK_FS_DRIVERS[csi["driver"]]
    claim = volume.get("persistentVolumeClaim")
    name = claim.get("claimName") if isinstance(claim, dict) else None
    found = run.find("PersistentVolumeClaim", name, namespace) if isinstance(name, str) else []
    if len(found) != 1:
        return None
    pvc = found[0]
    drivers = []
    sc_name = pvc.get(("spec", "storageClassName"))
    if isinstance(sc_name, str):
        drivers += [sc.get(("provisioner",)) for sc in run.find("StorageClass", sc_name)]
    pv_name = pvc.get(("spec", "volumeName"))
    if isinstance(pv_name, str):
        drivers += [pv.get(("spec", "csi", "driver")) for pv in run.find("PersistentVolume", pv_name)]
    kinds = {NETWORK_FS_DRIVERS.get(d) for d in drivers if isinstance(d, str)}
    if len(kinds) == 1 and None not in kinds:
        return f"{kinds.pop()} (PVC {name})"
    return None
