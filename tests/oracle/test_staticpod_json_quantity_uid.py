"""A static pod's quantity written as a JSON number, against the kubelet's
UID (``kubelet-oracle staticpod``, k8s.io/kubernetes v1.37.2: the hash of
the decoded pod, whose ``resource.Quantity`` came from
``Quantity.UnmarshalJSON``: the number's text, quotes or not, parsed by
``ParseQuantity``).

Each number is written bare and as a string at one path; podnuma's UIDs
must fall into the same classes as the kubelet's: ``1e400`` (past the
float range: a decimal amount, ``10e399``) the same as ``"1e400"`` and not
as ``2e400``; ``1e3`` as ``"1e3"``; ``1.5`` as ``"1.5"``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.oracle.test_staticpod_uid import _oracle_uid, _our_uid

NUMBERS = ["1e400", "2e400", "10e399", "1e3", "1000", "1E3", "1e-400", "1.0000000000000000001", "1.5",
           "0.1e-9", "1e30", "123456789012345678901234567890", "1e18", "1e19", "2.0", "2", "2.50",
           "-0", "0", "-0.0", "-0e3"]


def _manifest(resource: str, value: str) -> str:
    limits = json.dumps({resource: "@N@"}).replace('"@N@"', value)
    return ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": '
            '[{"name": "c", "image": "x", "resources": {"limits": ' + limits + "}}]}}")


@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_uid_classes_of_json_numbers(oracle_binary: str, tmp_path: Path, resource: str) -> None:
    path = tmp_path / "web.json"
    rows = []
    for number in NUMBERS:
        for value in (number, json.dumps(number)):
            path.write_text(_manifest(resource, value))
            rows.append((value, _oracle_uid(oracle_binary, path, {}), _our_uid(path, {})))
    wrong = [f"{a} and {b}: the kubelet's UIDs {'agree' if ka == kb else 'differ'}"
             for i, (a, ka, oa) in enumerate(rows) for b, kb, ob in rows[i + 1:] if (ka == kb) != (oa == ob)]
    assert wrong == []
    kubelet = {value: uid for value, uid, _ in rows}
    # (the cases the module's docstring names, as the kubelet has them)
    assert kubelet["1e400"] == kubelet['"1e400"'] != kubelet["2e400"]
    assert kubelet["1e3"] == kubelet['"1e3"'] and kubelet["1.5"] == kubelet['"1.5"']


def test_negative_zero_is_its_text(oracle_binary: str, tmp_path: Path) -> None:
    """The JSON integer ``-0`` in a quantity is the quantity ``"-0"`` parses
    to (not ``0``'s: the kubelet's UIDs differ), as the string is."""
    path = tmp_path / "web.json"
    kubelet, ours = {}, {}
    for value in ("-0", '"-0"', "0"):
        path.write_text(_manifest("memory", value))
        kubelet[value], ours[value] = _oracle_uid(oracle_binary, path, {}), _our_uid(path, {})
    assert kubelet["-0"] == kubelet['"-0"'] != kubelet["0"]
    assert ours["-0"] == ours['"-0"'] != ours["0"]
