"""podnuma's PodResources server against the kubelet's own
(``kubelet-oracle podresources``), message by message after every step:
every example scenario and seeded random scenarios (``PODNUMA_ORACLE_SEED``;
``PODNUMA_ORACLE_PODRESOURCES_COUNT``, default 100). See
tests/oracle/podresources_harness.py for what is compared and which orders
are made canonical."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.oracle import generate
from tests.oracle.harness import env_int, random_settings, write_scenario
from tests.oracle.podresources_harness import podresources_differences
from tests.oracle.test_differential import EXAMPLES, ROOT, _load

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_ORACLE_PODRESOURCES_COUNT", 100)
CHUNK = 50


def _fail(diffs: list[tuple[str, list[str]]], total: int) -> None:
    lines = [f"{name}:\n  " + "\n  ".join(d[:8]) for name, d in diffs[:10]]
    pytest.fail(f"{len(diffs)} of {total} replays answer differently from the kubelet's server:\n" + "\n".join(lines),
                pytrace=False)  # fmt: skip


def test_examples(oracle_binary: str) -> None:
    items = [(str(p.relative_to(ROOT)), _load(p), p) for p in EXAMPLES]
    stats: dict[str, int] = {}
    diffs = podresources_differences(oracle_binary, items, stats)
    print(f"podresources, examples: {stats}")
    if diffs:
        _fail(diffs, stats.get("replayed", 0))
    assert stats.get("replayed", 0) + stats.get("failed_alike", 0) == len(EXAMPLES), stats


@pytest.mark.parametrize("chunk", range((COUNT + CHUNK - 1) // CHUNK), ids=lambda c: f"seed{SEED}-chunk{c}")
def test_random(chunk: int, oracle_binary: str, tmp_path: Path) -> None:
    start = chunk * CHUNK
    n = min(CHUNK, COUNT - start)
    scenarios = generate.scenarios(SEED, n, tmp_path, start=start)
    items = [(name, doc, write_scenario(doc, tmp_path / f"{i:05d}.json")) for i, (name, doc) in enumerate(scenarios)]
    stats: dict[str, int] = {}
    diffs = podresources_differences(oracle_binary, items, stats)
    print(f"podresources, seed {SEED}, scenarios {start}..{start + n - 1}: {stats}")
    if diffs:
        _fail(diffs, stats.get("replayed", 0))
    assert stats.get("replayed", 0) >= n // 2, stats


def test_list_every_known_pod_with_the_gate_off(oracle_binary: str, tmp_path: Path) -> None:
    """``KubeletPodResourcesListUseActivePods: false`` (deprecated, on by
    default): ``List`` answers with every pod the pod manager knows,
    rejected pods included."""
    items = []
    for p in EXAMPLES:
        doc = dict(_load(p))
        kc = dict(doc.get("kubeletConfig") or {})
        kc["featureGates"] = {**(kc.get("featureGates") or {}), "KubeletPodResourcesListUseActivePods": False}
        doc["kubeletConfig"] = kc
        items.append((f"{p.relative_to(ROOT)} [list all]", doc, write_scenario(doc, tmp_path / f"{p.stem}.yaml")))
    stats: dict[str, int] = {}
    diffs = podresources_differences(oracle_binary, items, stats)
    print(f"podresources, examples, List of every known pod: {stats}")
    if diffs:
        _fail(diffs, stats.get("replayed", 0))
    assert stats.get("replayed", 0) + stats.get("failed_alike", 0) == len(EXAMPLES), stats


RAW_REQUESTS = [
    b"\x0a\xff",  # a length past the end
    b"\x0a",  # a field's tag, no length
    b"\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80",  # a varint too long
    b"\x0f",  # wire type 7
    b"\x00",  # field number 0
    b"\x0a\x03abc\x12\x02\xff\xfe",  # a name that is not UTF-8
    b"\x0a\x03kep\x12\x0fpod-scope-mixed",  # a Get that decodes
    b"",
]


def test_raw_requests_get_the_kubelets_status_codes(oracle_binary: str) -> None:
    """Bytes that are not a request, and a few that are, sent to every
    method of both servers: the same status code (what the details say
    of a decoding error is each protobuf library's own: grpc-go's prefix is
    kept)."""
    import tempfile
    import time

    import grpc
    from podnuma.grpc.provider import NodeProvider
    from podnuma.grpc.server import serve_unix
    from podnuma.inputs.scenario import load_scenario
    from podnuma.scenario.run import start_node
    from tests.oracle.podresources_harness import _Oracle

    path = ROOT / "examples" / "pod-level" / "pod-scope-2-mixed.yaml"
    scenario = load_scenario(path)
    node = start_node(scenario)
    with tempfile.TemporaryDirectory(prefix="pr-", dir="/tmp") as d:
        mine_sock, their_sock = Path(d) / "podnuma.sock", Path(d) / "kubelet.sock"
        server = serve_unix(mine_sock, NodeProvider(lambda: node, lambda: list(scenario.running_pods)))
        oracle = _Oracle(oracle_binary, path, their_sock)
        try:
            got: dict[str, list[tuple[str, str]]] = {"podnuma": [], "kubelet": []}
            for who, sock in (("podnuma", mine_sock), ("kubelet", their_sock)):
                with grpc.insecure_channel(f"unix:{sock}") as ch:
                    for method in ("/v1.PodResourcesLister/List", "/v1.PodResourcesLister/Get",
                                   "/v1.PodResourcesLister/GetAllocatableResources",
                                   "/v1alpha1.PodResourcesLister/List"):
                        call = ch.unary_unary(method, request_serializer=lambda x: x,
                                              response_deserializer=lambda x: x)
                        for raw in RAW_REQUESTS:
                            time.sleep(0.05)  # (the kubelet's rate limit, 100 a second: never met)
                            try:
                                call(raw, timeout=10)
                                got[who].append((method, "OK"))
                            except grpc.RpcError as e:
                                details = e.details() or ""
                                if e.code() == grpc.StatusCode.INTERNAL:
                                    assert details.startswith("grpc: error unmarshalling request: "), details
                                got[who].append((method, e.code().name))
                    # Undecodable requests spend no token (grpc-go decodes a
                    # request before the rate limit's interceptor is called):
                    # 15 at once all INTERNAL, past the burst of 10.
                    time.sleep(0.2)
                    call = ch.unary_unary("/v1.PodResourcesLister/Get", request_serializer=lambda x: x,
                                          response_deserializer=lambda x: x)
                    for _ in range(15):
                        try:
                            call(b"\x0a\xff", timeout=10)
                            got[who].append(("burst", "OK"))
                        except grpc.RpcError as e:
                            got[who].append(("burst", e.code().name))
                    time.sleep(0.2)
            assert got["podnuma"] == got["kubelet"]
            assert ("/v1.PodResourcesLister/Get", "INTERNAL") in got["kubelet"]
            assert got["kubelet"][-15:] == [("burst", "INTERNAL")] * 15
        finally:
            oracle.close()
            server.stop(None)
