"""``podnuma topology``: every owner's key is unique and reads one way only
(no digit to run into the CPU id before it), in the text, SVG, PNG and JSON
forms, however many owners there are; the text picture keeps to its width."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

from podnuma.inputs.scenario import load_scenario_text
from podnuma.render.picture import (
    Ownership,
    build_picture,
    ownership_after,
    ownership_document,
    render_png,
    render_svg,
    render_text,
)
from podnuma.scenario.run import RunResult, run_scenario

from ..scenario.helpers import dump

SVG_NS = "{http://www.w3.org/2000/svg}"
#: a CPU cell of the text picture: the id, then the key (padded)
_CELL = re.compile(r"(\d+)(\D\S*)")


def _many_pods(pods: int, *, name: str = "p{i}", container: str = "c") -> dict[str, Any]:
    """A 128-CPU node (CPU 0 reserved) and ``pods`` Guaranteed pods of one
    exclusive CPU each: one owner per admitted pod."""
    return {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": {
            "name": "big-node",
            "synthetic": {
                "sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 32,
                "threadsPerCore": 2, "memoryPerNumaNode": "512Gi",
            },
        },
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "maxPods": 1000},
        "steps": [
            {"addPod": {
                "metadata": {"name": name.format(i=i), "namespace": "ns"},
                "spec": {"containers": [
                    {"name": container, "resources": {"limits": {"cpu": "1", "memory": "100Mi"}}},
                ]},
            }}
            for i in range(pods)
        ],
    }


def _run(doc: dict[str, Any]) -> RunResult:
    return run_scenario(load_scenario_text(dump(doc), name="t.yaml", base_dir=Path.cwd()))


@cache
def _crowded() -> RunResult:
    # 400 pods for 127 free CPUs: 127 exclusive owners, then rejections
    return _run(_many_pods(400))


def _check_keys(own: Ownership) -> None:
    keys = [o.key for o in own.owners]
    assert len(set(keys)) == len(keys), [k for k in keys if keys.count(k) > 1]
    for k in keys:
        assert k and not any(ch.isdigit() or ch.isspace() for ch in k), k
        assert k != "?"


def test_owner_keys_are_unique_letters_however_many() -> None:
    from podnuma.render.picture.ownership import owner_key

    keys = [owner_key(i) for i in range(20_000)]
    assert len(set(keys)) == len(keys)
    assert all(k.isascii() and k.isalpha() for k in keys)
    assert not any(ch in k for k in keys for ch in "lIO")  # (they read as 1 and 0)
    assert keys[:3] == ["a", "b", "c"]
    assert [len(k) for k in (keys[48], keys[49], keys[49 + 49 * 49])] == [1, 2, 3]


def test_many_owners_have_unique_keys() -> None:
    result = _crowded()
    own = ownership_after(result)
    assert len(own.owners) > 120
    _check_keys(own)
    doc = ownership_document(result.machine, own)
    owners: list[dict[str, Any]] = doc["owners"]  # type: ignore[assignment]
    keys = [o["key"] for o in owners]
    assert len(set(keys)) == len(keys)


def test_text_cells_read_back_as_cpu_and_owner() -> None:
    result = _crowded()
    own = ownership_after(result)
    text = render_text(result.machine, own)
    picture, legend = text.split("\nCPU owners,")
    cells: dict[int, str] = {}
    for inner in re.findall(r"\[([^\]]*)\]", picture):
        for m in _CELL.finditer(inner):
            cells[int(m.group(1))] = m.group(2)
    assert sorted(cells) == list(range(128))
    for cpu, key in cells.items():
        assert key == own.owner_of(cpu).key, (cpu, key)
    # the legend names each owner once, by its key
    by_key: dict[str, str] = {}
    for line in legend.splitlines()[1:]:
        row = re.match(r"   (\S+) +(\S.*?)  +CPU", line)
        assert row, line
        by_key[row.group(1)] = row.group(2).rstrip()
    assert by_key == {o.key: o.name for o in own.owners}


def test_svg_and_png_show_every_key_in_full() -> None:
    result = _crowded()
    own = ownership_after(result)
    pic = build_picture(result.machine, own)
    longest = max(len(o.key) for o in own.owners)
    assert longest >= 2
    # the swatch holds the key (11 px text, ~0.62 em a character)
    assert pic.swatch_w >= longest * 11 * 0.62
    pus = [b for b in pic.boxes if b.kind == "pu"]
    assert {b.cpu: b.key for b in pus} == {c: own.owner_of(c).key for c in range(128)}
    root = ET.fromstring(render_svg(result.machine, own))
    swatch_keys = []
    for g in root.iter(f"{SVG_NS}g"):
        texts = [t.text for t in g.iter(f"{SVG_NS}text")]
        swatch_keys.append(texts[0])
    assert swatch_keys == [o.key for o in own.owners]
    assert render_png(result.machine, own, scale=1)[:8] == b"\x89PNG\r\n\x1a\n"


def _long_names() -> RunResult:
    name = "pod-with-a-rather-long-descriptive-name-number-{i:03d}-for-width-testing"
    return _run(_many_pods(3, name=name, container="c-very-long-container-name-to-push-the-legend"))


def test_text_keeps_to_its_width_and_wraps_at_words() -> None:
    result = _long_names()
    own = ownership_after(result, 0)
    for width in (60, 80, 100):
        text = render_text(result.machine, own, width=width)
        assert max(len(line) for line in text.splitlines()) <= width, width
        # nothing lost: the legend's words all there, in order
        legend = text.split("\nCPU owners,")[1]
        flat = re.sub(r"\s+", " ", legend)
        for o in own.owners:
            words = o.name.split()
            pattern = r"\s*".join(re.escape(w) for w in words)
            assert re.search(pattern, flat.replace("- ", "-").replace("/ ", "/")), (width, o.name)
    # a wide terminal takes more cores to a line
    narrow = render_text(result.machine, own, width=100)
    wide = render_text(result.machine, own, width=200)
    assert len(wide.splitlines()) < len(narrow.splitlines())
    assert max(len(line) for line in wide.splitlines()) <= 200


def test_coloured_text_wraps_the_same() -> None:
    result = _long_names()
    own = ownership_after(result, 0)
    plain = render_text(result.machine, own, width=60)
    coloured = render_text(result.machine, own, width=60, color=True)
    assert "\x1b[" in coloured
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert stripped == plain
    assert max(len(line) for line in stripped.splitlines()) <= 60
