"""podnuma's topology hint merge against the kubelet's own (``kubelet-oracle
merge``): seeded random hint sets, 1-10 NUMA nodes (beyond 8 only with
``max-allowable-numa-nodes``), 1-4 providers, every policy and both policy
options, sent to the oracle in one batch. The kubelet walks every
permutation of the hints; podnuma computes the walk's answer without
walking (docs/topology-merge.md). Both must give the same best hint and
admit decision, or the same startup error, for every case.

``PODNUMA_ORACLE_SEED`` picks the seed (default: today's, as for the
scenario suite; printed, and named in a failure), ``PODNUMA_MERGE_COUNT``
the number of cases (default 5,000). Cases whose walk would exceed
``MAX_PERMUTATIONS`` permutations are drawn again.
"""

from __future__ import annotations

import json
import random
import subprocess
from collections import Counter
from collections.abc import Sequence
from typing import Any
from unittest.mock import patch

from podnuma.api.featuregates import FeatureGates
from podnuma.cm.topologymanager import policy_fastmerge
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.new_manager import new_topology_policy
from podnuma.cm.topologymanager.policy import ProvidersHints, merge_traced
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import CPUInfo, CPUTopology, Machine, NUMANode
from tests.oracle.harness import env_int, random_settings

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_MERGE_COUNT", 5000)
MAX_PERMUTATIONS = 200_000

POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
# strconv.ParseBool's spellings, and values NewPolicyOptions refuses
BOOLS = ("true", "false", "1", "0", "t", "F", "TRUE", "False")
BAD_BOOLS = ("yes", "")
MAX_NODES = ("8", "9", "10", "12", "+9")
BAD_MAX_NODES = ("7", "0", "ten", "-1")

Request = dict[str, Any]


# --- random cases -----------------------------------------------------------


def _node_ids(rng: random.Random) -> list[int]:
    n = rng.choice((1, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 7, 8, 8, 9, 10))
    if rng.random() < 0.75:
        return list(range(n))
    return sorted(rng.sample(range(n + 4), n))  # ids with holes


def _distances(rng: random.Random, ids: list[int]) -> list[list[int]]:
    """One cadvisor row per node, indexed by NUMA id. Few distinct values
    (ties between equal averages) or many; symmetric or not."""
    width = max(ids) + 1
    values = rng.choice(((12, 32), (11, 21, 31), tuple(range(11, 41))))
    table = [[rng.choice(values) for _ in range(width)] for _ in range(width)]
    if rng.random() < 0.7:
        table = [[table[min(a, b)][max(a, b)] for b in range(width)] for a in range(width)]
    for i in range(width):
        table[i][i] = 10
    return [table[i] for i in ids]


def _options(rng: random.Random, nodes: int) -> dict[str, str]:
    opts: dict[str, str] = {}
    if rng.random() < 0.5:
        opts["prefer-closest-numa-nodes"] = rng.choice(BOOLS)
    if (nodes > 8 or rng.random() < 0.3) and rng.random() < 0.85:
        opts["max-allowable-numa-nodes"] = rng.choice(MAX_NODES)
    # at most one refused value: Go reports whichever option its map
    # iteration reaches first
    if rng.random() < 0.02:
        if rng.random() < 0.5:
            opts["prefer-closest-numa-nodes"] = rng.choice(BAD_BOOLS)
        else:
            opts["max-allowable-numa-nodes"] = rng.choice(BAD_MAX_NODES)
    return opts


def _mask(rng: random.Random, ids: list[int], universe: int) -> list[int] | None:
    roll = rng.random()
    if roll < 0.08:
        return None  # any NUMA node
    if roll < 0.10:
        return []  # an empty, non-nil mask
    if roll < 0.20:
        return sorted(rng.sample(range(universe), rng.randint(1, universe)))  # may leave the machine
    return sorted(rng.sample(ids, rng.randint(1, min(len(ids), rng.choice((1, 2, 2, 3, 8))))))


def _random_hints(rng: random.Random, ids: list[int], universe: int) -> list[dict[str, Any]]:
    return [
        {"numaNodes": _mask(rng, ids, universe), "preferred": rng.random() < 0.5}
        for _ in range(rng.choice((1, 2, 3, 4, 6, 8, 12)))
    ]


def _kubelet_like_hints(rng: random.Random, ids: list[int]) -> list[dict[str, Any]]:
    """As the CPU, memory or device manager offers them: every mask of at
    least the fitting width (up to some cap), the narrowest preferred."""
    need = rng.randint(1, len(ids))
    cap = min(len(ids), need + rng.choice((0, 1, 2, 8)))
    hints = []
    for m in range(1, 1 << len(ids)):
        bits = [ids[i] for i in range(len(ids)) if m >> i & 1]
        if need <= len(bits) <= cap and rng.random() < 0.8:
            hints.append({"numaNodes": bits, "preferred": len(bits) == need})
    return hints


def _provider(rng: random.Random, ids: list[int], universe: int) -> dict[str, Any] | None:
    roll = rng.random()
    if roll < 0.05:
        return None  # nil map: no preference
    if roll < 0.07:
        return {}
    out: dict[str, Any] = {}
    for r in range(rng.choice((1, 1, 1, 2))):
        roll = rng.random()
        if roll < 0.06:
            out[f"r{r}"] = None  # nil list: no preference
        elif roll < 0.10:
            out[f"r{r}"] = []  # empty list: no possible placement
        elif roll < 0.35:
            out[f"r{r}"] = _kubelet_like_hints(rng, ids)
        else:
            out[f"r{r}"] = _random_hints(rng, ids, universe)
    return out


def permutations(request: Request) -> int:
    """How many permutations the kubelet's walk visits (after
    ``filterProvidersHints``, before single-numa-node's filter)."""
    total = 1
    for provider in request["providersHints"]:
        for hints in (provider or {"": None}).values():
            total *= len(hints) if hints else 1
    return total


def random_case(rng: random.Random) -> Request:
    while True:
        ids = _node_ids(rng)
        universe = max(ids) + 3
        policy = rng.choice(POLICIES[1:]) if rng.random() > 0.03 else "none"
        options = _options(rng, len(ids))
        request: Request = {
            "numaNodes": ids,
            "policy": policy,
            "options": options,
            "providersHints": [_provider(rng, ids, universe) for _ in range(rng.randint(1, 4))],
        }
        # distances nearly always with prefer-closest (without them the
        # kubelet refuses to start), sometimes without it (ignored then)
        if rng.random() < (0.97 if "prefer-closest-numa-nodes" in options else 0.3):
            request["distances"] = _distances(rng, ids)
        if permutations(request) <= MAX_PERMUTATIONS:
            return request


# --- podnuma's side ----------------------------------------------------------


def _hint(raw: dict[str, Any]) -> TopologyHint:
    nodes = raw["numaNodes"]
    return TopologyHint(None if nodes is None else BitMask(nodes), raw["preferred"])


def providers_hints(request: Request) -> ProvidersHints:
    out: list[dict[str, Sequence[TopologyHint] | None] | None] = []
    for provider in request["providersHints"]:
        if provider is None:
            out.append(None)
            continue
        out.append(
            {
                resource: None if hints is None else [_hint(h) for h in hints]
                for resource, hints in provider.items()
            }
        )
    return out


def machine(request: Request) -> Machine:
    """The NUMA part of the machine the request describes (one CPU per
    node: the policy only reads the NUMA ids and distances)."""
    ids = request["numaNodes"]
    given = request.get("distances")  # (none: no node has a distance row, as no sysfs distance file)
    rows: list[Any] = list(given) if given else [None] * len(ids)
    cpus = {i: CPUInfo(numa_node=nid, socket=0, core=i, uncore_cache=0) for i, nid in enumerate(ids)}
    nodes = tuple(NUMANode(id=nid, memory=1 << 30, distances=None if row is None else tuple(row))
                  for nid, row in zip(ids, rows, strict=True))
    return Machine(topology=CPUTopology(cpus), numa_nodes=nodes)


def _result(hint: TopologyHint, admit: bool) -> dict[str, Any]:
    return {**hint.to_json(), "admit": admit}


def podnuma_merge(request: Request) -> list[dict[str, Any]]:
    """podnuma's answers: the merge as the node runs it, the same with the
    subset-sum transform forced, and the best of the explanation's
    candidates (the merged hint before single-numa-node's nil rewrite)."""
    try:
        policy, _, _ = new_topology_policy(
            request["policy"], machine(request), request["options"], FeatureGates.defaults()
        )
    except KubeletStartupError as e:
        return [{"error": str(e)}]
    hints = providers_hints(request)
    best, admit, trace = merge_traced(policy, hints)
    answers = [_result(best, admit)]
    with patch.object(policy_fastmerge, "FOLD_LIMIT", 0):
        answers.append(_result(*policy.merge(hints)))
    if trace is not None and trace.candidates and request["policy"] != "single-numa-node":
        answers.append(_result(trace.candidates[0], admit))
    return answers


# --- the comparison ---------------------------------------------------------


def run_oracle_merge(binary: str, requests: list[Request]) -> list[dict[str, Any]]:
    stdin = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests)
    proc = subprocess.run(
        [binary, "merge"], input=stdin, capture_output=True, text=True, timeout=1800, check=False
    )
    assert proc.returncode == 0, f"kubelet-oracle merge failed: {proc.stderr.strip()}"
    lines = proc.stdout.splitlines()
    assert len(lines) == len(requests), proc.stderr
    return [json.loads(line) for line in lines]


def test_merge_matches_kubelet(oracle_binary: str) -> None:
    print(f"merge differential: seed {SEED}, {COUNT} cases (PODNUMA_ORACLE_SEED / PODNUMA_MERGE_COUNT)")
    rng = random.Random(SEED)
    requests = [random_case(rng) for _ in range(COUNT)]
    expected = run_oracle_merge(oracle_binary, requests)
    mismatches = []
    for i, (request, want) in enumerate(zip(requests, expected, strict=True)):
        for got in podnuma_merge(request):
            if got != want:
                mismatches.append((i, request, want, got))
                break
    report = "\n".join(
        f"case {i}: {json.dumps(req)}\n  kubelet {want}\n  podnuma {got}"
        for i, req, want, got in mismatches[:5]
    )
    assert not mismatches, f"seed {SEED}: {len(mismatches)} of {COUNT} differ\n{report}"

    # the cases reach every kind of outcome (a generator that stopped
    # doing so would leave parts of the merge unchecked)
    kinds = Counter(_kind(r, w) for r, w in zip(requests, expected, strict=True))
    missing = set(_KINDS) - set(kinds)
    assert not missing, f"seed {SEED}: no case ended as {sorted(missing)} ({dict(kinds)})"


_KINDS = (
    "error",
    "preferred",
    "not preferred, admitted",
    "refused",
    "nil affinity",
    "prefer-closest",
    "more than 8 NUMA nodes",
)


def _kind(request: Request, result: dict[str, Any]) -> str:
    if "error" in result:
        return "error"
    if len(request["numaNodes"]) > 8:
        return "more than 8 NUMA nodes"
    if request["options"].get("prefer-closest-numa-nodes") == "true" and request["policy"] in (
        "best-effort",
        "restricted",
    ) and result["preferred"]:
        return "prefer-closest"
    if result["numaNodes"] is None:
        return "nil affinity"
    if not result["admit"]:
        return "refused"
    return "preferred" if result["preferred"] else "not preferred, admitted"



#: ``max-allowable-numa-nodes`` values whose ``strconv.Atoi`` error is the
#: point: Go reads the digits left to right and says the first thing that
#: goes wrong, so a number past 2^64-1 followed by a bad character is out
#: of range, not bad syntax; under 19 bytes its fast path, at 19 and more
#: ``ParseInt``; a sign once, no underscores, no spaces
ATOI_VALUES = (
    "8", "+8", "08", "", "+", "-", "+-8", "8 ", " 8", "1_0", "0x10", "٨",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "18446744073709551615", "18446744073709551616", "99999999999999999999x", "-99999999999999999999x",
    "+99999999999999999999_", "1844674407370955161x", "18446744073709551616" + "9" * 30, "12345678901234567x",
    "123456789012345678x", "1234567890123456789x",
    # (any number of leading zeros: more digits than Python's int() reads)
    "0" * 4400 + "8", "-" + "0" * 5000 + "1", "0" * 4400 + "18446744073709551616",
)


def test_max_allowable_numa_nodes_is_read_as_go_reads_an_int(oracle_binary: str) -> None:
    requests = [
        {"policy": "best-effort", "numaNodes": [0, 1], "options": {"max-allowable-numa-nodes": v},
         "providersHints": [{"cpu": [{"numaNodes": [0], "preferred": True}]}]}
        for v in ATOI_VALUES
    ]
    expected = run_oracle_merge(oracle_binary, requests)
    for request, want in zip(requests, expected, strict=True):
        assert podnuma_merge(request)[0] == want, request["options"]
    said = " ".join(str(w.get("error")) for w in expected)
    # (each of Go's answers is among them)
    assert "value out of range" in said and "invalid syntax" in said
    assert sum("error" not in w for w in expected) >= 2
