"""A static pod's service account name, checked as the kubelet checks it.

``tryDecodeSinglePod`` (pkg/kubelet/config/common.go) runs
``ValidatePodCreate`` before ``HasAPIObjectReference``: a non-empty
``serviceAccountName`` must be a DNS subdomain
(``ValidatePodSpec``: ``spec.serviceAccountName: Invalid value: ...``),
and only a valid one reaches ``static pods may not reference
serviceaccounts``. The v1 defaults take the deprecated ``serviceAccount``
as the name when ``serviceAccountName`` is empty (and the latter wins when
both are set), so the error names ``spec.serviceAccountName`` whichever
field gave it. Compared with the kubelet's own code through the oracle;
the whole message (podnuma adds the line), so the error's place among the
others counts too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from podnuma.agent.manifests import read_manifest
from podnuma.errors import InputError
from tests.oracle.conftest import oracle_binary  # noqa: F401  (the fixture)
from tests.oracle.test_staticpod_differential import GATES, NODE, _oracle

LONG = "a" * 254

#: the spec's lines (before ``containers``) and whether the kubelet's
#: error is the validation's (else the reference check's)
CASES: dict[str, tuple[str, bool]] = {
    "name-upper": ("serviceAccountName: BAD", True),
    "deprecated-upper": ("serviceAccount: BAD", True),
    "deprecated-under-empty-name": ("serviceAccountName: ''\n  serviceAccount: a_b", True),
    "name-wins": ("serviceAccountName: good\n  serviceAccount: BAD", False),
    "name-wins-when-bad": ("serviceAccountName: Bad.\n  serviceAccount: good", True),
    "too-long": (f"serviceAccountName: {LONG}", True),
    "valid": ("serviceAccountName: default", False),
    "valid-deprecated": ("serviceAccount: builder.ci", False),
    "among-others": ("restartPolicy: Sometimes\n  serviceAccountName: x..y\n  activeDeadlineSeconds: 0", True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_service_account_name_as_the_kubelet_checks_it(oracle_binary: str, tmp_path: Path,  # noqa: F811
                                                       case: str) -> None:
    lines, invalid = CASES[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web}}\nspec:\n  {lines}\n"
                    "  containers: [{name: c, image: x}]\n")
    theirs = _oracle(oracle_binary, [path])[0]["error"]
    if invalid:
        assert theirs.startswith("invalid pod: [") and "spec.serviceAccountName: Invalid value" in theirs
    else:
        assert theirs == "static pods may not reference serviceaccounts"
    with pytest.raises(InputError) as got:
        read_manifest(path, node_name=NODE, gates=GATES)
    # (podnuma adds where in the file, when it knows)
    assert re.fullmatch(re.escape(f"{path}: {theirs}") + r"( \(line \d+, column \d+\))?", str(got.value)), got.value
