"""``fleet analyze --kubeconfig -``: the kubeconfig on standard input (and
on ``/dev/stdin``, a shell's ``<(command)``, a named pipe), read once
through the bounded reader; standard input then refused as a dump; its
errors one line naming ``<stdin>``; its relative file names the working
directory's. Last, a real kube-apiserver read with the kubeconfig piped in
gives the report the kubeconfig file gives (skipped without the binaries
of ``cluster/build``, as tests/cluster is)."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli

from .conftest import EXAMPLE, need

HELP = "(see 'podnuma fleet analyze --help')"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _podnuma(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
             shell: str | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own, its standard input a real pipe
    (``stdin``); ``shell``: run as this bash command line instead."""
    argv = ["bash", "-c", shell] if shell is not None else [
        sys.executable, "-m", "podnuma.cli", *args]
    p = subprocess.run(argv, input=stdin if stdin is not None else b"", cwd=cwd, env=_env(),
                       capture_output=True, timeout=300)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(), p.stderr.decode())


def _one_line(code: int, out: str, err: str) -> str:
    """The one error line of a refused input (exit 2, nothing on stdout)."""
    assert (code, out) == (2, ""), (code, out, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _invoke(*args: str, input: str | None = None) -> str:
    r = CliRunner().invoke(cli, ["fleet", "analyze", *args], input=input, prog_name="podnuma")
    return _one_line(r.exit_code, r.stdout, r.stderr)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _kubeconfig(server: str, cluster: dict[str, Any] | None = None,
                user: dict[str, Any] | None = None) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "here",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user or {"token": "some-token"}}],
        "contexts": [{"name": "here", "context": {"cluster": "c", "user": "u"}}],
    })


# -- standard input is read once ------------------------------------------


def test_stdin_as_a_dump_beside_a_kubeconfig_from_stdin_is_refused() -> None:
    line = _invoke("-", "--kubeconfig", "-", input=_kubeconfig("https://127.0.0.1:1"))
    assert line == ("error: standard input ('-') does not go with --kubeconfig -: standard input is "
                    f"read once, for the kubeconfig {HELP}")
    # the other order, and the refusal of '-' beside a kubeconfig file, unchanged
    assert _invoke("--kubeconfig", "-", "-", input="") == line
    assert _invoke("-", "--kubeconfig", "kubeconfig", input="") == (
        f"error: standard input ('-') does not go with --kubeconfig {HELP}")


@pytest.mark.parametrize("args", [["/dev/stdin", "--kubeconfig", "-"],
                                  ["--kubeconfig", "/dev/stdin", "/dev/stdin"]],
                         ids=["kubeconfig-dash", "kubeconfig-dev-stdin"])
def test_the_kubeconfigs_pipe_as_a_dump_too_is_refused(args: list[str]) -> None:
    """Standard input a pipe, named ``/dev/stdin`` as an INPUT: the same
    pipe as the kubeconfig's, refused before either is read."""
    p = _podnuma("fleet", "analyze", *args, stdin=_kubeconfig("https://127.0.0.1:1").encode())
    kubeconfig = args[args.index("--kubeconfig") + 1]
    assert _one_line(p.returncode, p.stdout, p.stderr) == (
        f"error: /dev/stdin: the same pipe as --kubeconfig {kubeconfig}: a pipe is read once, "
        f"for the kubeconfig {HELP}")


# -- a kubeconfig on standard input that is not usable --------------------

BOMB = "\n".join(["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] + [
    f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)])
CTX = "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"


@pytest.mark.parametrize(("text", "want"), [
    ("", "the kubeconfig file is empty"),
    ("# nothing\n", "the kubeconfig file is empty"),
    ("apiVersion: v1\nclusters: [\n", "invalid YAML: "),
    ("- a\n", "must be a mapping (a kubeconfig), got a list"),
    (BOMB, "a4[7]: YAML aliases expand to more than 100000 values"),
    ("apiVersion: v1\nkind: Config\n", "current-context: not set: give --context NAME"),
    ("current-context: a\ncontexts: x\n", "contexts: must be a list, got a string"),
    ("current-context: a\ncontexts: [5]\n", "contexts[0]: must be a mapping, got an integer"),
    ("current-context: b\ncontexts: [{name: a}]\n",
     "current-context: no context named 'b' in contexts (contexts: 'a')"),
    (CTX, "contexts[0].context.cluster: no cluster named 'c' in clusters"),
    (CTX + "clusters: [{name: c, cluster: {server: 'https://x'}}]\n",
     "contexts[0].context.user: no user named 'u' in users"),
    (CTX + "clusters: [{name: c, cluster: {}}]\nusers: [{name: u, user: {}}]\n",
     "clusters[0].cluster.server: not set: the API server's URL"),
], ids=["empty", "comment", "malformed", "list", "alias-bomb", "no-current-context", "contexts-string",
        "context-integer", "unknown-context", "unknown-cluster", "unknown-user", "no-server"])
def test_an_unusable_kubeconfig_on_stdin_is_one_line_naming_stdin(text: str, want: str) -> None:
    line = _invoke("--kubeconfig", "-", input=text)
    assert line.startswith(f"error: <stdin>: {want}"), line


def test_an_unknown_context_of_a_kubeconfig_on_stdin() -> None:
    line = _invoke("--kubeconfig", "-", "--context", "there", input=_kubeconfig("https://x"))
    assert line == "error: <stdin>: --context there: no such context in the kubeconfig (contexts: 'here')"


def test_a_closed_stdin_is_one_line() -> None:
    p = _podnuma(shell=f"exec {sys.executable} -m podnuma.cli fleet analyze --kubeconfig - <&-")
    assert _one_line(p.returncode, p.stdout, p.stderr) == (
        "error: <stdin>: cannot read kubeconfig from standard input: it is closed")


def test_an_unreachable_server_reads_the_same_from_stdin_as_from_the_file(tmp_path: Path) -> None:
    """The kubeconfig on standard input is loaded as the file is: the same
    line for a server nobody listens on (the client went that far)."""
    text = _kubeconfig(f"http://127.0.0.1:{_free_port()}")
    (tmp_path / "kubeconfig").write_text(text)
    piped = _podnuma("fleet", "analyze", "--kubeconfig", "-", stdin=text.encode())
    named = _podnuma("fleet", "analyze", "--kubeconfig", str(tmp_path / "kubeconfig"))
    line = _one_line(piped.returncode, piped.stdout, piped.stderr)
    assert "cannot reach the API server" in line
    assert line == _one_line(named.returncode, named.stdout, named.stderr)


# -- relative file names -------------------------------------------------

REL = _kubeconfig("https://127.0.0.1:1", {"certificate-authority": "pki/ca.crt"},
                  {"client-certificate": "pki/user.crt", "client-key": "pki/user.key", "tokenFile": "tok"})


def _layout(d: Path, token: str) -> None:
    (d / "pki").mkdir(parents=True)
    for f in ("ca.crt", "user.crt", "user.key"):
        (d / "pki" / f).write_text(f"{f} of {d.name}\n")
    (d / "tok").write_text(token)


def test_relative_file_names_of_stdin_are_the_working_directorys_of_a_file_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need("kubernetes")
    from podnuma.fleet.live import _api_client

    cwd, home = tmp_path / "cwd", tmp_path / "home"
    _layout(cwd, "token-of-cwd")
    _layout(home, "token-of-home")
    (home / "kubeconfig").write_text(REL)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(REL.encode())))
    piped = _api_client("-", None).configuration
    named = _api_client(str(home / "kubeconfig"), None).configuration
    for conf, d in ((piped, cwd), (named, home)):
        assert conf.ssl_ca_cert == str(d / "pki" / "ca.crt")
        assert (conf.cert_file, conf.key_file) == (str(d / "pki" / "user.crt"), str(d / "pki" / "user.key"))
        assert conf.api_key["BearerToken"] == f"Bearer token-of-{d.name}"
    # a relative --kubeconfig: its own directory still
    assert _api_client("../home/kubeconfig", None).configuration.ssl_ca_cert == str(home / "pki" / "ca.crt")


@pytest.mark.parametrize("how", ["dash", "dev-stdin", "process-substitution", "named-pipe"])
def test_pipes_resolve_relative_names_as_stdin_does(tmp_path: Path, how: str) -> None:
    """``-``, ``/dev/stdin`` and ``<(command)`` (unnamed pipes): the
    working directory, not ``/dev`` nor ``/dev/fd``; a named pipe: its own
    directory, as a file. A missing certificate authority says where it
    was looked for."""
    text = _kubeconfig("https://127.0.0.1:1", {"certificate-authority": "ca.crt"})
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (tmp_path / "kubeconfig").write_text(text)
    if how == "named-pipe":
        fifo = tmp_path / "fifos" / "kubeconfig"
        fifo.parent.mkdir()
        os.mkfifo(fifo)

        def write() -> None:
            with open(fifo, "w") as w:
                w.write(text)

        threading.Thread(target=write, daemon=True).start()
        p = _podnuma("fleet", "analyze", "--kubeconfig", str(fifo), cwd=cwd)
        name, where = str(fifo), fifo.parent
    elif how == "process-substitution":
        p = _podnuma(shell=f"exec {sys.executable} -m podnuma.cli fleet analyze "
                           f"--kubeconfig <(cat {tmp_path / 'kubeconfig'})", cwd=cwd)
        name, where = "/dev/fd/", cwd
    else:
        arg = "-" if how == "dash" else "/dev/stdin"
        p = _podnuma("fleet", "analyze", "--kubeconfig", arg, stdin=text.encode(), cwd=cwd)
        name, where = ("<stdin>" if arg == "-" else arg), cwd
    line = _one_line(p.returncode, p.stdout, p.stderr)
    assert line.startswith(f"error: {name}"), line
    assert line.endswith(f": cannot load the kubeconfig: File does not exist: {where / 'ca.crt'}"), line


# -- a live cluster, the kubeconfig piped in ------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The example fleet in a real control plane (tests/cluster's, started
    for this module); skipped without its binaries, except under CI=true."""
    from tests.cluster import controlplane

    missing = controlplane.missing_binaries(controlplane.CONTROL_PLANE_BINARIES)
    if not controlplane.have_openssl():
        missing.append("openssl")
    if missing:
        reason = (f"{', '.join(missing)} not built in {controlplane.bin_dir()} "
                  "(run cluster/build, or set PODNUMA_CLUSTER_BIN)")
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    need("kubernetes")
    cp = controlplane.start(tmp_path_factory.mktemp("control-plane"))
    try:
        def items(name: str) -> list[dict[str, Any]]:
            got: list[dict[str, Any]] = json.loads((EXAMPLE / name).read_text())["items"]
            return got

        cp.install_nrt_crd()
        controlplane.create_nodes(cp, items("nodes.json"))
        controlplane.create_pods(cp, items("pods.json"))
        cp.apply([controlplane.creatable(o) for o in items("noderesourcetopologies.json")])
        yield cp
    finally:
        cp.stop()


@pytest.mark.xdist_group("cluster")
def test_a_live_cluster_read_with_the_kubeconfig_on_stdin(cluster: Any, tmp_path: Path) -> None:
    """The same report whether the kubeconfig is a file, standard input,
    ``/dev/stdin`` or ``<(cat FILE)`` (the FleetConfig beside it a pipe
    too); its certificate files named relative to the kubeconfig's
    directory (the file) or the working directory (the pipes): TLS to the
    API server with each."""
    admin = json.loads(cluster.admin_kubeconfig.read_text())  # (its user may list every object)
    pki = tmp_path / "pki"
    pki.mkdir()
    cluster_, user = admin["clusters"][0]["cluster"], admin["users"][0]["user"]
    for entry, key in ((cluster_, "certificate-authority"), (user, "client-certificate"),
                       (user, "client-key")):
        (pki / key).write_bytes(Path(entry[key]).read_bytes())
        entry[key] = f"pki/{key}"  # (relative)
    text = json.dumps(admin)
    (tmp_path / "kubeconfig").write_text(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    extras = [str(EXAMPLE / "fleet.yaml"), str(EXAMPLE / "configz")]
    args = ["fleet", "analyze", "-o", "json", "--what-if", "pod-level"]
    named = _podnuma(*args, "--kubeconfig", str(tmp_path / "kubeconfig"), *extras, cwd=elsewhere)
    assert named.returncode == 0, named.stderr
    report = json.loads(named.stdout)
    assert report["fleet"]["nodes"] == 5
    for how in ("-", "/dev/stdin"):
        piped = _podnuma(*args, "--kubeconfig", how, *extras, stdin=text.encode(), cwd=tmp_path)
        assert piped.returncode == 0, piped.stderr
        assert json.loads(piped.stdout) == report, how
    # piped in elsewhere, its certificates are looked for there
    lost = _podnuma(*args, "--kubeconfig", "-", *extras, stdin=text.encode(), cwd=elsewhere)
    assert _one_line(lost.returncode, lost.stdout, lost.stderr) == (
        "error: <stdin>: cannot load the kubeconfig: File does not exist: "
        f"{elsewhere / 'pki' / 'certificate-authority'}")
    shell = _podnuma(shell=f"exec {sys.executable} -m podnuma.cli {' '.join(args)} --kubeconfig "
                           f"<(cat kubeconfig) <(cat {extras[0]}) {extras[1]}", cwd=tmp_path)
    assert shell.returncode == 0, shell.stderr
    # (the FleetConfig named by its pipe in the report)
    assert json.loads(re.sub(r"/dev/fd/[0-9]+", "FLEETCONFIG", shell.stdout)) == json.loads(
        named.stdout.replace(extras[0], "FLEETCONFIG"))


def test_a_token_file_is_read_without_its_line_break_as_client_go_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``echo TOKEN > FILE`` writes a line break after the token: client-go
    takes the white space off (the Python client would send it in the
    header and fail); a token file that cannot be read is one line at its
    field."""
    need("kubernetes")
    from podnuma.fleet.live import _api_client

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tok").write_text("  token-abc\n")
    text = _kubeconfig("https://127.0.0.1:1", {}, {"tokenFile": "tok", "token": "other"})
    (tmp_path / "kubeconfig").write_text(text)
    conf = _api_client(str(tmp_path / "kubeconfig"), None).configuration
    assert conf.api_key["BearerToken"] == "Bearer token-abc"  # (the file wins over token, as client-go's)
    (tmp_path / "tok").unlink()
    run = _podnuma("fleet", "analyze", "--kubeconfig", str(tmp_path / "kubeconfig"))
    line = _one_line(run.returncode, run.stdout, run.stderr)
    assert line == f"error: {tmp_path / 'kubeconfig'}: users[0].user.tokenFile: {tmp_path / 'tok'}: token file not found"
