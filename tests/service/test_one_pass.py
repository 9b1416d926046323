"""``simulate FILE.json -o json|yaml`` reads the file in one pass, a chunk at
a time: the same output, the same refusals (wording, field path, line and
column) and the same notes as the whole-document read, on many scenarios:
every example, long runs with rejected steps, bad steps, files refused as a
whole late in the text, files not laid out for one pass; with chunks of
the default size and of a few bytes (every boundary inside a step)."""

from __future__ import annotations

import io
import json
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FunctionType
from typing import Any

import pytest
import yaml

from podnuma.errors import PodnumaError
from podnuma.inputs import scenario_stream
from podnuma.inputs.limits import ReadLimits
from podnuma.inputs.scenario_stream import JSONStepReader, ReadWhole, ScenarioFile
from podnuma.inputs.text import TextInput
from podnuma.render.serialize import write_run_stream
from podnuma.scenario.document import ordered_checkpoints
from podnuma.service import scenario as service
from podnuma.service.messages import error_message

ROOT = Path(__file__).resolve().parents[2]
NODE = {"synthetic": {"sockets": 2, "numaNodesPerSocket": 2, "coresPerNumaNode": 4,
                      "threadsPerCore": 2, "memoryPerNumaNode": "16Gi"}}
CONFIG = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,16"}


def _play(src: TextInput | ScenarioFile, fmt: str, detail: bool) -> tuple[str, list[str]]:
    """The output text (or ``error: ...``) and the notes, as the command
    gives them (a file not laid out for one pass is read whole)."""
    notes: list[str] = []
    out = io.StringIO()

    def write(src: TextInput | ScenarioFile) -> None:
        run = service.stream(src, note=notes.append, pod_resources=detail)
        write_run_stream(
            run.node, run.results(),
            lambda: (ordered_checkpoints(run.checkpoints()), service.config_record(run.scenario)),
            out, fmt, detail=detail,
        )

    try:
        try:
            write(src)
        except ReadWhole as again:
            out.seek(0)
            out.truncate()
            notes.clear()
            write(again.text)
    except PodnumaError as e:
        return f"error: {error_message(e)}", notes
    return out.getvalue(), notes


def _whole(path: Path, fmt: str = "json", detail: bool = False) -> tuple[str, list[str]]:
    try:
        src = TextInput.read(path, what="scenario")
    except PodnumaError as e:
        return f"error: {error_message(e)}", []
    return _play(src, fmt, detail)


def _one_pass(path: Path, fmt: str = "json", detail: bool = False) -> tuple[str, list[str]]:
    src = ScenarioFile(path)
    try:
        return _play(src, fmt, detail)
    finally:
        src.close()


def _pod(i: int, cpus: str = "1", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p-{i}", "namespace": "ns", "uid": f"u-{i}", **meta},
            "spec": {"containers": [
                {"name": "app", "resources": {"limits": {"cpu": cpus, "memory": "1Gi"}}}]}}


def _long(n: int, seed: int) -> list[dict[str, Any]]:
    """Adds of a few templates (some too large: rejected) and removals of
    running pods."""
    rng = random.Random(seed)
    steps: list[dict[str, Any]] = []
    running: list[tuple[str, int]] = []
    free = 28
    for i in range(n):
        cpus = rng.choice(["1", "2", "4", "500m", "64"])
        need = {"500m": 0, "64": 0}.get(cpus, int(cpus) if cpus.isdigit() else 0)
        if running and (rng.random() < 0.3 or free < need or len(running) > 12):
            uid, got = running.pop(rng.randrange(len(running)))
            steps.append({"removePod": uid})
            free += got
            continue
        labels = {"app": rng.choice(["a", "b"]), "i": str(i)} if rng.random() < 0.5 else None
        steps.append({"addPod": _pod(i, cpus, **({"labels": labels} if labels else {}))})
        if cpus != "64":
            running.append((f"u-{i}", need))
            free -= need
    return steps


def _scenario(steps: list[Any], **more: Any) -> dict[str, Any]:
    return {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE,
            "kubeletConfig": dict(CONFIG), **more, "steps": steps}


def _cases() -> dict[str, str]:
    cases: dict[str, str] = {}
    long = _long(300, 1)
    cases["long"] = json.dumps(_scenario(long))
    cases["long-indented"] = json.dumps(_scenario(long), indent=2, ensure_ascii=False)
    cases["memory-static"] = json.dumps(_scenario(_long(120, 2), kubeletConfig={
        **CONFIG, "memoryManagerPolicy": "Static", "topologyManagerPolicy": "restricted",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}))
    cases["api-server-gates"] = json.dumps(_scenario(
        _long(40, 3), apiServer={"featureGates": {"PodLevelResources": True}}))
    cases["empty-steps"] = json.dumps(_scenario([]))
    # identity fields refused on a pod whose template was parsed before
    for tag, meta in {
        "bad-name": {"name": "Bad_Name"}, "empty-name": {"name": ""},
        "name-not-string": {"name": 7}, "uid-not-string": {"uid": 5},
        "label-not-string": {"labels": {"a": 1}}, "labels-not-map": {"labels": [1]},
        "no-uid": {"uid": None}, "dots": {"name": "a..b"},
    }.items():
        bad = _pod(90)
        bad["metadata"].update(meta)
        cases[tag] = json.dumps(_scenario(long[:60] + [{"addPod": bad}] + long[60:80]))
    # bad steps and run errors late in the file
    bad_qty = _pod(91, "lots")
    cases["bad-quantity"] = json.dumps(_scenario(long[:200] + [{"addPod": bad_qty}]), indent=1)
    unknown = _pod(92)
    unknown["spec"]["containers"][0]["resoures"] = {}
    cases["unknown-field"] = json.dumps(_scenario(long[:150] + [{"addPod": unknown}] + long[150:]))
    cases["remove-unknown"] = json.dumps(_scenario(long[:250] + [{"removePod": "nope"}]), indent=2)
    cases["remove-twice"] = json.dumps(_scenario(
        [{"addPod": _pod(1)}, {"removePod": "u-1"}, {"removePod": "u-1"}]))
    cases["remove-rejected"] = json.dumps(_scenario(
        [{"addPod": _pod(1, "64")}, {"removePod": "ns/p-1"}]))
    cases["step-not-mapping"] = json.dumps(_scenario(long[:40] + [12345] + long[40:]))
    cases["two-ops"] = json.dumps(_scenario(long[:40] + [{"addPod": _pod(93), "reconcile": {}}]))
    cases["escapes"] = json.dumps(_scenario(
        [{"addPod": _pod(i, "1", annotations={"k": "é\u2603:\"x\"", "q": "a\\b"})} for i in range(30)]
    ), ensure_ascii=True)
    cases["colons-in-strings"] = json.dumps(_scenario(
        [{"addPod": _pod(i, "1", annotations={"url": "http://x:80", "k:v": "a"})} for i in range(30)]
    ))
    good_text = json.dumps(_scenario(long[:30]))
    cut = good_text.rindex('{"addPod"')
    cases["duplicate-key-and-colon"] = (
        good_text[:cut] + '{"addPod": {"kind": "Pod", "kind": "P:d", ' + good_text[cut + 12:]
    )
    cases["unicode"] = json.dumps(_scenario(
        [{"addPod": _pod(i, "1", annotations={"k": "é\u2603\U0001f600" * (i % 5)})} for i in range(30)]
    ), ensure_ascii=False)
    # the usual separator of two steps (``}, {``) inside a step: between
    # two containers, in a string; a number that only the standard
    # library's decoder takes
    two: list[Any] = []
    for i in range(40):
        pod = _pod(i, "1", annotations={"note": "a }, { b", "}, {": "x"})
        pod["spec"]["containers"].append(
            {"name": "side", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})
        two += [{"addPod": pod}, {"removePod": f"u-{i}"}]
    cases["separator-inside-steps"] = json.dumps(_scenario(two))
    huge = json.dumps(_scenario(long[:30] + [{"addPod": _pod(95, "HUGE")}] + long[30:40]))
    cases["huge-number"] = huge.replace('"HUGE"', "1e400")
    # refused as a whole, the problem late in the text (after good steps)
    good = json.dumps(_scenario(long))
    cut = good.rindex('{"addPod"')
    cases["malformed-late"] = good[:cut] + '{"addPod": {]' + good[cut + 12:]
    cases["duplicate-key-late"] = good[:cut] + '{"addPod": {"kind": "Pod", "kind": "Pod", ' + good[cut + 12:]
    cases["nan-late"] = good[:cut] + '{"addPod": {"kind": NaN, ' + good[cut + 12:]
    # a word no check of the step reads (a container's image): the whole
    # read refuses it, so must the steps' own decoders
    imaged = [dict(s) for s in long]
    for word, at in (("NaN", 200), ("Infinity", 250), ("-Infinity", 100)):
        pod = _pod(96, "1")
        pod["spec"]["containers"][0]["image"] = "WORD"
        text = json.dumps(_scenario(imaged[:at] + [{"addPod": pod}] + imaged[at:]))
        cases[f"{word.lower()}-in-image"] = text.replace('"WORD"', word)
    short = json.dumps(_scenario([{"addPod": pod}, {"addPod": _pod(97)}]))
    cases["nan-in-image-short"] = short.replace('"WORD"', "NaN")
    cases["nan-in-head"] = json.dumps(_scenario(long[:20], description="WORD")).replace('"WORD"', "NaN")
    cases["deep-late"] = good[:cut] + '{"addPod": {"x": ' + "[" * 120 + "]" * 120 + ", " + good[cut + 12:]
    cases["trailing-data"] = good + " x"
    cases["unterminated"] = good[:-2]
    cases["trailing-comma"] = good[:-2] + ",]}"
    cases["bad-step-and-malformed"] = json.dumps(
        _scenario(long[:20] + [{"addPod": bad_qty}] + long[20:]))[:-3]
    # not laid out for one pass
    tail_first = {"steps": long[:50], **{k: v for k, v in _scenario([]).items() if k != "steps"}}
    cases["steps-first"] = json.dumps(tail_first)
    cases["config-after-steps"] = json.dumps(
        {**{k: v for k, v in _scenario(long[:50]).items() if k != "kubeletConfig"},
         "kubeletConfig": {**CONFIG, "cpuManagerPolicy": "none"}})
    cases["steps-not-list"] = json.dumps(_scenario({"addPod": _pod(1)}))  # type: ignore[arg-type]
    cases["steps-twice"] = good[:-1] + ', "steps": []}'
    cases["not-an-object"] = "[1, 2]"
    cases["empty"] = ""
    cases["no-steps"] = json.dumps({k: v for k, v in _scenario([]).items() if k != "steps"})
    # the head refused
    cases["unknown-top"] = json.dumps({"nodes": 1, **_scenario(long[:10])}, indent=2)
    cases["bad-config"] = json.dumps(_scenario(long[:10], kubeletConfig={"cpuManagerPolicy": "nope"}))
    cases["no-start"] = json.dumps(_scenario(long[:10], kubeletConfig={
        "cpuManagerPolicy": "static", "reservedSystemCPUs": "0-200"}), indent=2)
    noted = {**CONFIG, "someFieldV137DoesNotKnow": 1}
    cases["notes"] = json.dumps(_scenario(long[:30], kubeletConfig=noted))
    cases["notes-bad-step"] = json.dumps(_scenario(long[:30] + [{"addPod": bad_qty}], kubeletConfig=noted))
    cases["notes-malformed"] = json.dumps(_scenario(long[:30], kubeletConfig=noted))[:-5]
    return cases


CASES = _cases()

#: the step decoders: the standard library's (a file below MSGSPEC_FROM
#: bytes, as every case here) and msgspec's (the threshold lowered to 0)
DECODERS = {"stdlib": scenario_stream.MSGSPEC_FROM, "msgspec": 0}


@pytest.mark.parametrize("decoder", sorted(DECODERS))
@pytest.mark.parametrize("chunk", [1 << 20, 7, 61])
@pytest.mark.parametrize("name", sorted(CASES))
def test_one_pass_is_the_whole_read(
    name: str, chunk: int, decoder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scenario_stream, "MSGSPEC_FROM", DECODERS[decoder])
    monkeypatch.setattr(scenario_stream, "_CHUNK", chunk)
    monkeypatch.setattr(scenario_stream, "_SPOOL", 100)
    path = tmp_path / f"{name}.json"
    path.write_text(CASES[name], encoding="utf-8")
    want = _whole(path)
    assert _one_pass(path) == want
    if name in ("long", "memory-static", "api-server-gates", "remove-rejected"):
        assert _one_pass(path, "yaml", True) == _whole(path, "yaml", True)


@pytest.mark.parametrize("decoder", sorted(DECODERS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_one_pass_counting_pairs_on_the_value(
    name: str, decoder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled build's check of a step's pairs (on the value, not on
    the text written back) gives the same verdicts and output."""
    monkeypatch.setattr(scenario_stream, "MSGSPEC_FROM", DECODERS[decoder])
    monkeypatch.setattr(scenario_stream, "_COMPILED", True)
    path = tmp_path / f"{name}.json"
    path.write_text(CASES[name], encoding="utf-8")
    assert _one_pass(path) == _whole(path)


def test_pairs_counted_at_every_depth() -> None:
    assert scenario_stream._shape({"a": [{"b": 1, "c": {"d": []}}, 2], "e": "x:y"})[0] == 5
    assert scenario_stream._shape([[{}], {"a": None}])[0] == 1


def test_shape_is_the_pairs_values_and_depth() -> None:
    """``_shape``: the pairs at every depth, the whole read's count of values, and
    the depth of the deepest value, on set values and on random trees."""
    from podnuma.inputs.documents import _count_values

    assert scenario_stream._shape({"a": [{"b": 1, "c": {"d": []}}, 2], "e": "x:y"}) == (5, 8, 5)
    assert scenario_stream._shape([[{}], {"a": None}]) == (1, 5, 3)
    assert scenario_stream._shape("x") == (0, 1, 0)
    assert scenario_stream._shape({}) == (0, 1, 1)
    rng = random.Random(5)

    def tree(depth: int) -> Any:
        kind = rng.random()
        if depth > 6 or kind < 0.4:
            return rng.choice([1, "a", None, True, 2.5, "k:v"])
        if kind < 0.7:
            return [tree(depth + 1) for _ in range(rng.randrange(4))]
        return {f"k{i}": tree(depth + 1) for i in range(rng.randrange(4))}

    def pairs_of(value: Any) -> int:
        if isinstance(value, dict):
            return len(value) + sum(pairs_of(v) for v in value.values())
        if isinstance(value, list):
            return sum(pairs_of(v) for v in value)
        return 0

    def depth_of(value: Any) -> int:
        if isinstance(value, dict):
            return 1 + max((depth_of(v) for v in value.values()), default=0)
        if isinstance(value, list):
            return 1 + max((depth_of(v) for v in value), default=0)
        return 0

    for _ in range(500):
        value = tree(0)
        pairs, values, depth = scenario_stream._shape(value)
        assert pairs == pairs_of(value)
        assert values == _count_values(value, 0, 0, name="t", limits=ReadLimits())
        assert depth == depth_of(value)


def test_cases_cover_outputs_and_refusals() -> None:
    """The cases above are not all refusals (nor all runs)."""
    ok = [n for n in CASES if not _whole_text(CASES[n]).startswith("error: ")]
    assert {"long", "memory-static", "escapes", "unicode", "steps-first", "notes"} <= set(ok)
    assert len(CASES) - len(ok) >= 25
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "s.json"
        p.write_text(CASES["notes-bad-step"], encoding="utf-8")
        text, notes = _whole(p)
        assert notes and text.startswith("error: ")


def _whole_text(text: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "s.json"
        p.write_text(text, encoding="utf-8")
        return _whole(p)[0]


def test_not_utf8_late(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_stream, "_CHUNK", 64)
    path = tmp_path / "s.json"
    text = CASES["long"].encode()
    path.write_bytes(text[:-200] + b"\xff" + text[-199:])
    got = _one_pass(path)
    assert got == _whole(path)
    assert got[0].startswith(f"error: {path}: scenario file is not UTF-8 text (byte ")


def _examples() -> list[Path]:
    return sorted(
        p for p in ROOT.glob("examples/**/*.yaml")
        if "kind: Scenario" in p.read_text(encoding="utf-8")
    ) + sorted((ROOT / "src/podnuma/scenario/demo").glob("*.yaml"))


_PATH_FIELDS = (("node", "sysfs"), ("node", "machineInfoFile"), ("", "kubeletConfigFile"),
                ("state", "cpuManagerFile"), ("state", "memoryManagerFile"),
                ("state", "deviceManagerFile"))


@pytest.mark.parametrize("example", _examples(), ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_as_json(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every example scenario, written as JSON (the files it names made
    absolute), gives the same document both ways."""
    doc = yaml.safe_load(example.read_text(encoding="utf-8"))
    for head, key in _PATH_FIELDS:
        holder = doc.get(head) if head else doc
        if isinstance(holder, dict) and isinstance(holder.get(key), str):
            holder[key] = str((example.parent / holder[key]).resolve())
    path = tmp_path / (example.stem + ".json")
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    want = _whole(path)
    assert not want[0].startswith("error: ") or "real-node" in str(example), want[0]
    assert _one_pass(path) == want
    monkeypatch.setattr(scenario_stream, "_CHUNK", 13)
    assert _one_pass(path, "yaml", True) == _whole(path, "yaml", True)


def _reader_verdict(text: str, limits: ReadLimits, tmp_path: Path) -> Callable[[], object]:
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")

    def read() -> object:
        src = ScenarioFile(path, limits=limits)
        try:
            reader = JSONStepReader(src)
            try:
                top = reader.head()
                return top, list(reader.items())
            except ReadWhole:
                return "whole"
        finally:
            src.close()

    return read


def _values(text: str) -> int:
    """The values of a JSON document, as the whole read counts them."""
    from podnuma.inputs.documents import _count_values

    return _count_values(json.loads(text), 0, 0, name="s.json", limits=ReadLimits())


_LIMITS_TEXT = json.dumps(_scenario(_long(40, 4)))
_LIMITS_DEEP = json.dumps(_scenario([
    {"addPod": {"metadata": {"name": "deep"}, "spec": {"x": [[[{"y": [1]}]]]}}},
    *_long(6, 5),
]))


#: how the reader checks a step: on the text's counts (Python) and on the
#: value's shape (the compiled build's way, switched on here in Python); a
#: compiled module reads its own ``_COMPILED`` (a ``Final`` name: patching
#: it changes nothing there), so only its own way is run against it
_CHECKS = [True] if not isinstance(scenario_stream._probe, FunctionType) else [False, True]


@pytest.mark.parametrize("decoder", sorted(DECODERS))
@pytest.mark.parametrize("compiled", _CHECKS, ids=lambda c: "value-shape" if c else "text-counts")
@pytest.mark.parametrize(("text", "limits"), [
    (_LIMITS_TEXT, ReadLimits(max_bytes=3000)), (_LIMITS_TEXT, ReadLimits(max_nodes=400)),
    (_LIMITS_TEXT, ReadLimits(max_depth=6)), (_LIMITS_TEXT, ReadLimits(max_nodes=100_000)),
    # at the limits exactly and one past them: the exact counts of the
    # compiled check, the bounds of the text's, and the whole read agree
    (_LIMITS_TEXT, ReadLimits(max_nodes=_values(_LIMITS_TEXT))),
    (_LIMITS_TEXT, ReadLimits(max_nodes=_values(_LIMITS_TEXT) - 1)),
    (_LIMITS_DEEP, ReadLimits(max_depth=10)), (_LIMITS_DEEP, ReadLimits(max_depth=9)),
    (_LIMITS_DEEP, ReadLimits(max_nodes=_values(_LIMITS_DEEP))),
    (_LIMITS_DEEP, ReadLimits(max_nodes=_values(_LIMITS_DEEP) - 1)),
])
def test_reader_limits_are_the_whole_reads(
    text: str, limits: ReadLimits, compiled: bool, decoder: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Files over a limit are refused with the whole read's message, even
    when the steps before the limit was passed were handed out; a file
    within the limits gives the whole read's values. Both ways a step is
    checked: the compiled build's (on the value's shape) and Python's (on
    the text's counts)."""
    from podnuma.errors import InputError
    from podnuma.inputs.documents import JSONListStream, load_json_streamed, read_text

    monkeypatch.setattr(scenario_stream, "_COMPILED", compiled)
    monkeypatch.setattr(scenario_stream, "MSGSPEC_FROM", DECODERS[decoder])
    read = _reader_verdict(text, limits, tmp_path)
    try:
        whole = load_json_streamed(
            read_text(tmp_path / "s.json", what="scenario", limits=limits),
            name=str(tmp_path / "s.json"), key="steps", limits=limits,
        )
    except InputError as e:
        with pytest.raises(InputError) as got:
            read()
        assert str(got.value) == str(e)
        return
    assert isinstance(whole, JSONListStream)
    verdict = read()
    assert isinstance(verdict, tuple)
    top, items = verdict
    assert top == whole.top
    assert items == list(whole.items())


@pytest.mark.parametrize("decoder", sorted(DECODERS))
def test_the_decoder_follows_the_file_size(
    decoder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of MSGSPEC_FROM bytes or more has its steps decoded by
    msgspec (and its pods keyed by MessagePack), a shorter one by the
    standard library; the same output either way."""
    monkeypatch.setattr(scenario_stream, "MSGSPEC_FROM", DECODERS[decoder])
    path = tmp_path / "long.json"
    path.write_text(CASES["long"], encoding="utf-8")
    src = ScenarioFile(path)
    try:
        reader = JSONStepReader(src)
        reader.head()
        assert (reader.decoder is not None) == (decoder == "msgspec")
    finally:
        src.close()
    assert _one_pass(path) == _whole(path)
