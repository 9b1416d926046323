"""Reading a live cluster, read-only, through the official Kubernetes client.

With a kubeconfig, ``podnuma fleet analyze --kubeconfig FILE`` lists what
the dumps would hold: nodes and pods (``list`` on both, pods in all
namespaces, in pages of 500 as kubectl does), NodeResourceTopology objects
(``list`` on ``noderesourcetopologies.topology.node.k8s.io``; a cluster
without the CRD has none) and each node's configz
(``GET /api/v1/nodes/NODE/proxy/configz``, which needs ``get`` on
``nodes/proxy``: a node whose configz cannot be read falls back to the node
groups of a FleetConfig given beside it, and says so). Responses are read
as the API's JSON, exactly as ``kubectl get -o json`` shows it, and go
through the same assembly as the dumps (:mod:`podnuma.fleet.inputs`).

The kubeconfig is one file, as kubectl's ``--kubeconfig`` takes it (no
``KUBECONFIG``-style list), read through the bounded reader
(:mod:`podnuma.inputs.documents`): a file, a pipe (``<(vault read ...)``,
``/dev/stdin``, a named pipe, waited on for a writer) or standard input
(``-``), read once; never written back. Its relative file names
(``certificate-authority``, ``client-certificate``, ``client-key``,
``tokenFile``, an ``exec`` command's directory) resolve against its own
directory, as kubectl resolves them; for standard input and an unnamed
pipe, which have none, against the working directory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from podnuma.errors import InputError
from podnuma.fieldkit import field_path, wrong_type
from podnuma.fleet.files import parse_document
from podnuma.fleet.inputs import (
    Based,
    FleetInputs,
    Scan,
    _no_objects,
    assemble,
    is_configz,
    merge_scan,
    read_configz,
    read_objects,
    read_once,
    scan_files,
    walk_inputs,
    with_inline_pods,
)
from podnuma.fleet.model import Issue
from podnuma.inputs.documents import (
    decode_text,
    input_name,
    is_stdin,
    load_json,
    load_safe_yaml,
    read_bytes,
    unnamed_pipe,
)
from podnuma.inputs.limits import FLEET_LIMITS
from podnuma.inputs.pathtext import referenced_text

__all__ = ["load_live", "read_kubeconfig", "PAGE"]

PAGE = 500
#: the most pages of one list read (500 objects each: 5 million objects,
#: far more than a cluster holds); its bytes together are bounded as one
#: dump file's are (the fleet byte limit)
MAX_PAGES = 10_000
LIVE = "<live cluster>"
#: the lists read, named in messages by their API path
NODES = f"{LIVE} /api/v1/nodes"
PODS = f"{LIVE} /api/v1/pods"
NRTS = f"{LIVE} /apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"


def _body(resp: Any, what: str, room: int | None = None) -> bytes:
    """An API answer's bytes, read through the one bounded path: at most
    ``room`` (default: the fleet byte limit, as for one dump file) and one
    more, that limit's error naming ``what`` past it."""
    limit = FLEET_LIMITS.max_bytes
    room = limit if room is None else room
    read = getattr(resp, "read", None)
    data = read(room + 1) if callable(read) else resp.data
    if len(data) > room:
        together = " (the pages of the list together)" if room < limit else ""
        raise InputError(f"larger than the limit of {limit} bytes{together}", file=what)
    return bytes(data)


def _answer(resp: Any, what: str, room: int | None = None) -> Any:
    """An API answer's JSON (:func:`_body`, ``room``: the bytes left of the
    limit)."""
    return load_json(_body(resp, what, room), name=what, limits=FLEET_LIMITS)


def _pages(call: Callable[..., Any], what: str = LIVE, kind: str = "", api_version: str = "",
           **kw: Any) -> Any:
    """What a list call answered (``what``: its name in messages), read as
    a dump file of it would be: a list's pages joined into one list (its
    items in order, as ``kubectl get -o json`` writes them), each item
    without a ``kind`` given ``kind`` and ``api_version`` (the API server
    leaves them off the items of a list; kubectl writes them); an answer
    that is not a list (``items`` not a list, an array, one object) as it
    came, its pages after the first (if any) as more documents. An answer
    that holds no Kubernetes object (``{}``, a ``NodeList`` without
    ``items``, ``[]``...) is the error a dump file of it is
    (:func:`~podnuma.fleet.inputs._no_objects`), naming the list; an empty
    list is none of its kind.

    The pages of one list are one dump: their bytes together within the
    limit of one dump file (:data:`~podnuma.inputs.limits.FLEET_LIMITS`),
    at most :data:`MAX_PAGES` of them, and a ``continue`` token answered
    before (a server that would be listed for ever) is an error naming
    the list."""
    docs: list[Any] = []
    items: list[Any] = []
    token: str | None = None
    seen: set[str] = set()
    read = 0  # (the bytes of the pages so far: one list, bounded as one dump file is)
    while True:
        args = dict(kw, limit=PAGE, _preload_content=False)
        if token:
            if token in seen:  # (a server that answers the same page again: never ends)
                shown = token if len(token) <= 40 else token[:40] + "..."
                raise InputError(f"the continue token {shown!r} was answered before: "
                                 "the list's pages repeat", file=what)
            if len(docs) >= MAX_PAGES:
                raise InputError(f"more than the limit of {MAX_PAGES} pages", file=what)
            seen.add(token)
            args["_continue"] = token
        resp = call(**args)
        body = _body(resp, what, FLEET_LIMITS.max_bytes - read)
        read += len(body)
        doc = load_json(body, name=what, limits=FLEET_LIMITS)
        nothing = _no_objects(doc)
        if nothing is not None:  # the error a dump of it is: never 0 objects
            raise InputError(nothing, file=what)
        docs.append(doc)
        listed = isinstance(doc, dict) and isinstance(doc.get("items"), (list, type(None)))
        if not listed:  # (read as it came, by the reader of dump files: not paged on)
            break
        for item in doc.get("items") or []:
            if isinstance(item, dict) and kind:
                item.setdefault("kind", kind)
                item.setdefault("apiVersion", api_version)
            items.append(item)
        meta = doc.get("metadata")
        token = meta.get("continue") if isinstance(meta, dict) else None
        if not isinstance(token, str) or not token:
            return {**docs[0], "items": items}
    return docs[0] if len(docs) == 1 else docs


def _why(e: Any) -> str:
    """An API error as ``CODE Reason: the server's message`` (the Status
    object's message, e.g. RBAC's 'pods is forbidden: User "x" cannot list
    resource "pods" ...')."""
    text = f"{e.status} {e.reason}"
    try:
        doc = json.loads(e.body or b"")
    except (TypeError, ValueError):
        return text
    msg = doc.get("message") if isinstance(doc, dict) else None
    return f"{text}: {msg}" if isinstance(msg, str) and msg else text


#: names of standard input and of the process's open files (``/dev/fd/63``:
#: bash's ``<(command)``): their directory is no place a kubeconfig's
#: relative file names could be meant against
_DESCRIPTOR_DIRS = ("/dev/fd/", "/proc/self/fd/")


def _working_directory() -> str:
    """The working directory (``.`` when it is gone: the names then stay as
    written, and cannot be read)."""
    try:
        return os.getcwd()
    except OSError:
        return "."


def _kubeconfig_base(kubeconfig: str) -> str:
    """The directory the relative file names of ``kubeconfig`` resolve
    against: its own (as kubectl's, not following a link), or the working
    directory for standard input (``-``, ``/dev/stdin``, ``/dev/fd/N``) and
    an unnamed pipe (a shell's ``<(command)``)."""
    if is_stdin(kubeconfig) or kubeconfig == "/dev/stdin" or kubeconfig.startswith(_DESCRIPTOR_DIRS):
        return _working_directory()
    try:
        if unnamed_pipe(os.stat(kubeconfig)):
            return _working_directory()
    except (OSError, ValueError):
        pass
    return str(Path(os.path.abspath(kubeconfig)).parent)


def _named(entries: Any, key: str, field: str, name: str) -> list[tuple[int, Mapping[str, Any]]]:
    """The entries of the kubeconfig's list ``key`` (``clusters``, ``users``,
    ``contexts``) with their index: each a mapping with a string ``name``
    and a mapping ``field`` (``cluster``...), or ``InputError`` at its path."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise wrong_type(key, "a list", entries).in_file(name)
    out: list[tuple[int, Mapping[str, Any]]] = []
    for i, e in enumerate(entries):
        at = field_path(key, i)
        if not isinstance(e, Mapping):
            raise wrong_type(at, "a mapping", e).in_file(name)
        if not isinstance(e.get("name"), str):
            raise wrong_type(field_path(at, "name"), "a string", e.get("name")).in_file(name)
        body = e.get(field)
        if body is not None and not isinstance(body, Mapping):
            raise wrong_type(field_path(at, field), "a mapping", body).in_file(name)
        out.append((i, e))
    return out


def _check_kubeconfig(doc: Mapping[str, Any], context: str | None, name: str) -> None:
    """What kubectl checks before it uses a kubeconfig (client-go's
    ``ConfirmUsable``), said at its field path: the context in use exists,
    and the cluster and user it names; the cluster has a ``server``."""
    contexts = _named(doc.get("contexts"), "contexts", "context", name)
    clusters = _named(doc.get("clusters"), "clusters", "cluster", name)
    users = _named(doc.get("users"), "users", "user", name)
    current = doc.get("current-context")
    if context is None:
        if current is None or current == "":
            raise InputError("not set: give --context NAME, or set it in the kubeconfig",
                             path="current-context", file=name)
        if not isinstance(current, str):
            raise wrong_type("current-context", "a string", current).in_file(name)
    used = context if context is not None else current
    found = [(i, c) for i, c in contexts if c["name"] == used]
    if not found:
        known = ", ".join(repr(c["name"]) for _, c in contexts) or "none"
        if context is not None:
            raise InputError(f"--context {context}: no such context in the kubeconfig "
                             f"(contexts: {known})", file=name)
        raise InputError(f"no context named {used!r} in contexts (contexts: {known})",
                         path="current-context", file=name)
    i, ctx = found[0]
    body = ctx.get("context") or {}
    at = field_path(field_path("contexts", i), "context")
    for key, entries, kind in (("cluster", clusters, "clusters"), ("user", users, "users")):
        ref = body.get(key)
        if ref is None or ref == "":
            if key == "cluster":
                raise InputError("not set: the context names no cluster", path=field_path(at, key), file=name)
            continue
        if not isinstance(ref, str):
            raise wrong_type(field_path(at, key), "a string", ref).in_file(name)
        entry = next(((j, e) for j, e in entries if e["name"] == ref), None)
        if entry is None:
            raise InputError(f"no {key} named {ref!r} in {kind}", path=field_path(at, key), file=name)
        if key == "cluster":
            j, cluster = entry
            server = (cluster.get("cluster") or {}).get("server")
            where = field_path(field_path(field_path("clusters", j), "cluster"), "server")
            if server is None or server == "":
                raise InputError("not set: the API server's URL (https://HOST:PORT)", path=where, file=name)
            if not isinstance(server, str):
                raise wrong_type(where, "a string", server).in_file(name)


def read_kubeconfig(kubeconfig: str, context: str | None = None) -> tuple[dict[str, Any], str, str]:
    """The kubeconfig ``kubeconfig`` (a file, a pipe, or ``-``: standard
    input), read once through the bounded reader and checked
    (:func:`_check_kubeconfig`); with the name messages give it
    (``<stdin>`` for ``-``) and the directory its relative file names
    resolve against (:func:`_kubeconfig_base`). ``InputError`` naming it."""
    name = input_name(kubeconfig)
    base = _kubeconfig_base(kubeconfig)  # (before reading: a pipe is then still there)
    data = read_bytes(kubeconfig, what="kubeconfig", name=name)
    doc = load_safe_yaml(decode_text(data, what="kubeconfig", name=name), name=name)
    if doc is None:
        raise InputError("the kubeconfig file is empty", file=name)
    if not isinstance(doc, Mapping):
        raise wrong_type("", "a mapping (a kubeconfig)", doc).in_file(name)
    _check_kubeconfig(doc, context, name)
    return dict(doc), name, base


def _read_token_file(doc: dict[str, Any], context: str | None, name: str, base: str) -> None:
    """The ``tokenFile`` of the user the context in use names, read here
    (bounded) with the white space around it taken off, as client-go reads
    it (a file written by ``echo TOKEN > FILE`` ends in a line break, which
    the Python client would send in the header and fail on), and given to
    the client as that user's ``token`` (client-go's file wins over a
    ``token`` beside it). ``InputError`` at its field when it cannot be read."""
    used = context if context is not None else doc.get("current-context")
    ctx = next((c for c in doc.get("contexts") or [] if c.get("name") == used), None)
    user_name = ((ctx or {}).get("context") or {}).get("user")
    for i, entry in enumerate(doc.get("users") or []):
        user = entry.get("user")
        if entry.get("name") != user_name or not isinstance(user, Mapping) or "tokenFile" not in user:
            continue
        at = field_path(field_path(field_path("users", i), "user"), "tokenFile")
        ref = user["tokenFile"]
        if not isinstance(ref, str) or not ref:
            raise wrong_type(at, "a file path (a string)", ref).in_file(name)
        try:
            path = referenced_text(base, ref, home=False)  # (client-go's ResolvePaths: ``tok/`` is ``tok``)
            token = decode_text(read_bytes(path, what="token"), what="token", name=path).strip()
        except InputError as e:
            raise InputError(f"{e.file}: {e.message}" if e.file else e.message, path=at, file=name) from None
        entry["user"] = {**{k: v for k, v in user.items() if k != "tokenFile"}, "token": token}
        return


def _absolute_files_as_written(doc: dict[str, Any], context: str | None, name: str) -> None:
    """The absolute ``certificate-authority``, ``client-certificate`` and
    ``client-key`` of the cluster and user the context in use names, made
    what the system opens for them as written, as client-go opens them
    (``ResolvePaths`` joins and cleans a relative one only, as the Python
    client does too; the Python client would also clean an absolute one,
    reading ``/pki/ca.crt`` for ``/pki/ca.crt/`` and ``/pki/ca.crt`` for
    ``/lnk/../ca.crt`` whatever ``lnk`` links to). ``InputError`` at the
    field when the system finds no file there."""
    used = context if context is not None else doc.get("current-context")
    ctx = next((c for c in doc.get("contexts") or [] if c.get("name") == used), None)
    body = (ctx or {}).get("context") or {}
    for kind, key, fields in (("clusters", "cluster", ("certificate-authority",)),
                              ("users", "user", ("client-certificate", "client-key"))):
        for i, entry in enumerate(doc.get(kind) or []):
            inner = entry.get(key)
            if entry.get("name") != body.get(key) or not isinstance(inner, Mapping):
                continue
            for field in fields:
                ref = inner.get(field)
                if not isinstance(ref, str) or not os.path.isabs(ref) or os.path.normpath(ref) == ref:
                    continue
                at = field_path(field_path(field_path(kind, i), key), field)
                try:
                    written = referenced_text("/", ref, home=False)
                    os.stat(written)
                except InputError as e:  # (a NUL byte)
                    raise InputError(e.message, path=at, file=name) from None
                except OSError as e:
                    raise InputError(f"{written}: cannot read: {e.strerror or e}", path=at, file=name) from None
                entry[key] = inner = {**inner, field: os.path.realpath(written)}
            break


def _api_client(kubeconfig: str, context: str | None) -> Any:
    """The Kubernetes client of ``kubeconfig`` (:func:`read_kubeconfig`):
    the official client's loader given the document and the directory its
    file names resolve against, with nothing written back (a refreshed
    token stays in memory)."""
    doc, name, base = read_kubeconfig(kubeconfig, context)
    _read_token_file(doc, context, name, base)
    _absolute_files_as_written(doc, context, name)
    from kubernetes.client import ApiClient, Configuration
    from kubernetes.config.kube_config import KubeConfigLoader

    try:
        loader = KubeConfigLoader(  # type: ignore[no-untyped-call]
            config_dict=doc, active_context=context, config_base_path=base)
        configuration = type.__call__(Configuration)  # (as the client makes one: not its default's copy)
        loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
    except Exception as e:  # the client's own errors for a bad kubeconfig
        raise InputError(f"cannot load the kubeconfig: {e}", file=name) from None
    return ApiClient(configuration=configuration)


def load_live(kubeconfig: str, *, context: str | None = None, extra: Sequence[Path] = (),
              bases: Mapping[str, str] | None = None) -> FleetInputs:
    """The fleet as the cluster behind ``kubeconfig`` runs it (a file, a
    pipe, or ``-``: standard input; :func:`read_kubeconfig`); ``extra``:
    more inputs (a FleetConfig, MachineInfo files...) read as dumps;
    ``bases``: the directory the relative references of some of them
    resolve against, by path, instead of their own (a pipe's copy: the
    working directory), as :func:`~podnuma.fleet.inputs.load_fleet` takes it."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api_client = _api_client(kubeconfig, context)
    core = client.CoreV1Api(api_client)
    custom = client.CustomObjectsApi(api_client)
    scan = Scan()
    files: list[Path] = []
    for p in extra:
        if not p.exists():
            raise InputError("no such file or directory", file=str(p))
        walk_inputs(p, scan, files)
    for f in read_once(files, scan):
        named = Based(str(f), bases[str(f)]) if bases and str(f) in bases else str(f)
        merge_scan(scan, scan_files([named], pack=False)[0])
    server = api_client.configuration.host
    try:
        nodes = _pages(core.list_node, NODES, "Node", "v1")
        pods = _pages(core.list_pod_for_all_namespaces, PODS, "Pod", "v1")
    except ApiException as e:
        raise InputError(f"cannot list nodes and pods: {_why(e)}", file=server) from None
    except InputError:
        raise
    except Exception as e:  # connection refused, TLS...
        raise InputError(f"cannot reach the API server: {e}", file=server) from None
    # The answers read as dump files of them are (their items' problems
    # said at their field path, naming the API path listed; the pods any
    # of them holds counted and kept for the replay).
    said = len(scan.issues)
    by_node: dict[str, list[Mapping[str, Any]]] = {}
    read_objects(nodes, NODES, scan, pods=by_node)
    read_objects(pods, PODS, scan, pods=by_node)
    try:
        nrts = _pages(custom.list_cluster_custom_object, NRTS, "NodeResourceTopology",
                      "topology.node.k8s.io/v1alpha2", group="topology.node.k8s.io",
                      version="v1alpha2", plural="noderesourcetopologies")
        read_objects(nrts, NRTS, scan, pods=by_node)
    except ApiException as e:
        if e.status != 404:
            scan.issues.append(Issue("warning", f"cannot list NodeResourceTopology objects: "
                                     f"{_why(e)}", file=server))
    except InputError as e:  # (a dump of it beside the others: one of the report's issues)
        scan.issues.append(Issue("error", e.message, file=e.file, path=e.path))
    for name in sorted(scan.nodes):
        if name in scan.configz:
            continue
        where = f"{LIVE} /api/v1/nodes/{name}/proxy/configz"
        try:
            resp: Any = core.connect_get_node_proxy_with_path(name, "configz", _preload_content=False)
            text = decode_text(_body(resp, where), what="input", name=where)
        except ApiException as e:
            hint = ": needs get on nodes/proxy" if e.status in (401, 403) else ""
            scan.issues.append(Issue("warning", f"configz not readable ({_why(e)}){hint}",
                                     node=name, file=where))
            continue
        except InputError as e:
            scan.issues.append(Issue("warning", f"configz is not usable JSON: {e.message}",
                                     node=name, file=where))
            continue
        # decoded as a configz file of it is (a repeated key: the last one,
        # as the kubelet's lenient decoding takes it, and a warning)
        doc, bad = parse_document(Path(where), text)
        if bad is not None:
            scan.issues.append(Issue("warning", f"configz is not usable JSON: {bad.message}",
                                     node=name, file=where, path=bad.path))
            continue
        if is_configz(doc):  # as a configz file of it is read
            read_configz(doc, text, name, where, scan)
            continue
        nothing = _no_objects(doc)
        if nothing is not None:
            scan.issues.append(Issue("error", nothing, file=where))
            continue
        read_objects(doc, where, scan, pods=by_node)  # (Kubernetes objects: as from a file of them)
    fleet = assemble(scan)
    # as dump files of them: no node, and an answer that could not be read
    # (or pods bound to nodes the nodes answer does not hold)
    if not fleet.nodes:
        bad_answer = next((i for i in fleet.issues[said:] if i.severity == "error" and i.file), None)
        if bad_answer is not None:
            raise InputError(bad_answer.message, file=bad_answer.file, path=bad_answer.path)
    fleet.nodes = [replace(with_inline_pods(s, by_node.get(s.name, [])), pod_files=())
                   for s in fleet.nodes]
    return fleet
