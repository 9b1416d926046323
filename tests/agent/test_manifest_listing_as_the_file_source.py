"""The static-pod directory listed as the kubelet's file source lists it.

``extractFromDir`` (pkg/kubelet/config/file.go) takes
``filepath.Glob(filepath.Join(path, "[^.]*"))`` and sorts it with
``sort.Strings``: the directory's own name is part of the glob pattern
(its ``[``, ``*``, ``?`` and ``\\`` are pattern characters), a name that
is no valid pattern makes the listing fail (``glob failed: syntax error in
pattern``: the source sends no update), and the files come in byte order.
:mod:`podnuma.golang.filepath` mirrors Go's ``path/filepath`` matching; it
is compared here with the real Go standard library (a small Go program
built for the test, as the oracle is built), on a tree of awkward names.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from podnuma.agent.manifests import ManifestsUnreachable, list_manifest_files, list_manifests
from podnuma.golang import filepath as gofilepath

GO_GLOB = r"""
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
)

// One JSON line in: {"op": "match"|"glob", "pattern": [bytes], "name": [bytes]}.
// One JSON line out: {"ok": bool, "matches": [[bytes]...], "err": "..."}.
func str(b []int) string {
	out := make([]byte, len(b))
	for i, v := range b {
		out[i] = byte(v)
	}
	return string(out)
}

func ints(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var q struct {
			Op      string `json:"op"`
			Pattern []int  `json:"pattern"`
			Name    []int  `json:"name"`
		}
		if err := json.Unmarshal(in.Bytes(), &q); err != nil {
			panic(err)
		}
		res := map[string]any{}
		var err error
		if q.Op == "match" {
			res["ok"], err = filepath.Match(str(q.Pattern), str(q.Name))
		} else {
			var m []string
			m, err = filepath.Glob(str(q.Pattern))
			found := [][]int{}
			for _, x := range m {
				found = append(found, ints(x))
			}
			res["matches"] = found
		}
		if err != nil {
			res["err"] = err.Error()
		}
		out.Encode(res)
	}
}
"""


def _go() -> str | None:
    found = shutil.which("go")
    if found:
        return found
    return "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None


@pytest.fixture(scope="module")
def go_glob(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Go program answering ``filepath.Match`` and ``filepath.Glob``."""
    go = _go()
    if go is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Go is not installed (the glob differential needs it)", pytrace=False)
        pytest.skip("Go is not installed")
    work = tmp_path_factory.mktemp("goglob")
    (work / "main.go").write_text(GO_GLOB)
    env = {**os.environ, "GO111MODULE": "off", "GOFLAGS": ""}
    proc = subprocess.run([go, "build", "-o", str(work / "goglob"), "main.go"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return str(work / "goglob")


def _ask(binary: str, queries: list[dict[str, object]], cwd: Path) -> list[dict[str, object]]:
    text = "".join(json.dumps(q) + "\n" for q in queries)
    proc = subprocess.run([binary], input=text, capture_output=True, text=True, timeout=600, check=True, cwd=cwd)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _mine_match(pattern: bytes, name: bytes) -> dict[str, object]:
    try:
        return {"ok": gofilepath.match(pattern, name)}
    except gofilepath.BadPattern as e:
        return {"ok": False, "err": str(e)}


def _mine_glob(pattern: bytes) -> dict[str, object]:
    try:
        return {"matches": [list(m) for m in gofilepath.glob(pattern)]}
    except gofilepath.BadPattern as e:
        return {"matches": [], "err": str(e)}


#: pattern and name pieces: separators, every meta character, escapes,
#: ranges, a byte that is no UTF-8, a two- and a four-byte character
PIECES = [b"a", b"b", b"/", b"*", b"?", b"[", b"]", b"^", b"-", b"\\", b".", b"\x80", "é".encode(), b"\xc3",
          "\U00010000".encode(), b"z"]


def test_match_is_go_filepath_match(go_glob: str, tmp_path: Path) -> None:
    """``filepath.Match`` on random patterns and names made of the awkward
    pieces (classes, negation, ranges, escapes, stars before a separator,
    bytes that are no UTF-8): the same answer and the same syntax errors
    (found only as far as the matcher reads the pattern)."""
    rnd = random.Random(20261207)
    pairs = [(b"".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 8))),
              b"".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 6)))) for _ in range(6000)]
    theirs = _ask(go_glob, [{"op": "match", "pattern": list(p), "name": list(n)} for p, n in pairs], tmp_path)
    mine = [_mine_match(p, n) for p, n in pairs]
    wrong = [(p, n, t, m) for (p, n), t, m in zip(pairs, theirs, mine, strict=True) if t != m]
    assert wrong == []
    assert sum(bool(t.get("ok")) for t in theirs) > 100  # (matches, not only refusals, compared)
    assert sum("err" in t for t in theirs) > 300


def _tree(root: Path, rnd: random.Random) -> None:
    names = [b"a", b"b", b"[a]", b"a*", b"\x80", "é".encode(), b".h", b"ab", b"a\\b", b"?", b"man1", b"man[1]"]

    def fill(d: bytes, depth: int) -> None:
        os.makedirs(d, exist_ok=True)
        for n in rnd.sample(names, 6):
            p = os.path.join(d, n)
            if depth < 2 and rnd.random() < 0.5:
                fill(p, depth + 1)
            else:
                with open(p, "w"):
                    pass

    fill(os.fsencode(root), 0)
    os.symlink(b"a", os.path.join(os.fsencode(root), b"link"))


def test_glob_is_go_filepath_glob(go_glob: str, tmp_path: Path) -> None:
    """``filepath.Glob`` on a tree of awkward names (pattern characters,
    escapes, a byte that is no UTF-8, hidden names, a link), with patterns
    whose directory part holds pattern characters too, ``.`` and ``..``
    elements, absolute and relative: the same paths in the same order and
    the same syntax errors."""
    rnd = random.Random(7)
    root = tmp_path / "tree"
    _tree(root, rnd)
    parts = [b"a", b"b", b"*", b"?", b"[a]", b"\\[a]", b"[^.]*", b"[", b"\\", b"man[1]", b"..", b".", b"",
             b"[\x80]", b"\x80", b"a*", b"[!a]", b"*b"]
    patterns = []
    for _ in range(1500):
        pattern = b"/".join(rnd.choice(parts) for _ in range(rnd.randint(1, 4)))
        if rnd.random() < 0.6:
            pattern = os.fsencode(root) + b"/" + pattern
        elif pattern.startswith(b"/"):
            pattern = b"." + pattern
        patterns.append(pattern)
    theirs = _ask(go_glob, [{"op": "glob", "pattern": list(p)} for p in patterns], root)
    here = os.getcwd()
    os.chdir(root)
    try:
        mine = [_mine_glob(p) for p in patterns]
    finally:
        os.chdir(here)
    wrong = [(p, t, m) for p, t, m in zip(patterns, theirs, mine, strict=True) if t != m]
    assert wrong == []
    assert sum(bool(t["matches"]) for t in theirs) > 200
    assert sum("err" in t for t in theirs) > 200


def test_manifest_files_in_go_byte_order(tmp_path: Path) -> None:
    """The file source sorts the paths with ``sort.Strings``: byte order.
    A name that is no UTF-8 (``\\x80``) comes before ``é`` (``\\xc3``) and
    ``\\xf0\\x90\\x80\\x80`` (U+10000) before ``\\xf5``. The order decides
    which of two files naming one pod is kept and which pod is admitted
    first; Python's order of the decoded names (a byte that is no UTF-8 as
    a surrogate, U+DC80...) is another."""
    names = [b"\x80.yaml", "é.yaml".encode(), b"\xf5.yaml", "\U00010000.yaml".encode()]
    for name in names:
        with open(os.path.join(os.fsencode(tmp_path), name), "w") as fh:
            fh.write("{}")
    listed = [os.fsencode(p.name) for p in list_manifest_files(tmp_path)]
    assert listed == sorted(names)
    assert sorted(n.decode("utf-8", "surrogateescape") for n in names) != [
        n.decode("utf-8", "surrogateescape") for n in sorted(names)]  # (the two orders differ here)


def test_manifest_directory_name_is_a_glob_pattern(tmp_path: Path) -> None:
    """For ``staticPodPath: .../man[1]`` the kubelet lists the files of
    ``.../man1`` (``[1]`` is a character class), never those of ``man[1]``
    (which must exist: the path is looked at with ``stat`` first)."""
    (tmp_path / "man[1]").mkdir()
    (tmp_path / "man[1]" / "a.yaml").write_text("{}")
    assert list_manifest_files(tmp_path / "man[1]") == []
    (tmp_path / "man1").mkdir()
    (tmp_path / "man1" / "b.yaml").write_text("{}")
    (tmp_path / "man1" / ".hidden.yaml").write_text("{}")
    (tmp_path / "man1" / "sub").mkdir()
    listed = list_manifest_files(tmp_path / "man[1]")
    assert listed == [tmp_path / "man1" / "b.yaml"]


def test_a_backslash_in_the_directory_name_escapes(tmp_path: Path) -> None:
    """``\\`` escapes the next character of the pattern: a directory named
    ``man\\[1]`` lists the files of ``man[1]``; ``a*`` lists the files of
    every directory whose name starts with ``a``, in byte order."""
    (tmp_path / "man\\[1]").mkdir()
    (tmp_path / "man\\[1]" / "x.yaml").write_text("{}")
    (tmp_path / "man[1]").mkdir()
    (tmp_path / "man[1]" / "y.yaml").write_text("{}")
    assert list_manifest_files(tmp_path / "man\\[1]") == [tmp_path / "man[1]" / "y.yaml"]
    for d, f in (("a*", "z.yaml"), ("ab", "b.yaml"), ("ac", "a.yaml")):
        (tmp_path / d).mkdir()
        (tmp_path / d / f).write_text("{}")
    assert list_manifest_files(tmp_path / "a*") == [
        tmp_path / "a*" / "z.yaml", tmp_path / "ab" / "b.yaml", tmp_path / "ac" / "a.yaml"]


@pytest.mark.parametrize("name", ["man[", "man[]", "m[a-]", "x[b-a", "m[\\"])
def test_a_directory_name_that_is_no_pattern_keeps_the_pods(tmp_path: Path, name: str) -> None:
    """A directory whose name is no valid pattern (an unclosed class, an
    empty one, a ``-`` or ``]`` where a character is due): ``filepath.Glob``
    fails with ``syntax error in pattern``, ``extractFromDir`` returns
    ``glob failed: ...`` and the source sends no update, so the static
    pods stay as they were: :class:`ManifestsUnreachable`."""
    (tmp_path / name).mkdir()
    (tmp_path / name / "a.yaml").write_text("{}")
    with pytest.raises(ManifestsUnreachable) as got:
        list_manifests(tmp_path / name)
    assert str(got.value) == f"{tmp_path / name}: glob failed: syntax error in pattern"


def test_what_the_path_is(tmp_path: Path) -> None:
    """``listConfig``: a path that does not exist is an empty set
    (``missing``); one regular file is the one manifest (``single``);
    trailing separators are dropped first (``NewSourceFile``)."""
    assert list_manifests(tmp_path / "nowhere") == list_manifests(f"{tmp_path}/nowhere/")
    assert list_manifests(tmp_path / "nowhere").missing
    assert list_manifests(tmp_path / "nowhere").files == []
    pod = tmp_path / "pod.yaml"
    pod.write_text("{}")
    for given in (str(pod), f"{pod}/", f"{pod}//"):
        listing = list_manifests(given)
        assert (listing.files, listing.single, listing.missing) == ([pod], True, False)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ManifestsUnreachable, match="path is not a directory or file"):
        list_manifests(tmp_path / "fifo")
