"""Property-based fuzzing of every parser: quantities, CPU lists, pods,
KubeletConfiguration, scenarios and checkpoints of every version.

Inputs are arbitrary text or bytes, arbitrary JSON-like values, and valid
documents with one field replaced by an arbitrary value or one byte
changed. Whatever the input, a parser returns or raises the project's
invalid-input error (``InputError``; for a checkpoint or a configuration
the kubelet would refuse, ``KubeletStartupError``); never anything else.
Bounded: a fixed number of examples per property, no deadline per example.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podnuma.api.featuregates import FeatureGates
from podnuma.api.kubeletconfig import load_kubelet_config, validate_kubelet_config
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.quantity import QuantityError, parse_quantity, quantity_from_manifest
from podnuma.cm.cpumanager.checkpoint import decode_cpu_checkpoint
from podnuma.cm.memorymanager.checkpoint import decode_memory_checkpoint
from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.discover import load_node
from podnuma.inputs.documents import parse_document
from podnuma.inputs.pods import load_pod_sources
from podnuma.inputs.scenario import load_scenario_text
from podnuma.machine.cpuset import CPUSet, CPUSetParseError, parse_go_cpuset
from tests.fuzz.hostile import dropped, paths, replaced

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DEMO = ROOT / "src" / "podnuma" / "scenario" / "demo" / "demo.yaml"
TRAINER = EXAMPLES / "whatif" / "trainer-pod.yaml"

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)

# JSON-like values, as a decoded YAML or JSON document holds them
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["1", "0", "-1", "1Gi", "500m", "1e9", "2.5", "static", "Static", "pod",
                     "0-3", "1,2", "true", "Guaranteed", "", " ", "\x00", "1e2147483648"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=10), inner, max_size=4),
    ),
    max_leaves=12,
)


def mutated(doc: Any) -> st.SearchStrategy[Any]:
    """``doc`` with one field (or the whole) replaced by an arbitrary value,
    or one mapping entry removed."""
    where = paths(doc)

    return st.one_of(
        st.builds(lambda p, v: replaced(doc, p, v), st.sampled_from(where), values),
        st.builds(lambda p: dropped(doc, p), st.sampled_from(where)),
    )


GATES = FeatureGates.defaults()


# --------------------------------------------------------------------------
# quantities and CPU lists


@FUZZ
@given(st.one_of(st.text(max_size=30), st.from_regex(r"[+-]?[0-9.]{0,8}[eEinumkKMGTP]{0,2}[-+]?[0-9]{0,12}", fullmatch=True)))
def test_quantity_text(text: str) -> None:
    try:
        q = parse_quantity(text)
    except QuantityError:
        return
    str(q)  # and it prints
    q.milli_value()


@FUZZ
@given(values)
def test_quantity_in_a_manifest(value: Any) -> None:
    with contextlib.suppress(InputError, QuantityError):
        quantity_from_manifest(value)


@FUZZ
@given(st.one_of(st.text(alphabet="0123456789,-x ", max_size=30), st.text(max_size=20)))
def test_cpu_lists(text: str) -> None:
    try:
        s = CPUSet.parse(text)
    except CPUSetParseError:
        pass
    else:  # what it prints reads back as the same set
        assert CPUSet.parse(str(s)) == s
    with contextlib.suppress(ValueError):
        parse_go_cpuset(text)


# --------------------------------------------------------------------------
# pods, kubelet configurations, nodes


POD = yaml.safe_load(TRAINER.read_text())


@FUZZ
@given(st.one_of(values, mutated(POD)))
def test_pods(doc: Any) -> None:
    with contextlib.suppress(InputError):
        parse_pod(doc, gates=GATES)


@FUZZ
@given(st.text(max_size=200))
def test_pod_files(text: str) -> None:
    with contextlib.suppress(InputError):
        load_pod_sources(text, name="f.yaml")


CONFIG = yaml.safe_load((EXAMPLES / "whatif" / "kubelet-config.yaml").read_text())


@FUZZ
@given(st.one_of(values, mutated(CONFIG)))
def test_kubelet_configurations(doc: Any) -> None:
    try:
        cfg = load_kubelet_config(doc)
        validate_kubelet_config(cfg, CPUSet.parse("0-63"))
    except (InputError, KubeletStartupError):
        pass


NODE = yaml.safe_load((EXAMPLES / "whatif" / "node.yaml").read_text())


@FUZZ
@given(st.one_of(values, mutated(NODE)))
def test_node_forms(doc: Any) -> None:
    with contextlib.suppress(InputError):
        load_node(doc, base_dir=ROOT)


# --------------------------------------------------------------------------
# scenarios


SCENARIO = yaml.safe_load(DEMO.read_text())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=True)
@given(st.one_of(mutated(SCENARIO), values.map(lambda v: {"apiVersion": "podnuma.io/v1",
                                                           "kind": "Scenario", "steps": v})))
def test_scenarios(doc: Any) -> None:
    from podnuma.scenario.run import run_scenario

    text = json.dumps(doc, default=str) if not isinstance(doc, str) else doc
    with contextlib.suppress(InputError, KubeletStartupError):
        run_scenario(load_scenario_text(text, name="s.json", base_dir=ROOT))


@FUZZ
@given(st.text(max_size=300))
def test_documents(text: str) -> None:
    for name in ("d.yaml", "d.json"):
        with contextlib.suppress(InputError):
            parse_document(text, name=name)


# --------------------------------------------------------------------------
# checkpoints (every version: cpu v2/v3/v4, memory v1/v2/v3)


CPU_BLOBS = [v["blob"] for v in json.loads(
    (ROOT / "tests" / "cm" / "cpumanager" / "cpu_checkpoint_vectors.json").read_text())["loads"]
    if isinstance(v.get("blob"), str)][:40]
MEMORY_BLOBS = [b for v in json.loads(
    (ROOT / "tests" / "cm" / "memorymanager" / "memory_checkpoint_vectors.json").read_text()).values()
    if isinstance(v, dict) for b in v.values() if isinstance(b, str) and b.startswith("{")]


def _byte_mutations(blobs: list[str]) -> st.SearchStrategy[bytes]:
    def flip(blob: str, pos: int, byte: int) -> bytes:
        data = bytearray(blob.encode("utf-8", "surrogatepass"))
        if data:
            data[pos % len(data)] = byte
        return bytes(data)

    def cut(blob: str, pos: int) -> bytes:
        data = blob.encode("utf-8", "surrogatepass")
        return data[: pos % (len(data) + 1)]

    return st.one_of(
        st.builds(flip, st.sampled_from(blobs), st.integers(0, 10_000), st.integers(0, 255)),
        st.builds(cut, st.sampled_from(blobs), st.integers(0, 10_000)),
        st.binary(max_size=200),
    )


def _loads(blob: str) -> Any:
    try:
        return json.loads(blob)
    except json.JSONDecodeError:
        return None


def _json_mutations(blobs: list[str]) -> st.SearchStrategy[bytes]:
    docs = [d for d in map(_loads, blobs) if isinstance(d, dict)]
    return st.sampled_from(docs).flatmap(mutated).map(
        lambda d: json.dumps(d, default=str).encode()
    )


@FUZZ
@given(st.one_of(_byte_mutations(CPU_BLOBS), _json_mutations(CPU_BLOBS)), st.booleans())
def test_cpu_checkpoints(blob: bytes, plrm: bool) -> None:
    with contextlib.suppress(KubeletStartupError):
        decode_cpu_checkpoint(blob, pod_level_resource_managers=plrm)


@FUZZ
@given(st.one_of(_byte_mutations(MEMORY_BLOBS), _json_mutations(MEMORY_BLOBS)), st.booleans())
def test_memory_checkpoints(blob: bytes, plrm: bool) -> None:
    with contextlib.suppress(KubeletStartupError):
        decode_memory_checkpoint(blob, pod_level_resource_managers=plrm)


def test_the_corpora_are_not_empty() -> None:
    assert len(CPU_BLOBS) >= 10 and len(MEMORY_BLOBS) >= 3
