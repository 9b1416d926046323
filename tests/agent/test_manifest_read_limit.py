"""The 10 MiB limit on a static-pod manifest, as the kubelet's file source
applies it.

``extractFromFile`` (pkg/kubelet/config/file.go) reads a manifest with
``utilio.ReadAtMost(file, maxConfigLength)`` (k8s.io/utils io/read.go,
10 MiB): reading stops at the limit and, once the limit is reached, the
read is an error (``the read limit is reached``), so a file of exactly
10485760 bytes is refused as a larger one is, and one byte less is read.
Compared with the kubelet's own code through the oracle's ``staticpod``
door.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from podnuma.agent.manifests import MAX_MANIFEST_BYTES, read_manifest
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.errors import InputError
from tests.oracle.conftest import oracle_binary  # noqa: F401  (the fixture)

HEAD = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}]}\n#"


def _oracle(binary: str, path: Path) -> dict[str, object]:
    proc = subprocess.run([binary, "staticpod", "--node-name", "n", str(path)],
                          capture_output=True, text=True, timeout=120, check=True)
    got: dict[str, object] = json.loads(proc.stdout)
    return got


@pytest.mark.parametrize("size", [MAX_MANIFEST_BYTES, MAX_MANIFEST_BYTES + 1, MAX_MANIFEST_BYTES + 4096])
def test_a_manifest_of_10_mib_or_more_is_refused(oracle_binary: str, tmp_path: Path,  # noqa: F811
                                                 size: int) -> None:
    """A valid pod padded (a YAML comment) to exactly 10 MiB, or past it:
    refused in the kubelet's words, the file named."""
    path = tmp_path / "big.yaml"
    path.write_text(HEAD.ljust(size, "x"))
    assert path.stat().st_size == size
    assert _oracle(oracle_binary, path)["error"] == "the read limit is reached"
    with pytest.raises(InputError) as got:
        read_manifest(path, node_name="n", gates=load_kubelet_config({}).feature_gates)
    assert str(got.value) == f"{path}: the read limit is reached"


def test_a_manifest_one_byte_under_10_mib_is_read(oracle_binary: str, tmp_path: Path) -> None:  # noqa: F811
    """One byte less than the limit: read, and the pod taken by both."""
    path = tmp_path / "under.yaml"
    path.write_text(HEAD.ljust(MAX_MANIFEST_BYTES - 1, "x"))
    theirs = _oracle(oracle_binary, path)
    assert "error" not in theirs, theirs
    assert theirs["name"] == "a-n"
    got = read_manifest(path, node_name="n", gates=load_kubelet_config({}).feature_gates)
    assert got.pod.name == "a-n"
