"""The one control plane (etcd + kube-apiserver) the ``apiserver`` tests share per session."""

from __future__ import annotations

import pytest
from controlplane import ControlPlane, binaries, install_crds, wait_for_build
from repository import E2E_REQUIRED as REQUIRED


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory):
    """A running control plane with eksmllint's CRDs installed. Waits for a build in progress;
    skips with the reason when the binaries are absent, except in CI, where that fails."""
    wait_for_build()
    found = binaries()
    if isinstance(found, str):
        if REQUIRED:
            pytest.fail(f"the end-to-end control plane is required here, but {found}", pytrace=False)
        pytest.skip(found)
    apiserver, etcd = found
    plane = ControlPlane(tmp_path_factory.mktemp("control-plane"), apiserver, etcd)
    try:
        plane.start()
        install_crds(plane.api_client())
        yield plane
    finally:
        plane.stop()
