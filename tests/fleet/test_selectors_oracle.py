"""podnuma's label selectors (podnuma.fleet.selectors) against
apimachinery v0.37.2's (``kubelet-oracle selector``: ``labels.Parse`` for
the string form, ``metav1.LabelSelectorAsSelector`` for the mapping form,
``Selector.Matches``).

Every case is a selector and a set of labels. Both sides must give the same
requirements (key, operator, values, in the same order) and the same match
result, or the same error text. Cases: hand-written edge cases of both
forms, each against several label sets, and generated ones (random strings
over the grammar's pieces, long selectors with repeated keys, random
mappings).

The one allowance: ``matchLabels`` is a Go map there, walked in a random
order, so with two invalid entries either error may come out. Such a case
is checked against each entry's own error (a case of its own here)."""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

from podnuma.errors import InputError
from podnuma.fleet.selectors import parse_selector, selector_matches
from tests.oracle.conftest import oracle_binary

__all__ = ["oracle_binary"]  # the differential suite's fixture: its build, its skip (fail under CI)

LABEL_SETS: list[dict[str, str]] = [
    {},
    {"a": "b"},
    {"a": "1", "b": "2"},
    {"a": "", "x": "c"},
    {"a": "c", "b": "b", "in": "in", "notin": "x"},
    {"a": "10", "z": "4", "example.com/a": "b", "k": "-3"},
    {"a": "abc", "z": "9223372036854775808", "b": "", "x": "b"},
]

NAME63 = "n" * 63
NAME64 = "n" * 64
VALUE63 = "v" * 63
VALUE64 = "v" * 64
PREFIX253 = ".".join(["p" * 63] * 3 + ["p" * 61])
PREFIX254 = PREFIX253 + "p"

STRINGS: list[str] = [
    # empty, blanks, commas
    "", " ", "\t", " \t\r\n ", ",", ",,", "a,", ",a", "a,,b", "a, b", "a ,b", " a = b , c ",
    "a,", "a=b,", "a in (b),", "!a,", "a=b,,c",
    # every operator
    "a", "!a", "a=b", "a==b", "a!=b", "a in (b)", "a notin (b)", "a>1", "a<1", "a in (b,c)",
    "a notin (b,c)", "x=1,a=2,m=3", "b,a", "!b,a=c,x notin (b)",
    # operators run together or doubled
    "a===b", "a!==b", "a=!b", "a!b", "a=>1", "a>=1", "a<=1", "a>>1", "a<>1", "a=<1", "!!a",
    "! a", "!a=b", "!a!=b", "!a in (b)", "!=a", "=a", "==a", "a=b=c", "a b", "a in b",
    "a gt 1", "a lt 1", "a exists", "a =", "a ==", "a !=", "a>", "a<", "a=,b", "a!=,b",
    # == and spacing
    "a == b", "a= b", "a =b", "a\t==\tb", "a\n!=\nb", "  !  a  ", "a  in  (  b  ,  c  )",
    # set syntax
    "a in ()", "a in (,)", "a in (,,)", "a in (b,)", "a in (,b)", "a in (b,,c)", "a in (b c)",
    "a in (b))", "a in ((b))", "a in (b", "a in b)", "a in", "a notin", "a in (", "a in )",
    "a in (c,b,a)", "a in (b,b)", "a in (in, notin)", "in in (in)", "notin notin (notin)",
    "in", "notin", "!in", "a=in", "a=notin", "a in(b)", "a notin(b)", "a in (=)", "a in (!)",
    "a in (b,=)", "a in (b)c", "a in (b) c", "a in (b)(c)", "a notin ()",
    # parentheses and stray symbols
    "(", ")", "()", "(a)", "a)", "a(", "a=b)", "a=(b)", "a=(", "=", "!", "!=", "==", ">", "<",
    "a,(", "a,)", "a,!", "a,=", "a,!=b", "a,!,b",
    # empty values
    "a=", "a==", "a!=", "a=,b=", "a in (b),c=",
    # keys and values at and past their limits
    f"{NAME63}=v", f"{NAME64}=v", f"a={VALUE63}", f"a={VALUE64}", f"{PREFIX253}/a",
    f"{PREFIX254}/a", f"{PREFIX254}/{NAME64}", f"a in ({VALUE63},{VALUE64})",
    f"a in ({VALUE64},x{VALUE64})", "é" * 31 + "=v", "a=" + "é" * 32, "a=" + "é" * 31,
    # prefixes
    "example.com/a=b", "example.com/a", "!example.com/a", "/a", "a/", "/", "//a", "a//b",
    "a/b/c", "Example.com/a", "example.com./a", ".example.com/a", "ex_ample.com/a",
    "example..com/a", "-ex.com/a", "ex-.com/a", "1.2.3/a", "a.b/-c", "a.b/c-",
    # invalid characters in keys and values
    "a$=b", "a=b$", "-a", "a-", "_a", "a_", ".a", "a.", "a.b_c-d", "A=B", "a=-b", "a=b-",
    "a=_b", "a=.b", "a=b.c_d-e", "a=b c", "a=é", "é", "a=\x01", "a=\x7f", "a=\u2028",
    "a in (\x01)", "a=\"b\"", "a='b'", "a=b\\c", "a:b", "a;b", "a=b;c", "a@b", "a*",
    # NUL bytes: the end where a token starts, skipped inside one
    "a\x00b", "a \x00b", "a=\x00b", "\x00", "a,\x00", "a=b\x00,c", "a=b \x00 garbage (",
    "!\x00a", "a in (b\x00,c)",
    # duplicate keys
    "a,a,a", "a=1,a!=1", "a=1,a=2", "b=1,a,b!=2,a=3", "a=1,!a", "a in (1),a notin (1)",
    # Gt and Lt
    "a>1", "a<1", "a>-1", "a<-5", "a>abc", "a>1.5", "a>9223372036854775807",
    "a>9223372036854775808", "a<-9223372036854775808", "a>+5", "a>05", "a>0", "a> 1",
    "a<10", "z>3", "z<5", "k<0", "k>-4", "a>1e3", "a>0x10", "a>1_0", "a>٣",
    "z>3,z<5", "a>1,a<100",
]

EXPR = "matchExpressions"

MAPPINGS: list[dict[str, Any]] = [
    {}, {"matchLabels": {}}, {"matchLabels": None}, {EXPR: []}, {EXPR: None},
    {"matchLabels": {}, EXPR: []},
    {"matchLabels": {"a": "b"}}, {"matchLabels": {"a": "b", "b": "2"}},
    {"matchLabels": {"a": ""}}, {"matchLabels": {"a": None}},
    {"matchLabels": {"-a": "b"}}, {"matchLabels": {"a": "-b"}}, {"matchLabels": {"": ""}},
    {"matchLabels": {NAME64: VALUE64}}, {"matchLabels": {NAME63: VALUE63}},
    {"matchLabels": {f"{PREFIX254}/a": "b"}}, {"matchLabels": {"a/b/c": "x"}},
    {"matchLabels": {"example.com/a": "b"}},
    # two invalid entries: either error (see the module's docstring)
    {"matchLabels": {"-a": "b", "c": "-d"}},
    {"matchLabels": {"ok": "1", "-x": "y", "y": "x" * 64}},
    {EXPR: [{"key": "a", "operator": "In", "values": ["b"]}]},
    {EXPR: [{"key": "a", "operator": "In", "values": ["c", "b", "c"]}]},
    {EXPR: [{"key": "a", "operator": "NotIn", "values": ["b"]}]},
    {EXPR: [{"key": "a", "operator": "Exists"}]},
    {EXPR: [{"key": "a", "operator": "DoesNotExist"}]},
    {EXPR: [{"key": "a", "operator": "Exists", "values": []}]},
    {EXPR: [{"key": "a", "operator": "Exists", "values": None}]},
    {EXPR: [{"key": "a", "operator": "In"}]},
    {EXPR: [{"key": "a", "operator": "In", "values": []}]},
    {EXPR: [{"key": "a", "operator": "In", "values": None}]},
    {EXPR: [{"key": "a", "operator": "NotIn"}]},
    {EXPR: [{"key": "a", "operator": "In", "values": [""]}]},
    {EXPR: [{"key": "a", "operator": "In", "values": [None]}]},
    {EXPR: [{"key": "a", "operator": "Exists", "values": ["b"]}]},
    {EXPR: [{"key": "a", "operator": "DoesNotExist", "values": ["b", "c"]}]},
    {EXPR: [{"key": "a", "operator": "Exists", "values": ["<b>", "&", "\u2028", "é", "\x01"]}]},
    {EXPR: [{"key": "a", "operator": "Exists", "values": ["-"]}]},
    {EXPR: [{"key": "-", "operator": "Exists", "values": ["-", "-", "ok", "-x"]}]},
    {EXPR: [{"key": "-", "operator": "In"}]},
    {EXPR: [{"key": "a", "operator": "In", "values": ["-x", "ok", VALUE64]}]},
    {EXPR: [{"operator": "Exists"}]},
    {EXPR: [{"key": None, "operator": "Exists"}]},
    {EXPR: [{"key": "a"}]},
    {EXPR: [{"key": "a", "operator": None}]},
    {EXPR: [{"key": "a", "operator": "in", "values": ["b"]}]},
    {EXPR: [{"key": "a", "operator": "Gt", "values": ["1"]}]},
    {EXPR: [{"key": "a", "operator": "Lt", "values": ["1"]}]},
    {EXPR: [{"key": "a", "operator": "Equals", "values": ["1"]}]},
    {EXPR: [{"key": "a", "operator": "=", "values": ["1"]}]},
    {EXPR: [{"key": "a", "operator": "exists"}]},
    {EXPR: [{"key": "a", "operator": "\"é\n"}]},
    {EXPR: [{"key": "a", "operator": ""}]},
    {EXPR: [{"key": "-a", "operator": "Bogus"}]},
    {EXPR: [{"key": "a", "operator": "Exists"}, {"key": "a", "operator": "Bogus"}]},
    {EXPR: [{"key": "a", "operator": "Bogus"}, {"key": "-", "operator": "Exists"}]},
    {"matchLabels": {"-": "x"}, EXPR: [{"key": "a", "operator": "Bogus"}]},
    {"matchLabels": {"a": "b"}, EXPR: [{"key": "a", "operator": "NotIn", "values": ["b"]}]},
    {"matchLabels": {"b": "2", "a": "1"},
     EXPR: [{"key": "z", "operator": "Exists"},
            {"key": "a", "operator": "In", "values": ["1", "3"]},
            {"key": "b", "operator": "DoesNotExist"}, {"key": "a", "operator": "Exists"}]},
    {EXPR: [{"key": "example.com/a", "operator": "In", "values": ["b", "c"]},
            {"key": "in", "operator": "NotIn", "values": ["in"]}]},
    {EXPR: [{"key": NAME64, "operator": "In", "values": [VALUE64, "-"]}]},
    {EXPR: [{"key": f"{PREFIX254}/a", "operator": "Exists"}]},
    {EXPR: [{"key": "a/b/c", "operator": "Exists"}]},
    {EXPR: [{"key": "/a", "operator": "Exists"}]},
]

# pieces of the grammar for random strings
PIECES = ["a", "b", "x", "in", "notin", "=", "==", "!", "!=", "(", ")", ",", " ", " ", ">", "<",
          "1", "-", ".", "/", "_", "\t", "é", "A", "example.com", "9"]


def _random_strings(rng: random.Random, count: int) -> list[str]:
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def _random_requirement(rng: random.Random, keys: list[str]) -> str:
    k = rng.choice(keys)
    vals = ["1", "2", "b", "c", "", "in"]
    shape = rng.randrange(7)
    if shape == 0:
        return k
    if shape == 1:
        return "!" + k
    if shape in (2, 3):
        return f"{k}{rng.choice(['=', '==', '!='])}{rng.choice(vals)}"
    if shape == 4:
        return f"{k}{rng.choice(['>', '<'])}{rng.choice(['1', '5', '12', '0', '0', '-2'])}"
    picked = ",".join(rng.choice(vals) for _ in range(rng.randint(1, 3)))
    return f"{k} {rng.choice(['in', 'notin'])} ({picked})"


def _long_selectors(rng: random.Random, count: int) -> list[str]:
    # many requirements over few keys: the order of equal keys is that of
    # Go's (unstable) sort.Sort
    out = []
    for _ in range(count):
        keys = rng.sample(["a", "b", "c", "d", "e", "example.com/f", "g"], rng.randint(1, 5))
        n = rng.choice([11, 12, 13, 14, 20, 33, 49, 50, 51, 64, 90, 130])
        out.append(",".join(_random_requirement(rng, keys) for _ in range(n)))
    return out


def _random_mappings(rng: random.Random, count: int) -> list[dict[str, Any]]:
    keys = ["a", "b", "-", "example.com/a", "", "A"]
    values = ["1", "b", "", "-", "é", "x" * 64]
    ops = ["In", "NotIn", "Exists", "DoesNotExist", "In", "Exists", "Gt", "in", ""]
    out: list[dict[str, Any]] = []
    for _ in range(count):
        m: dict[str, Any] = {}
        exprs = [
            {"key": rng.choice(keys), "operator": rng.choice(ops),
             **({"values": rng.sample(values, rng.randint(0, 3))} if rng.random() < 0.7 else {})}
            for _ in range(rng.randint(0, 16))
        ]
        # a Go map's order is random: with many requirements and repeated
        # keys, one matchLabels entry at most keeps the order fixed
        n_labels = rng.randint(0, 1 if len(exprs) > 10 else 3)
        if n_labels:
            m["matchLabels"] = {k: rng.choice(values) for k in rng.sample(keys, n_labels)}
        if exprs or rng.random() < 0.5:
            m[EXPR] = exprs
        out.append(m)
    return out


def _long_mappings(rng: random.Random, count: int) -> list[dict[str, Any]]:
    # valid ones, many expressions over few keys (one matchLabels entry at
    # most: see _random_mappings)
    out: list[dict[str, Any]] = []
    for _ in range(count):
        keys = rng.sample(["a", "b", "c", "example.com/d", "e"], rng.randint(1, 4))
        exprs = []
        for _ in range(rng.choice([12, 13, 16, 25, 49, 50, 70])):
            op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
            values = rng.sample(["1", "b", "c", ""], rng.randint(1, 3)) if "In" in op else []
            exprs.append({"key": rng.choice(keys), "operator": op, "values": values})
        m: dict[str, Any] = {EXPR: exprs}
        if rng.random() < 0.5:
            m["matchLabels"] = {rng.choice(keys): rng.choice(["1", "b"])}
        out.append(m)
    return out


def _cases() -> list[dict[str, Any]]:
    rng = random.Random(20260512)
    cases: list[dict[str, Any]] = []
    for s in STRINGS:
        for labels in LABEL_SETS:
            cases.append({"selector": s, "labels": labels})
    for m in MAPPINGS:
        for labels in LABEL_SETS:
            cases.append({"selector": m, "labels": labels})
    generated: list[Any] = [
        *_random_strings(rng, 1500), *_long_selectors(rng, 80), *_random_mappings(rng, 400),
        *_long_mappings(rng, 40),
    ]
    for sel in generated:
        cases.append({"selector": sel, "labels": rng.choice(LABEL_SETS)})
    # each matchLabels entry of a mapping alone: the possible errors of the
    # whole when two entries are invalid
    alone = {
        json.dumps({k: v}): {"matchLabels": {k: v}}
        for case in cases if isinstance(case["selector"], dict)
        for k, v in (case["selector"].get("matchLabels") or {}).items()
    }
    cases.extend({"selector": sel, "labels": {}} for sel in alone.values())
    return cases


def _oracle(binary: str, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    proc = subprocess.run([binary, "selector"], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["index"] for o in lines] == list(range(len(cases)))
    return lines


def _theirs(out: dict[str, Any]) -> tuple[Any, ...]:
    assert "decodeError" not in out, out
    if "error" in out:
        return ("error", out["error"])
    reqs = [(r["key"], r["operator"], r["values"]) for r in out["requirements"]]
    return ("ok", reqs, out["matches"])


def _mine(case: dict[str, Any]) -> tuple[Any, ...]:
    try:
        reqs = parse_selector(case["selector"], path="nodeGroups[0].selector", file="fleet.yaml")
    except InputError as e:
        assert (e.path, e.file) == ("nodeGroups[0].selector", "fleet.yaml")
        return ("error", e.message)
    return ("ok", [(r.key, r.op, list(r.values)) for r in reqs],
            selector_matches(reqs, case["labels"]))


def _label_errors(selector: Any, errors: dict[str, str]) -> set[str]:
    """The errors of each of a mapping's invalid matchLabels entries alone."""
    if not isinstance(selector, dict):
        return set()
    out = set()
    for k, v in (selector.get("matchLabels") or {}).items():
        key = json.dumps({"matchLabels": {k: v}}, sort_keys=True)
        if key in errors:
            out.add(errors[key])
    return out


def test_selectors_match_apimachinery(oracle_binary: str) -> None:  # noqa: F811
    cases = _cases()
    assert len(cases) > 2000
    outputs = _oracle(oracle_binary, cases)
    theirs = [_theirs(o) for o in outputs]
    # the mappings' errors (those of single matchLabels entries among them),
    # for the Go map allowance
    errors = {json.dumps(case["selector"], sort_keys=True): t[1]
              for case, t in zip(cases, theirs, strict=True)
              if isinstance(case["selector"], dict) and t[0] == "error"}
    mismatches = []
    kinds = {"ok": 0, "error": 0}
    for case, want in zip(cases, theirs, strict=True):
        got = _mine(case)
        kinds[want[0]] += 1
        if got == want:
            continue
        possible = _label_errors(case["selector"], errors)
        if len(possible) > 1 and got[0] == want[0] == "error" and {got[1], want[1]} <= possible:
            continue
        mismatches.append(f"{case!r}\n  apimachinery: {want!r}\n  podnuma:      {got!r}")
    assert not mismatches, (f"{len(mismatches)} of {len(cases)} differ:\n"
                            + "\n".join(mismatches[:20]))
    # both outcomes are well represented
    assert kinds["ok"] > 500 and kinds["error"] > 500, kinds


def test_mapping_shape_is_checked_as_podnuma_checks_its_files() -> None:
    # what encoding/json would refuse (or ignore: unknown fields) is said
    # podnuma's way; null is Go's zero value
    wrong = [
        ({"matchLabels": {"a": 1}}, "s.matchLabels[a]: must be a string, got an integer"),
        ({"matchLabels": []}, "s.matchLabels: must be a mapping, got a list"),
        ({"matchLabels": {1: "a"}},
         "s.matchLabels: must be a mapping with string keys (label keys), got an integer"),
        ({EXPR: {}}, "s.matchExpressions: must be a list, got a mapping"),
        ({EXPR: ["a"]},
         "s.matchExpressions[0]: must be a mapping (key, operator, values), got a string"),
        ({EXPR: [{"key": "a", "operator": "In", "values": "b"}]},
         "s.matchExpressions[0].values: must be a list, got a string"),
        ({EXPR: [{"key": "a", "operator": "In", "values": ["b", 2]}]},
         "s.matchExpressions[0].values[1]: must be a string, got an integer"),
        ({EXPR: [{"key": 3, "operator": "In", "values": ["b"]}]},
         "s.matchExpressions[0].key: must be a string, got an integer"),
        ({"matchLabel": {}},
         's.matchLabel: unknown field "matchLabel" (did you mean "matchLabels"?)'),
        ({EXPR: [{"key": "a", "operator": "Exists", "value": []}]},
         's.matchExpressions[0].value: unknown field "value" (did you mean "values"?)'),
        (None, "s: must be a label selector (a string or a mapping), got null"),
        (3, "s: must be a label selector (a string or a mapping), got an integer"),
    ]
    for selector, message in wrong:
        try:
            parse_selector(selector, path="s", file="f.yaml")
        except InputError as e:
            assert str(e) == f"f.yaml: {message}"
        else:
            raise AssertionError(f"{selector!r} was accepted")
    nulls = {"matchLabels": {"a": None}, EXPR: [{"key": "b", "operator": "In", "values": [None]}]}
    reqs = parse_selector(nulls, path="s", file="f.yaml")
    assert [(r.key, r.op, r.values) for r in reqs] == [("a", "=", ("",)), ("b", "in", ("",))]
    # an invalid selector: apimachinery's text after the file and the field
    try:
        parse_selector("a in (b", path="nodeGroups[0].selector", file="fleet.yaml")
    except InputError as e:
        assert str(e) == ("fleet.yaml: nodeGroups[0].selector: unable to parse requirement: "
                          "found '', expected: ',' or ')'")
    else:
        raise AssertionError("accepted")
