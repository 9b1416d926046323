"""Decoding a pods dump: the standard library, orjson and msgspec.

Generates one pods dump of ``fleet generate`` (``--nodes`` nodes x 100
pods: the size of one ``pods/pods-NNNN.json``) unless ``--file`` names one,
then decodes it, best of ``--repeat`` runs each:

* ``json + limits``: the general reader (``load_json``: duplicate keys and
  NaN refused, nesting checked) -- what every fleet dump went through;
* ``json.loads``: the standard library alone;
* ``orjson.loads`` (when installed): every value, as dicts and lists;
* ``msgspec (any)``: every value, as dicts and lists;
* ``msgspec index``: what ``fleet analyze`` does to a dump first (the raw
  items and each pod's ``kind`` and ``spec.nodeName``: the byte ranges of
  every node's pods) -- :func:`podnuma.fleet.podscan.index_pod_file`;
* ``msgspec ranges``: then the pods read back from their ranges into the
  compact pods the replay reads (typed structs, only the fields podnuma
  reads) -- :func:`podnuma.fleet.podscan.read_ranges`.

Prints MB/s and microseconds per pod (CPU time of this process, so that a
busy machine changes the figures less), and the ratio to ``json + limits``.
A benchmark: it asserts nothing about time.

    python bench/bench_decode.py [--nodes 100] [--file PODS.json] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--file", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import msgspec

    from podnuma.fleet.podscan import index_pod_file, read_ranges
    from podnuma.inputs.documents import load_json
    from podnuma.inputs.limits import FLEET_LIMITS

    tmp = tempfile.TemporaryDirectory(prefix="bench-decode-")
    path = args.file
    if path is None:
        from podnuma.fleet.generate import generate_fleet

        d = Path(tmp.name) / "fleet"
        generate_fleet(d, nodes=args.nodes, pods_per_node=100, seed=1)
        path = sorted((d / "pods").glob("*.json"))[0]
    data = path.read_bytes()
    text = data.decode()
    pods = len(json.loads(data)["items"])
    mb = len(data) / 1e6
    print(f"{path.name}: {mb:.1f} MB, {pods} pods")
    index = index_pod_file(path)
    assert index is not None
    ranges = [r for rs in index.ranges.values() for r in rs]

    cases: list[tuple[str, Callable[[], Any]]] = [
        ("json + limits", lambda: load_json(text, name="x", limits=FLEET_LIMITS)),
        ("json.loads", lambda: json.loads(data)),
    ]
    try:
        import orjson  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        print("orjson: not installed (pip install orjson to compare)")
    else:
        cases.append(("orjson.loads", lambda: orjson.loads(data)))
    cases += [
        ("msgspec (any)", lambda: msgspec.json.decode(data)),
        ("msgspec index", lambda: index_pod_file(path)),
        ("msgspec ranges", lambda: list(read_ranges(ranges))),
    ]
    base: float | None = None
    for name, fn in cases:
        t = _best(fn, args.repeat)
        base = base or t
        print(f"{name:16} {mb / t:8.0f} MB/s {t / pods * 1e6:8.2f} us/pod  {base / t:6.1f}x")


if __name__ == "__main__":
    main()
