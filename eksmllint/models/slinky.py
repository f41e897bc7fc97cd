"""Slinky slurm-operator CRDs (``slinky.slurm.net``), loosely.

Source: SlinkyProject/slurm-operator ``api/v1beta1`` (Controller, NodeSet, LoginSet,
Accounting, RestApi, Token); ``v1alpha1`` had the same kinds, and the earliest releases
used ``Cluster`` + ``NodeSet``.  There is **no** ``SlurmCluster`` or ``SlurmNodeSet`` kind:
those are not registered, so they surface as unknown kinds (EML004) instead of being
validated against an invented schema.

Only the envelope is checked (``spec`` must be a mapping); the spec schemas change between
releases faster than eksmllint's rules need them.
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

from .common import KubeObject, Obj

V1BETA1_KINDS = ("Controller", "NodeSet", "LoginSet", "Accounting", "RestApi", "Token")
V1ALPHA1_KINDS = (*V1BETA1_KINDS, "Cluster")


class SlinkyObject(KubeObject):
    KINDS = tuple(
        [("slinky.slurm.net/v1beta1", k) for k in V1BETA1_KINDS]
        + [("slinky.slurm.net/v1alpha1", k) for k in V1ALPHA1_KINDS]
    )
    spec: Obj | None = None


MODELS: tuple[type[KubeObject], ...] = (SlinkyObject,)
