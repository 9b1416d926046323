"""A static pod decoded as the kubelet's file source decodes it.

Re-implements, in podnuma's terms, k8s.io/kubernetes v1.37.2
``pkg/kubelet/config/common.go`` (``tryDecodeSinglePod`` with the file
source's ``applyDefaults``; ``file.go`` ``extractFromFile``). The kubelet
does not go through the API server's create path:

* the text is YAML unless it starts with ``{`` (``utilyaml.ToJSON``); of a
  YAML stream only the first document counts; a key given twice keeps its
  last value (go-yaml; the earlier one is never decoded); in JSON the
  decoder meets every occurrence in turn and decodes each (``RepeatedKeys``
  of ``podnuma.agent.validation``: an earlier occurrence's type mismatch,
  bad time or bad quantity refuses the file although a later one is
  good), a repeated object merges into the first (Go's decoder reuses the
  struct or map), a repeated array is decoded into the earlier one's
  elements (the slice's backing array reused), a ``null`` sets a pointer,
  map or slice to nil and leaves a plain value or a struct held by value
  as it was, makes an ``IntOrString`` an int (its int half kept) and zeroes
  a value quantity's amount (its text kept) (``settled``), anything else
  is replaced;
* the text as go-yaml and Go's JSON decoder read it: a YAML syntax error
  in go-yaml's words (libyaml's problem, which go-yaml ports, with
  go-yaml's line), ``FILE: couldn't parse as pod(yaml: line 5: mapping
  values are not allowed in this context), please check config file``;
  a later document is never parsed; YAML refuses a surrogate's escape
  (``found invalid Unicode character escape code``) and a byte that is no
  UTF-8 (``yaml: invalid leading UTF-8 octet``), JSON reads either as
  U+FFFD (in a string); a collection as a key is go-yaml's ``invalid map
  key: %#v`` (Go's ``map[interface {}]interface {}{"a":1}``), a null key
  sigs.k8s.io/yaml's ``unsupported map key of type: %!s(<nil>), key:
  <nil>, value: …`` once the whole document is decoded (podnuma's first
  one met: Go's walk of its maps has no fixed order when there are
  several); where libyaml and go-yaml differ on a plain scalar in a flow
  collection (go-yaml ends one at ``?`` and keeps ``:`` before a flow
  indicator in it) podnuma reads as libyaml;
* decoding is lenient: an unknown field (``Resources`` for ``resources``)
  is dropped, not refused, at any depth (a port's, a probe's, the
  status's: every struct of ``podnuma.api.pod_schema``);
* ``apiVersion`` and ``kind`` (found by encoding/json, a key matching
  whatever its case, the last match winning) are required and must be
  ``v1`` ``Pod``
  (``Object 'Kind' is missing in '…'``, ``no kind "Deployment" is
  registered for version "apps/v1" …``, ``invalid pod: &core.List{…}``),
  each in ``FILE: couldn't parse as pod(…), please check config file``;
* the v1 defaults apply, the registry's ``PrepareForCreate`` does not: with
  ``PodLevelResourcesFixDefaulting`` (on in v1.37) pod-level requests are
  not defaulted from pod-level limits (nor limits from the containers'),
  so ``spec.resources: {limits: …}`` alone stays limits alone; with it off
  ``SetDefaults_Pod`` defaults them (hugepage limits from the containers',
  then requests from theirs and from the limits) before validation;
  without ``PodLevelResources`` the kubelet keeps ``spec.resources`` but
  neither checks nor uses it (nor does it drop it: the file source runs no
  ``dropDisabledFields``): podnuma drops it, its QoS and resources as the
  kubelet's;
* the validation options follow the kubelet's feature gates (podnuma's
  kubelet configuration): ``PodValidationOptions`` of
  ``podnuma.agent.validation_kit``;
* ``ValidatePodCreate`` on the pod as the file source defaulted it (the
  name already ``NAME-NODE``, ``spec.nodeName`` the node's), every error in
  the kubelet's order and words in one message, ``invalid pod: [E1 E2]``
  (podnuma adds the first error's line); ``podnuma.agent.validation``
  checks: the name (a DNS subdomain, with its suffix), the namespace (a
  DNS label), label keys and values, annotation keys and total size
  (with the ``kubernetes.io/config.hash`` annotation the file source
  adds), the tolerations annotation (as ``spec.tolerations``),
  ``generateName``, ``generation``, owner references, finalizers, the
  deletion-cost annotation; volumes (name required, a DNS label, unique;
  at most one source, in the kubelet's order; the source's details:
  ``hostPath`` path and ``type``, ``emptyDir`` limit and mode, items,
  paths, modes and users of ``secret``, ``configMap``, ``downwardAPI`` and
  ``projected`` sources, ``image``, an ``ephemeral`` template's access
  modes and storage, the other sources' required fields: see
  ``podnuma.agent.validation_volumes``); for init and app containers: name
  (required, a DNS label, unique across both lists), ``image`` (required,
  no surrounding white space), ``terminationMessagePolicy``, ports
  (``containerPort`` required and 1-65535, ``hostPort`` 1-65535, a valid
  and unique port name, ``protocol``), env names (required, printable
  ASCII without ``=``), ``envFrom`` (one source, named, a valid prefix),
  volume mounts (the volume exists and is valid,
  ``mountPath`` required and unique, ``subPath``/``subPathExpr``,
  ``mountPropagation``, ``recursiveReadOnly`` with ``readOnly``,
  ``bindMountOptions``), ``volumeDevices``, ``restartPolicyRules``,
  ``imagePullPolicy``, resources
  (``podnuma.agent.validation_container``: every error), probes (one
  handler, an ``exec`` command), a container's ``restartPolicy``, host
  ports unique (app containers together, each init container alone; with
  ``hostNetwork`` the host port defaults to the container port and must
  equal it), an init container without ``restartPolicy: Always`` has no
  probes nor ``lifecycle``; the pod's ``restartPolicy``, ``dnsPolicy``,
  ``nodeSelector``, ``nodeName``, ``activeDeadlineSeconds`` (1 to
  2^31-1), ``hostname``, ``subdomain``, ``hostnameOverride``,
  ``readinessGates``, ``priorityClassName``, ``schedulingGroup`` (a
  ``podGroupName``, a DNS subdomain; not beside ``evictionResponders``); ephemeral containers
  (``validateEphemeralContainers``: each as any container, its name unique
  across every list, its ``targetContainerName``, the fields it may not
  have, ``subPath``), then no ``ephemeralContainers`` at all; no
  ``schedulingGates`` (their names checked: qualified names, unique); the pod-level ``resources`` (with the
  ``PodLevelResources`` gate), ``overhead`` and ``resourceClaims``
  entries (``podnuma.agent.validation_resources``). Go's JSON decoder runs first
  (``podnuma.agent.validation.go_decode``) on the fields above and those
  on the way to them, plus ``metadata.uid``, ``spec.nodeName``,
  ``serviceAccountName``, ``serviceAccount``, ``imagePullSecrets``,
  ``resourceClaims``, ``overhead``, pod-level ``resources``, every field
  of a container (init, app, ephemeral: ``command``, ``args``,
  ``workingDir``, ``stdin``, ``tty``... and below them, ``envFrom``'s
  ``prefix``, ``env`` ``valueFrom`` references, ``resources.claims``), the volume sources (each must be an object),
  ``secret.secretName``, ``configMap.name``, ``projected.sources`` and
  every other field of a source (``nfs.readOnly``, ``csi.fsType``...): a
  value of the wrong type there is refused in the decoder's words, its
  first error in its order (a YAML file's keys sorted, as the kubelet's
  YAML-to-JSON step writes them; a JSON file's as written), ``FILE: PATH:
  couldn't parse as pod(json: cannot unmarshal string into Go struct field
  Container.spec.containers.ports of type []v1.ContainerPort), please
  check config file`` (podnuma adds the field's path and line; a JSON
  number with a fraction or exponent is shown as Python writes it,
  ``1000.0`` for ``1e3``); a ``null`` is the zero value (absent), a
  ``null`` element of a list of objects an empty object (then validated:
  ``ports: [null]`` is ``containerPort: Required value``), of a list of
  strings or a map of strings ``""``. A quantity that does not parse
  (wherever it is) wins over a wrong type, as in Go (the quantity's error
  ends the decoding), as does an ``IntOrString`` its own decoder refuses
  and a ``metav1.Time`` (a managed field's ``time``, ``creationTimestamp``,
  ``deletionTimestamp``): no string, or no RFC 3339 time as Go's
  ``time.Parse`` reads it (``parsing time "x" as "2006-01-02T15:04:05Z07:00":
  cannot parse "x" as "2006"``).
  Every field of the spec (``schedulerName``, ``priority``,
  ``schedulingGroup``...), of the metadata and of the status
  (``conditions``, ``containerStatuses`` and below them) is decoded so
  too. A wrong type in any other field is not checked here (the kubelet
  refuses it; ``parse_pod`` refuses some in podnuma's words). Not checked
  (admitted by podnuma or refused in other words, refused by the kubelet):
  a map Go walks in no fixed order (a resource list, the
  containers' aggregate) gives its errors in the kubelet's order only
  when one key has any (podnuma walks the keys sorted);
* ``HasAPIObjectReference``: a pod naming a service account, a secret, a
  config map, a resource claim or a volume that needs the API server is
  refused (``static pods may not reference secrets``).

The UID
-------

Without ``metadata.uid`` the kubelet hashes (FNV-128a of
``hash.DeepHashObject``) the decoded, defaulted pod, then ``host:NODE`` and
``file:PATH``. podnuma hashes (BLAKE2b, the same 32 hex digits, not the
same value) a canonical JSON form of the decoded pod built to be equal
exactly when the kubelet's decoded pods are, as far as modelled:

* unknown fields dropped at any depth; a repeated key as decoded; key
  order and JSON-or-YAML spelling do not count; an empty struct held by
  value (``status: {}``, a container's ``resources: {}``) is the zero
  struct, as absent (a pointer's, a container's ``securityContext: {}``,
  is not nil);
* a ``null``, and an empty string (a Go string field; not the pointer
  fields ``runtimeClassName``, ``preemptionPolicy`` and a container's
  ``restartPolicy``), count as absent as a struct's field; a map's entry
  (labels, annotations, a node selector, a resource list, a flex volume's
  options...) always counts, a ``null`` one as its zero value (``""``, the
  zero quantity); so do ``false`` for ``hostNetwork``,
  ``hostPID``, ``hostIPC`` and a container's ``stdin``, ``stdinOnce``,
  ``tty``;
* the v1 defaults written out count as absent: the pod's ``restartPolicy``
  (Always), ``dnsPolicy`` (ClusterFirst), ``schedulerName``,
  ``terminationGracePeriodSeconds`` (30; a negative one is 1),
  ``enableServiceLinks`` (true), ``securityContext`` ({}); a container's
  ``imagePullPolicy`` (Always for an untagged or ``:latest`` image,
  IfNotPresent otherwise, also for a reference the distribution/reference
  grammar refuses: ``Nginx``, ``nginx:``, ``a//b``, a bad digest), ``terminationMessagePath``,
  ``terminationMessagePolicy``, a port's ``protocol`` (TCP), a probe's
  timeout, period and thresholds, an HTTP probe's ``path`` and ``scheme``,
  a ``fieldRef``'s ``apiVersion``, a ``fileKeyRef``'s ``optional: false``,
  a ``lifecycle`` handler's ``httpGet`` ``path`` and ``scheme``, with
  ``H2CContainerProbe`` an ``httpGet``'s ``protocol`` (HTTP1); with
  ``hostNetwork`` a port's ``hostPort`` (its ``containerPort``; a ``0``
  ``hostPort`` counts as absent); a volume without a source (an
  ``emptyDir``), a ``hostPath`` without ``type``, the ``defaultMode``
  (0644) of secret, config-map, downward-API and projected volumes, a
  token's ``expirationSeconds`` (3600), an image volume's ``pullPolicy``,
  the declarative defaults of iSCSI, RBD, ScaleIO and Azure-disk volumes;
  requests equal to the limits where the limits default them (init and
  app containers); without ``PodLevelResourcesFixDefaulting`` the
  pod-level requests and limits ``SetDefaults_Pod`` adds;
* a quantity (in a resource list, a divisor, a ``sizeLimit``) counts as
  apimachinery holds it, those of resource lists (the status's too:
  allocated resources, resources' limits and requests, of the pod and of
  each container status) once the v1 defaults have
  rounded them up to milli units (the hash prints its
  fields): an int64 amount or a decimal, the text the parser caches for a
  canonical spelling (none for ``1000m``, ``1.0``, ``64Mi``), the format:
  ``"1"`` and ``1`` alike, ``1000m`` and ``1.000`` alike, ``1`` and
  ``1.0`` not; a pod-level request ``SetDefaults_Pod`` sums from several
  containers holds no cached text (``Quantity.Add`` drops it), one copied
  from a single container or the limits keeps the parsed one's;
* a ``metav1.Time`` (``creationTimestamp``, ``deletionTimestamp``, a
  managed field's ``time``, the status's times) counts as the instant it
  stands for, to the nanosecond: two spellings of one instant (another
  zone's offset, a zero fraction) alike.

Not modelled (the kubelet's UID and podnuma's may then disagree on
whether an edit changed the pod): zero values written out for other
fields (``0``, ``false``, ``""`` in fields podnuma does not know to be
plain Go values), a
quantity written as a YAML float (counted by its float's text: go-yaml's
float written back by sigs.k8s.io/yaml may be spelled otherwise). A
quantity written as a JSON number counts as the quantity its text parses
to, as the kubelet's (``1e400``, ``1e3``, ``1.5`` as ``"1e400"``,
``"1e3"``, ``"1.5"``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from podnuma.agent.validation import (
    GoDecodeError,
    RepeatedKeys,
    StaticPodErrors,
    go_decode,
    int_or_string_form,
    occurrences,
    validate_static_pod,
)
from podnuma.agent.validation_kit import NulledQuantity, PodValidationOptions, go_lower
from podnuma.agent.validation_resources import pod_level_lists
from podnuma.api.featuregates import GATE_POD_LEVEL_RESOURCES
from podnuma.api.pod import Pod, PodLevelResources
from podnuma.api.pod_manifest import FeatureGateView, parse_pod
from podnuma.api.pod_schema import POD_TYPE, POINTER_FIELDS, GoType
from podnuma.api.pod_types import TYPE_META
from podnuma.api.pod_validation import required
from podnuma.api.quantity import Quantity, QuantityError, quantity_from_manifest
from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type
from podnuma.golang import rfc3339
from podnuma.golang.jsonnumbers import JSONFloat, go_json_integer, go_json_number
from podnuma.golang.jsonsyntax import go_json_syntax_error
from podnuma.golang.strconv import go_quote
from podnuma.inputs.documents import Document, load_json
from podnuma.inputs.limits import MANIFEST_LIMITS
from podnuma.inputs.surrogates import go_json_escapes

__all__ = ["StaticPod", "decode_static_pod"]


class StaticPod:
    """A decoded static pod: the pod (node-suffixed name, UID) and the
    digest of its canonical form (equal when the kubelet's decoded pods are)."""

    __slots__ = ("digest", "pod")

    def __init__(self, pod: Pod, digest: str) -> None:
        self.pod = pod
        self.digest = digest


# ---------------------------------------------------------------- reading


class _Forgetful(set[str]):
    """The keys a mapping already had, forgotten: go-yaml keeps the last."""

    def __contains__(self, key: object) -> bool:
        return False


def _load_yaml(text: str, name: str) -> tuple[Any, Any]:
    # the one bounded composer (size, depth, values, aliases) on the first
    # document's events, then values built as go-yaml v2 builds them, a
    # repeated key keeping its last value
    from podnuma.inputs.documents import _check_size
    from podnuma.inputs.goyaml import _Builder, compose_documents, go_sharp_v, null_scalar

    class _LastWins(_Builder):
        #: the value of the first null key met (``YAMLToJSON`` refuses it
        #: once go-yaml has decoded the whole document)
        null_key: str | None = None

        def _into(self, node: Any, out: dict[str, Any], explicit: set[str]) -> None:
            pairs: list[tuple[Any, Any]] = []
            for k, v in node.value:
                if isinstance(k, yaml.CollectionNode):
                    shown = go_sharp_v(k)
                    if shown is not None:  # (go-yaml's refusal, met in its order: the pairs before first)
                        super()._into(yaml.MappingNode(node.tag, pairs), out, _Forgetful())
                        raise InputError(f"couldn't parse as pod(yaml: invalid map key: {shown}), "
                                         "please check config file")
                elif null_scalar(k):
                    shown = go_sharp_v(v)
                    if shown is not None:
                        if self.null_key is None:
                            self.null_key = "<nil>" if shown == "interface {}(nil)" else shown
                        continue
                pairs.append((k, v))
            super()._into(yaml.MappingNode(node.tag, pairs), out, _Forgetful())

    _check_size(text, name, MANIFEST_LIMITS)
    try:
        docs = compose_documents(_first_document(text), MANIFEST_LIMITS)
    except yaml.YAMLError as e:
        if isinstance(e, yaml.MarkedYAMLError) and e.problem == "exceeded maximum nesting depth":
            # (libyaml's own bound, 1000 levels, met before podnuma's: go-yaml
            # reads 10000; podnuma's limit, in its words)
            raise InputError(f"nested more than {MANIFEST_LIMITS.max_depth} levels deep (podnuma reads no "
                             "deeper; the kubelet may)", file=name) from None
        raise _not_a_pod(f"yaml: {go_yaml_problem(e)}", name) from None
    except RecursionError:
        raise InputError(f"nested more than {MANIFEST_LIMITS.max_depth} levels deep", file=name) from None
    except InputError as e:
        raise _go_yaml_refusal(e).in_file(name) from None
    if not docs or docs[0] is None:
        return None, None
    builder = _LastWins()
    try:
        value = builder.value(docs[0])
    except InputError as e:
        raise _go_yaml_refusal(e).in_file(name) from None
    if builder.null_key is not None:
        # (sigs.k8s.io/yaml's convertToJSONableObject: a nil key's type and
        # value printed by %s and %+#v; podnuma words the first one met, Go
        # the first its walk of the maps, in no fixed order, meets)
        raise _not_a_pod(f"unsupported map key of type: %!s(<nil>), key: <nil>, value: {builder.null_key}", name)
    return value, docs[0]


#: a tag (``!``, then tag characters) holding ``,``, ``[`` or ``]``
_FLOW_IN_TAG = re.compile(r"![0-9A-Za-z\-;/?:@&=+$_.!~*'()%]*[,\[\]]")


def _first_document(text: str) -> Iterator[Any]:
    """The parser's events up to the end of the first document (go-yaml's
    ``Unmarshal`` parses no further: a later document's syntax is never
    looked at), then the stream's end."""
    from podnuma.inputs.goyaml import events

    # (libyaml skips U+FEFF at the start of any line; go-yaml's check looks
    # at its buffer's head, not at the character (``is_bom``): the BOM is
    # read as a character, as PyYAML's own parser reads it)
    # (go-yaml takes ``,``, ``[`` and ``]`` into a tag, in a flow
    # collection too, as PyYAML's own scanner does; libyaml 0.2.5 ends the
    # tag there)
    c_parser = bool(getattr(yaml, "__with_libyaml__", False)) and "\ufeff" not in text[1:] \
        and _FLOW_IN_TAG.search(text) is None
    for ev in events(text, c_parser=c_parser):
        yield ev
        if isinstance(ev, yaml.DocumentEndEvent):
            yield yaml.StreamEndEvent(ev.end_mark, ev.end_mark)
            return


def go_yaml_problem(e: yaml.YAMLError) -> str:
    """go-yaml's words for the parser's error ``e`` (``decode.go``
    ``parser.fail``; libyaml, which PyYAML's parser wraps, is what go-yaml
    ports, problems worded alike): the problem alone, without its context,
    after ``line N: `` where N is the problem's line counted from 0 (a
    quirk: one less than the line's number) but for a scanner's error
    (the line's number), or else the context's line counted from 0; no
    line when that is 0. A reader's error (``control characters are not
    allowed``) has no line."""
    if isinstance(e, yaml.reader.ReaderError):
        return str(e.reason)
    if not isinstance(e, yaml.MarkedYAMLError):
        return "unknown problem parsing YAML content"
    line = 0
    if e.problem_mark is not None and e.problem_mark.line != 0:
        line = e.problem_mark.line + (1 if isinstance(e, yaml.scanner.ScannerError) else 0)
    elif e.context_mark is not None and e.context_mark.line != 0:
        line = e.context_mark.line
    where = f"line {line}: " if line else ""
    problem = e.problem or "unknown problem parsing YAML content"
    for pattern, words in _PY_PROBLEMS:
        if pattern.match(problem):
            problem = words(e.context or "") if callable(words) else words
            break
    return where + problem


#: PyYAML's own parser's problems (used where libyaml reads otherwise than
#: go-yaml: ``_first_document``) in libyaml's words, which go-yaml's are
_PY_PROBLEMS: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(r"expected ',' or '\}', but got "), "did not find expected ',' or '}'"),
    (re.compile(r"expected ',' or '\]', but got "), "did not find expected ',' or ']'"),
    (re.compile(r"expected ' ', but found "), "did not find expected whitespace or line break"),
    (re.compile(r"expected <block end>, but found "),
     lambda context: "did not find expected '-' indicator" if "collection" in context else "did not find expected key"),
    (re.compile(r"expected '<document start>', but found "), "did not find expected <document start>"),
    (re.compile(r"expected alphabetic or numeric character, but found "),
     "did not find expected alphabetic or numeric character"),
    (re.compile(r"mapping values are not allowed here"), "mapping values are not allowed in this context"),
    (re.compile(r"found character .* that cannot start any token"), "found character that cannot start any token"),
    (re.compile(r"found unknown escape character"), "found unknown escape character"),
    (re.compile(r"expected '!', but found "), "did not find expected '!'"),
    (re.compile(r"expected '>', but found "), "did not find the expected '>'"),
    (re.compile(r"expected URI, but found "), "did not find expected tag URI"),
    (re.compile(r"expected a comment or a line break, but found "), "did not find expected comment or line break"),
]


#: the refusals of the composer and the value builder worded as go-yaml's
#: (podnuma's own words after ``invalid YAML: ``, or as they are), in
#: go-yaml's words: its message has no line
_GO_YAML_WORDS = re.compile(
    r"(?:invalid YAML: )?(cannot decode !!\S+ `.*` as a !!\S+|map merge requires map or sequence of maps as "
    r"the value|unknown anchor '.*' referenced|anchor '.*' value contains itself"
    r"|!!binary value contains invalid base64 data)"
    r"(?: \(line \d+, column \d+\))?\Z", re.S)


def _go_yaml_refusal(e: InputError) -> InputError:
    """``e`` (the composer's or the value builder's refusal) in the file
    source's words when go-yaml refuses the same (``yaml: unknown anchor
    'x' referenced`` inside ``couldn't parse as pod(…)``), its field path
    kept; as it is otherwise (podnuma's own bounds)."""
    m = _GO_YAML_WORDS.match(e.message)
    if m is None:
        return e
    return InputError(f"couldn't parse as pod(yaml: {m.group(1)}), please check config file",
                      path=e.path, file=e.file)


def _merge_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    owned: dict[int, dict[str, Any]] = {}  # (the merged objects built here, changed in place)
    for k, v in pairs:
        old = out.get(k)
        out[k] = _merged(old, v, owned) if isinstance(old, dict) and isinstance(v, dict) else v
    # (a repeated key: every occurrence kept, for the decoder to meet in turn)
    return RepeatedKeys(out, pairs) if len(out) < len(pairs) else out


#: a count of the entries :func:`_merged` copies or meets (the tests check
#: it grows linearly with the input)
MERGE_WORK = [0]


def _merged(old: dict[str, Any], new: dict[str, Any], owned: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """``new`` merged into ``old``: into ``old`` itself when this merge
    built it (``owned``), else into a copy (the objects as read stay as
    they are: the decoder meets each occurrence)."""
    if owned.get(id(old)) is not old:
        MERGE_WORK[0] += len(old)
        old = dict(old)
        owned[id(old)] = old
    MERGE_WORK[0] += len(new)
    for k, v in new.items():
        prev = old.get(k)
        old[k] = _merged(prev, v, owned) if isinstance(prev, dict) and isinstance(v, dict) else v
    return old


def _load_json(text: str, name: str, raw: bytes | None = None) -> Any:
    """The bounded JSON reader, an object's repeated key merged as Go's
    decoder merges it (:func:`_merge_pairs`). ``raw``: the file's bytes,
    when ``text`` was decoded from them (Go's scanner quotes the byte it
    stops at, not the U+FFFD an invalid one is read as)."""
    # (a lone surrogate's escape is U+FFFD to Go's decoder)
    # (and a number past the float range is a number to it: go_json_number;
    # -0 is an int that remembers its sign: a quantity's text, "-0")
    try:
        return load_json(go_json_escapes(text), name=name, limits=MANIFEST_LIMITS, pairs=_merge_pairs,
                         numbers=_json_number, integers=_json_integer)
    except InputError:
        # (text that is no JSON: the decoder's check of the whole text
        # finds it first, and the kubelet shows Go's SyntaxError)
        why = go_json_syntax_error(text if raw is None else raw)
        if why is None:
            raise
    raise _not_a_pod(f"couldn't get version/kind; json parse error: {why}", name) from None


def _json_integer(text: str) -> int | JSONFloat:
    """A JSON integer as Go's decoder sees it (:func:`go_json_integer`:
    ``-0`` keeps its sign for a quantity's text; past Python's digits
    limit the reader refuses it, as before)."""
    return go_json_integer(text, 0)


def _json_number(text: str) -> float:
    """A JSON number with a fraction or an exponent as Go's decoder sees it
    (:func:`go_json_number`), always with its text (a :class:`JSONFloat`,
    ``1.5`` too): a quantity counts for the UID as its text parses
    (``Quantity.UnmarshalJSON``), the same as the string ``"1.5"``."""
    value = go_json_number(text)
    if type(value) is JSONFloat:
        return value
    number = JSONFloat(value)
    number.text = text
    return number


#: the white space Go's ``unicode.IsSpace`` knows (``hasJSONPrefix`` skips it)
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
    "\u2028\u2029\u202f\u205f\u3000"


def _json_white_space(text: str, name: str) -> None:
    """Go's JSON decoder skips only space, tab, CR and LF: the kubelet
    sends a text to it when ``{`` follows any of ``unicode.IsSpace``'s
    white space (``\\v``, U+0085, U+2028...), and it refuses the first
    other one, quoting its first byte as a rune (``scanner.go``
    ``quoteChar``: ``'Â'`` for U+0085's 0xC2)."""
    rest = text.lstrip(" \t\r\n")
    if rest.startswith("{"):
        return
    first = rest[0].encode("utf-8", "surrogateescape")[0]
    shown = "'\\''" if first == 0x27 else "'\"'" if first == 0x22 else "'" + go_quote(chr(first))[1:-1] + "'"
    raise _not_a_pod(f"couldn't get version/kind; json parse error: invalid character {shown} "
                     "looking for beginning of value", name)


def _go_json(data: Any, limit: int = 200) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


# core/v1 kinds the legacy scheme decodes (to something that is not a pod)
_CORE_KINDS = frozenset({
    "Binding", "ComponentStatus", "ComponentStatusList", "ConfigMap", "ConfigMapList",
    "Endpoints", "EndpointsList", "Event", "EventList", "LimitRange", "LimitRangeList", "List",
    "Namespace", "NamespaceList", "Node", "NodeList", "PersistentVolume", "PersistentVolumeClaim",
    "PersistentVolumeClaimList", "PersistentVolumeList", "PodList", "PodTemplate",
    "PodTemplateList", "ReplicationController", "ReplicationControllerList", "ResourceQuota",
    "ResourceQuotaList", "Secret", "SecretList", "Service", "ServiceAccount",
    "ServiceAccountList", "ServiceList",
})
_GO_TYPES = {bool: "bool", int: "number", float: "number", JSONFloat: "number", str: "string", list: "array"}


# Go's encoding/json (the v1 decoder of Go 1.26) matches an object key to a
# struct field by a fold: ASCII letters compared without case, any other
# rune by the smallest rune of its Unicode simple-fold orbit. Of the runes
# outside ASCII only the Kelvin sign (orbit K, k) and the long s (orbit S,
# s) fold to a letter of ``kind`` or ``apiVersion``; every other one folds
# to a rune outside ASCII and so never matches these two names.
_FOLD_TO_ASCII = {0x212A: "K", 0x017F: "S"}
_ASCII_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


def _go_fold(key: str) -> str:
    return key.translate(_FOLD_TO_ASCII).translate(_ASCII_UPPER)


_TYPE_META = {"KIND": "kind", "APIVERSION": "apiVersion"}


def _not_a_pod(why: str, name: str) -> InputError:
    return InputError(f"couldn't parse as pod({why}), please check config file", file=name)


def _check_kind(data: Any, text: str, is_json: bool, name: str) -> dict[str, Any]:
    """The decoder's type check (``runtime.Decode`` and the cast to a pod)."""
    shown = _go_json(data) if not is_json else (text.strip() if len(text) <= 200 else text[:200] + "…")
    if data is None:
        raise _not_a_pod("Object 'Kind' is missing in 'null'", name)
    if not isinstance(data, dict):
        raise _not_a_pod(
            f"couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{_GO_TYPES.get(type(data), 'value')} into Go value of type struct "
            '{ APIVersion string "json:\\"apiVersion,omitempty\\""; '
            'Kind string "json:\\"kind,omitempty\\"" }', name)
    # (every occurrence, in the order the decoder meets them; a null one
    # leaves a string field as it was)
    # (the type meta is read with the standard library's decoder, which
    # matches a key to a field ignoring case: ``KIND`` and ``Kind`` count,
    # the last one met wins)
    found: dict[str, Any] = {}
    wrong: tuple[str, Any] | None = None  # (the first value that is not a string: refused)
    for key, value in occurrences(data, is_json):
        field = _TYPE_META.get(_go_fold(key))
        if field is not None and value is not None:
            found[field] = value
            if wrong is None and not isinstance(value, str):
                wrong = (field, value)
    if wrong is not None:
        raise _not_a_pod(
            f"couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{_GO_TYPES.get(type(wrong[1]), 'object')} into Go struct field .{wrong[0]} of type string", name)
    kind, version = found.get("kind"), found.get("apiVersion")
    if not kind:
        raise _not_a_pod(f"Object 'Kind' is missing in '{shown}'", name)
    if not version:
        raise _not_a_pod(f"Object 'apiVersion' is missing in '{shown}'", name)
    if version != "v1" or (kind != "Pod" and kind not in _CORE_KINDS):
        raise _not_a_pod(
            f'no kind {go_quote(kind)} is registered for version {go_quote(version)} in scheme '
            '"pkg/runtime/scheme.go:111"', name)
    if kind != "Pod":
        raise _not_a_pod(f"invalid pod: &core.{kind}{{…}}", name)
    if data.get("kind") == kind and data.get("apiVersion") == version \
            and not isinstance(data, RepeatedKeys):
        return data
    # (what follows reads the exact keys: the winning values go there, the
    # pod's type being the one the look-up found)
    merged = {k: v for k, v in data.items() if k not in ("kind", "apiVersion")}
    merged.update(apiVersion=version, kind=kind)
    if isinstance(data, RepeatedKeys):
        return RepeatedKeys(merged, [(k, v) for k, v in data.pairs if k not in ("kind", "apiVersion")]
                            + [("apiVersion", version), ("kind", kind)])
    return merged


# ---------------------------------------------------------------- lenient fields

# the fields of each level podnuma knows are the v1 API's
# (podnuma.api.pod_manifest): the lenient decoder drops every other one
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _lenient(doc: dict[str, Any]) -> dict[str, Any]:
    """The document without the fields the lenient decoder drops: every
    key, at any depth, that is no field of its Go struct by its exact name
    (``sigs.k8s.io/json``; the pod's ``apiVersion`` and ``kind`` kept)."""
    out = _known_only(doc, POD_TYPE)
    assert isinstance(out, dict)
    return out


def _known_only(raw: Any, t: GoType) -> Any:
    """``raw`` (of the Go type ``t``) without the unknown fields of its
    structs: copies of the mappings and lists on the way (a repeated key's
    pairs kept for the known keys)."""
    kind = t.kind
    if kind == "struct":
        if not isinstance(raw, dict):
            return raw
        fields = t.fields
        top = t is POD_TYPE

        def keep(k: str, v: Any) -> Any:
            field = fields.get(k)
            return v if field is None or v is None else _known_only(v, field[0])

        out = {k: keep(k, v) for k, v in raw.items() if k in fields or (top and k in TYPE_META)}
        if isinstance(raw, RepeatedKeys):
            return RepeatedKeys(out, [(k, keep(k, v)) for k, v in raw.pairs
                                      if k in fields or (top and k in TYPE_META)])
        return out
    if kind == "slice" and isinstance(raw, list) and t.elem is not None and t.elem.kind == "struct":
        elem = t.elem
        return [_known_only(v, elem) for v in raw]
    return raw


# ---------------------------------------------------------------- checks


def _check_images(spec: Mapping[str, Any]) -> None:
    for key in _CONTAINER_LISTS:
        ctrs = spec.get(key)
        if not isinstance(ctrs, list):
            continue
        for i, c in enumerate(ctrs):
            if not isinstance(c, Mapping):
                continue
            image = c.get("image")
            if image is not None and not isinstance(image, str):
                raise wrong_type(f"spec.{key}[{i}].image", "a string", image)
            if not (image or "").strip():
                raise required(f"spec.{key}[{i}].image")


def _present(m: Any, *keys: str) -> bool:
    for k in keys:
        if not isinstance(m, Mapping):
            return False
        m = m.get(k)
    return m is not None


_NO_API_VOLUMES = frozenset({
    "awsElasticBlockStore", "azureDisk", "cephfs", "cinder", "downwardAPI", "emptyDir", "fc",
    "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "hostPath", "image", "iscsi", "nfs",
    "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos",
    "vsphereVolume",
})
_API_VOLUMES = {
    "configMap": "configmaps (via configmap volumes)", "secret": "secrets (via secret volumes)",
    "csi": "csidrivers (via CSI volumes)", "glusterfs": "endpoints (via glusterFS volumes)",
    "persistentVolumeClaim": "persistentvolumeclaims",
    "ephemeral": "persistentvolumeclaims (via ephemeral volumes)",
    "azureFile": "secrets (via azureFile volumes)",
}
_PROJECTED = {
    "configMap": "configmaps (via projected volumes)", "secret": "secrets (via projected volumes)",
    "serviceAccountToken": "serviceaccounts (via projected volumes)",
    "clusterTrustBundle": "clustertrustbundles", "podCertificate": "podcertificates",
}
# volume sources naming a secret (VisitPodSecretNames)
_SECRET_REFS = (("azureFile", "secretName"), ("cephfs", "secretRef"), ("cinder", "secretRef"),
                ("flexVolume", "secretRef"), ("rbd", "secretRef"), ("secret", "secretName"),
                ("scaleIO", "secretRef"), ("iscsi", "secretRef"), ("storageos", "secretRef"),
                ("csi", "nodePublishSecretRef"))


def _named(m: Any, *keys: str) -> bool:
    """The reference at ``keys`` names something (the visitors skip empty names)."""
    for k in keys:
        if not isinstance(m, Mapping):
            return False
        m = m.get(k)
    return bool(m)


def _containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for key in _CONTAINER_LISTS:
        out.extend(c for c in _list(spec, key) if isinstance(c, Mapping))
    return out


def _list(m: Any, key: str) -> list[Any]:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, list) else []


def _api_reference(spec: Mapping[str, Any]) -> str:
    """What ``HasAPIObjectReference`` (``pkg/api/pod/util.go``) names, or ""."""
    if spec.get("serviceAccountName") or spec.get("serviceAccount"):
        return "serviceaccounts"
    ctrs = _containers(spec)
    volumes = [v for v in _list(spec, "volumes") if isinstance(v, Mapping)]
    secrets = any(_named(r, "name") for r in _list(spec, "imagePullSecrets"))
    secrets = secrets or any(
        _named(e, "secretRef", "name") for c in ctrs for e in _list(c, "envFrom")
    ) or any(_named(e, "valueFrom", "secretKeyRef", "name") for c in ctrs for e in _list(c, "env"))
    secrets = secrets or any(_named(v, src, ref, *(() if ref.endswith("Name") else ("name",)))
                             for v in volumes for src, ref in _SECRET_REFS)
    secrets = secrets or any(_named(s, "secret", "name") for v in volumes
                             for s in _list(v.get("projected"), "sources"))
    if secrets:
        return "secrets"
    maps = any(_named(e, "configMapRef", "name") for c in ctrs for e in _list(c, "envFrom")) or any(
        _named(e, "valueFrom", "configMapKeyRef", "name") for c in ctrs for e in _list(c, "env"))
    maps = maps or any(_named(v, "configMap", "name") for v in volumes) or any(
        _named(s, "configMap", "name") for v in volumes for s in _list(v.get("projected"), "sources"))
    if maps:
        return "configmaps"
    if spec.get("resourceClaims"):
        return "resourceclaims"
    for v in volumes:
        sources = {k for k, val in v.items() if k != "name" and val is not None}
        if not sources or sources & _NO_API_VOLUMES:
            continue  # (no source: defaulted to an emptyDir)
        for src, what in _API_VOLUMES.items():
            if src in sources:
                return what
        if "projected" in sources:
            for s in _list(v["projected"], "sources"):
                for src, what in _PROJECTED.items():
                    if _present(s, src):
                        return what
    return ""


def _pod_level(spec: Mapping[str, Any], gates: FeatureGateView) -> PodLevelResources:
    """``spec.resources`` as the kubelet decodes it, once ``ValidatePodCreate``
    (``validatePodResources``: ``podnuma.agent.validation_resources``) has
    accepted it: each quantity rounded up to milli, no defaulting (the
    registry's ``PrepareForCreate`` never runs) unless
    ``PodLevelResourcesFixDefaulting`` is off (then ``SetDefaults_Pod``'s)."""
    limits, requests = pod_level_lists(spec, legacy_defaulting=PodValidationOptions(gates).legacy_pod_defaulting)
    return PodLevelResources(requests=requests, limits=limits)


# ---------------------------------------------------------------- canonical form

_POINTER_STRINGS = frozenset({"runtimeClassName", "preemptionPolicy"})
_PLAIN_FALSE_SPEC = frozenset({"hostNetwork", "hostPID", "hostIPC"})
_PLAIN_FALSE_CONTAINER = frozenset({"stdin", "stdinOnce", "tty"})


#: the fields that are Go maps (of strings or quantities) in the objects
#: the canonical form keeps: a map's entry always exists once decoded, a
#: ``null`` one holding the zero value
_GO_MAPS = frozenset({
    "labels", "annotations", "nodeSelector", "requests", "limits", "overhead", "matchLabels",
    "volumeAttributes", "allocatedResources", "options",
})
#: a quantity map's entry decoded from ``null``: the zero ``Quantity``
#: (int64 amount 0, no cached text, no format)
_ZERO_QUANTITY = "quantity:int64:0e0::"


def _squeeze(v: Any, keep_empty: frozenset[str] = frozenset()) -> Any:
    """Nulls and empty strings (Go's zero values) as absent: a struct's
    fields; a map's entries stay (``""`` for a ``null`` one, the zero
    value, told from a quantity's text by :func:`_qty_list`)."""
    if isinstance(v, dict):
        return {k: _squeeze_map(x) if k in _GO_MAPS and isinstance(x, dict) else _squeeze(x)
                for k, x in v.items() if x is not None and (x != "" or k in keep_empty)}
    if isinstance(v, list):
        return [_squeeze(x) for x in v]
    return v


def _squeeze_map(m: dict[str, Any]) -> dict[str, Any]:
    return {k: "" if x is None else _squeeze(x) for k, x in m.items()}


def _qty_form(q: Quantity) -> str:
    """A quantity as the kubelet's hash sees it: the hash prints the
    ``resource.Quantity`` struct's fields (its methods disabled), so what
    counts is how apimachinery holds it: an int64 amount (value, scale) or
    an ``inf.Dec``, the cached text (kept by the parser only for a
    canonical spelling, dropped by ``Add``: a sum has none), the format."""
    dec, unscaled, exponent = q._go_rep()
    return f"quantity:{'dec' if dec else 'int64'}:{unscaled}e{exponent}:{q._text or ''}:{q.format.value}"


def _milli_form(q: Quantity) -> str:
    """A resource list's quantity once the v1 defaults have rounded it up to
    milli units (``SetDefaults_ResourceList`` calls ``RoundUp(-3)`` on every
    entry of a container's requests and limits, the pod's overhead and
    pod-level resources): an int64 amount already that coarse is left with
    its cached text; any other loses the text and takes scale -3 (an
    ``inf.Dec`` always loses the text)."""
    dec, _, exponent = q._go_rep()
    if not dec and exponent >= -3:
        return _qty_form(q)
    r = q.round_up(-3)
    rdec, unscaled, rexp = r._go_rep()
    return f"quantity:{'dec' if rdec else 'int64'}:{unscaled}e{rexp}::{r.format.value}"


def _qty_text(v: Any, milli: bool = False) -> Any:
    # (a JSON number kept with its text, 1e400 and 1e3 among them, is the
    # quantity its text parses to, as Quantity.UnmarshalJSON parses it)
    if isinstance(v, str | int | JSONFloat) and not isinstance(v, bool):
        try:
            q = quantity_from_manifest(v)
        except QuantityError:
            return v.strip() if isinstance(v, str) else str(v)
        return _milli_form(q) if milli else _qty_form(q)
    if isinstance(v, bool) or not isinstance(v, float):
        return v
    return repr(v)  # (a number with a fraction: by its text)


def _qty_list(raw: Any) -> Any:
    # (an entry "" or null: decoded from null, the zero quantity; no text parses as "")
    return {k: _ZERO_QUANTITY if x == "" or x is None else _qty_text(x, milli=True)
            for k, x in raw.items()} if isinstance(raw, dict) else raw


# The image reference grammar of github.com/distribution/reference v0.6.0
# (what ``parsers.ParseImageName`` reads), rebuilt here: a name (an
# optional registry host with port, then slash-separated lowercase path
# components), an optional ``:tag``, an optional ``@algorithm:hex`` digest.
_REF_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REF_HOST_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_REF_HOST = rf"(?:{_REF_HOST_LABEL}(?:\.{_REF_HOST_LABEL})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_REF_PATH = rf"{_REF_COMPONENT}(?:/{_REF_COMPONENT})*"
_REF_NAME = rf"(?:{_REF_HOST}/)?{_REF_PATH}"
_REF_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}"
_REFERENCE = re.compile(rf"({_REF_NAME})(?::([A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}))?(?:@({_REF_DIGEST}))?", re.ASCII)
_REF_SPLIT = re.compile(rf"(?:({_REF_HOST})/)?({_REF_PATH})", re.ASCII)
#: the digest algorithms the kubelet can check, by the length of their hex
_DIGEST_HEX = {"sha256": 64, "sha384": 96, "sha512": 128}


def _digest_ok(digest: str) -> bool:
    """go-digest's ``Parse``: a known algorithm, lowercase hex of its length."""
    algorithm, _, encoded = digest.partition(":")
    size = _DIGEST_HEX.get(algorithm)
    return size is not None and len(encoded) == size and re.fullmatch(r"[a-f0-9]+", encoded) is not None


def _image_tag(image: str) -> str:
    """The tag ``parsers.ParseImageName`` gives ``image`` (``latest`` for a
    name with neither tag nor digest), or "" when it cannot parse it."""
    if re.fullmatch(r"[a-f0-9]{64}", image):
        return ""  # (a bare image ID is refused)
    # the Docker Hub normalization: a first element that is no registry
    # host (no ".", ":", not "localhost", all lowercase) belongs to
    # docker.io; a single-element name is an official "library/" image
    first, slash, rest = image.partition("/")
    if not slash:
        domain, remainder = "docker.io", "library/" + image
    elif first == "localhost" or any(ch in first for ch in ".:") or first.lower() != first:
        domain, remainder = ("docker.io" if first == "index.docker.io" else first), rest
    else:
        domain, remainder = "docker.io", image
    if domain == "docker.io" and "/" not in remainder:
        remainder = "library/" + remainder
    if remainder.partition(":")[0].lower() != remainder.partition(":")[0]:
        return ""  # (the repository must be lowercase)
    m = _REFERENCE.fullmatch(f"{domain}/{remainder}")
    if m is None:
        return ""
    split = _REF_SPLIT.fullmatch(m.group(1))
    if split is None or len(split.group(2)) > 255:
        return ""
    tag, digest = m.group(2) or "", m.group(3) or ""
    if digest and not _digest_ok(digest):
        return ""
    return tag or ("" if digest else "latest")


def _pull_policy(image: Any) -> str:
    """``SetDefaults_Container``: Always for the ``latest`` tag (also the
    tag of an image named without tag nor digest), IfNotPresent otherwise
    (also for a reference that does not parse: the defaulting ignores the
    parser's error and sees no tag)."""
    return "Always" if isinstance(image, str) and _image_tag(image) == "latest" else "IfNotPresent"


def _http_get(handler: Any, h2c: bool) -> None:
    """``SetDefaults_HTTPGetAction`` (and, with ``H2CContainerProbe``, the
    ``HTTP1`` protocol) on a handler's ``httpGet``."""
    get = handler.get("httpGet") if isinstance(handler, dict) else None
    if isinstance(get, dict):
        get.setdefault("path", "/")
        get.setdefault("scheme", "HTTP")
        if h2c:
            get.setdefault("protocol", "HTTP1")


def _probe(p: Any, h2c: bool = False) -> Any:
    if not isinstance(p, dict):
        return p
    for key, default in (("timeoutSeconds", 1), ("periodSeconds", 10),
                         ("successThreshold", 1), ("failureThreshold", 3)):
        if not p.get(key):
            p[key] = default
    _http_get(p, h2c)
    return p


def _canonical_container(c: Any, *, requests_from_limits: bool, host_network: bool = False,
                         h2c: bool = False) -> Any:
    if not isinstance(c, dict):
        return c
    restart = c.get("restartPolicy")
    c = _squeeze(c)
    if restart == "":
        c["restartPolicy"] = ""  # (a pointer: "" is not absent)
    for key in _PLAIN_FALSE_CONTAINER:
        if c.get(key) is False:
            del c[key]
    c.setdefault("imagePullPolicy", _pull_policy(c.get("image")))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    for port in _list(c, "ports"):
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if host_network and not port.get("hostPort"):  # (defaultHostNetworkPorts)
                port["hostPort"] = port.get("containerPort") or 0
            if port.get("hostPort") == 0:
                del port["hostPort"]
    for env in _list(c, "env"):
        source = env.get("valueFrom") if isinstance(env, dict) else None
        ref = source.get("fieldRef") if isinstance(source, dict) else None
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")
        _divisor(source)
        file_ref = source.get("fileKeyRef") if isinstance(source, dict) else None
        if isinstance(file_ref, dict) and file_ref.get("optional") is False:
            del file_ref["optional"]
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        if key in c:
            c[key] = _probe(c[key], h2c)
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        for key in ("postStart", "preStop"):
            _http_get(lifecycle.get(key), h2c)
    res = c.get("resources")
    if isinstance(res, dict):
        for key in ("requests", "limits"):
            if key in res:
                res[key] = _qty_list(res[key])
        lim = res.get("limits")
        if requests_from_limits and isinstance(lim, dict):
            req = res.setdefault("requests", {})
            if isinstance(req, dict):
                for k, v in lim.items():
                    req.setdefault(k, v)
    return c


_VOLUME_MODES = ("secret", "configMap", "downwardAPI", "projected")  # (defaultMode 0644)
#: declarative defaults of volume sources (``SetObjectDefaults_Pod``)
_SOURCE_DEFAULTS: dict[str, dict[str, Any]] = {
    "iscsi": {"iscsiInterface": "default"},
    "rbd": {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
    "scaleIO": {"storageMode": "ThinProvisioned", "fsType": "xfs"},
    "azureDisk": {"cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False, "kind": "Shared"},
}


def _divisor(holder: Any) -> None:
    """A ``resourceFieldRef``'s divisor as apimachinery holds it (like a
    resource list's quantity, not rounded: no defaulting touches it)."""
    ref = holder.get("resourceFieldRef") if isinstance(holder, dict) else None
    if isinstance(ref, dict) and "divisor" in ref:
        d = ref["divisor"]
        if isinstance(d, NulledQuantity):
            # (a null after a value: a zero amount, the earlier text and format)
            q = quantity_from_manifest(str(d))
            ref["divisor"] = f"quantity:int64:0e0:{q._text or ''}:{q.format.value}"
        else:
            ref["divisor"] = _qty_text(d)


def _field_refs(items: Any) -> None:
    for item in items if isinstance(items, list) else []:
        ref = item.get("fieldRef") if isinstance(item, dict) else None
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")
        _divisor(item)


def _canonical_volume(v: dict[str, Any]) -> None:
    """A volume's v1 defaults: no source an ``emptyDir``; a ``hostPath``
    type; the modes of secret, config map, downward-API and projected
    volumes (0644), a field reference's ``apiVersion``, a token's
    ``expirationSeconds`` (3600), an image volume's ``pullPolicy`` (by its
    tag), the declarative defaults of iSCSI, RBD, ScaleIO and Azure disks."""
    if not any(k != "name" for k in v):
        v["emptyDir"] = {}
    host = v.get("hostPath")
    if isinstance(host, dict):
        host.setdefault("type", "")
    empty = v.get("emptyDir")
    if isinstance(empty, dict) and "sizeLimit" in empty:
        empty["sizeLimit"] = _qty_text(empty["sizeLimit"])  # (as a resource list's, not rounded)
    for key in _VOLUME_MODES:
        source = v.get(key)
        if isinstance(source, dict):
            source.setdefault("defaultMode", 0o644)
    downward = v.get("downwardAPI")
    if isinstance(downward, dict):
        _field_refs(downward.get("items"))
    for projection in _list(v.get("projected"), "sources"):
        if not isinstance(projection, dict):
            continue
        if isinstance(projection.get("downwardAPI"), dict):
            _field_refs(projection["downwardAPI"].get("items"))
        token = projection.get("serviceAccountToken")
        if isinstance(token, dict):
            token.setdefault("expirationSeconds", 3600)
    image = v.get("image")
    if isinstance(image, dict) and not image.get("pullPolicy"):
        image["pullPolicy"] = _pull_policy(image.get("reference"))
    for key, defaults in _SOURCE_DEFAULTS.items():
        source = v.get(key)
        if isinstance(source, dict):
            for k, default in defaults.items():
                if source.get(k) in (None, ""):
                    source[k] = default


def _status_lists(status: Any) -> None:
    """The status's resource lists rounded up to milli as the v1 defaults
    round them (``SetObjectDefaults_Pod``): the pod's and each container
    status's allocated resources and resources' limits and requests."""
    if not isinstance(status, dict):
        return
    holders = [status]
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        holders.extend(x for x in _list(status, key) if isinstance(x, dict))
    for holder in holders:
        if "allocatedResources" in holder:
            holder["allocatedResources"] = _qty_list(holder["allocatedResources"])
        res = holder.get("resources")
        if isinstance(res, dict):
            for key in ("limits", "requests"):
                if key in res:
                    res[key] = _qty_list(res[key])


def _instant(text: Any) -> Any:
    """A ``metav1.Time``'s text as the kubelet's hash sees it: the instant
    (``UnmarshalJSON`` parses it and turns it to local time; the hash prints
    the ``time.Time`` struct: seconds and nanoseconds, one location for
    every value), so ``10:00:00+02:00`` and ``08:00:00Z`` are alike and a
    fraction counts (its first nine digits, as ``time.Parse`` keeps them)."""
    got = rfc3339.instant(text) if isinstance(text, str) else None
    if got is None:
        return text
    seconds, nanos = got
    return f"time:{seconds}.{nanos:09d}"


def _status_times(status: Any) -> None:
    """The times of a pod's status (its start, its conditions', its
    container states', its volumes' health) as instants."""
    if not isinstance(status, dict):
        return
    if "startTime" in status:
        status["startTime"] = _instant(status["startTime"])
    for key, fields in (("conditions", ("lastProbeTime", "lastTransitionTime")),
                        ("volumeHealth", ("lastTransitionTime",))):
        for entry in _list(status, key):
            if isinstance(entry, dict):
                for f in fields:
                    if f in entry:
                        entry[f] = _instant(entry[f])
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        for cs in _list(status, key):
            for state_key in ("state", "lastState") if isinstance(cs, dict) else ():
                state = cs.get(state_key)
                for phase in ("running", "terminated") if isinstance(state, dict) else ():
                    held = state.get(phase)
                    for f in ("startedAt", "finishedAt") if isinstance(held, dict) else ():
                        if f in held:
                            held[f] = _instant(held[f])


def _meta_times(meta: Any) -> None:
    """The times of an ``ObjectMeta`` (``creationTimestamp``,
    ``deletionTimestamp``, each managed field's ``time``) as instants."""
    if not isinstance(meta, dict):
        return
    for key in ("creationTimestamp", "deletionTimestamp"):
        if key in meta:
            meta[key] = _instant(meta[key])
    for entry in _list(meta, "managedFields"):
        if isinstance(entry, dict) and "time" in entry:
            entry["time"] = _instant(entry["time"])


def _canonical(doc: dict[str, Any], gates: FeatureGateView | None = None) -> dict[str, Any]:
    """The decoded, defaulted pod as podnuma models it (see the module's
    docstring): equal exactly when the kubelet's are, as far as modelled
    (``gates``: the kubelet's, for the defaults that follow them)."""
    h2c = gates is not None and gates.enabled("H2CContainerProbe")
    out: dict[str, Any] = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind")}
    out = _squeeze(out)
    _meta_times(out.get("metadata"))
    spec = out.get("spec")
    if isinstance(spec, dict):
        given = doc.get("spec")
        raw_spec: dict[str, Any] = given if isinstance(given, dict) else {}
        for key in _POINTER_STRINGS:
            if raw_spec.get(key) == "":
                spec[key] = ""
        for key in _PLAIN_FALSE_SPEC:
            if spec.get(key) is False:
                del spec[key]
        for key in _CONTAINER_LISTS:
            if isinstance(spec.get(key), list):
                raw_list = _list(raw_spec, key)
                spec[key] = [
                    _canonical_container(
                        {**c, **({"restartPolicy": ""} if i < len(raw_list) and isinstance(raw_list[i], dict)
                                 and raw_list[i].get("restartPolicy") == "" else {})}
                        if isinstance(c, dict) else c,
                        requests_from_limits=key != "ephemeralContainers", h2c=h2c,
                        host_network=key != "ephemeralContainers" and spec.get("hostNetwork") is True)
                    for i, c in enumerate(spec[key])
                ]
        if not spec.get("serviceAccountName"):
            spec.pop("serviceAccountName", None)
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("securityContext", {})
        grace = spec.setdefault("terminationGracePeriodSeconds", 30)
        if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
            spec["terminationGracePeriodSeconds"] = 1
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("enableServiceLinks", True)
        for v in _list(spec, "volumes"):
            if isinstance(v, dict):
                _canonical_volume(v)
        for key in ("overhead",):
            if key in spec:
                spec[key] = _qty_list(spec[key])
        res = spec.get("resources")
        if isinstance(res, dict):
            for key in ("requests", "limits"):
                if key in res:
                    res[key] = _qty_list(res[key])
            if gates is not None and PodValidationOptions(gates).legacy_pod_defaulting:
                # (SetDefaults_Pod's pod-level defaulting: what it adds)
                limits, requests = pod_level_lists(doc.get("spec") or {}, legacy_defaulting=True)
                for key, got in (("requests", requests), ("limits", limits)):
                    written = res.get(key)
                    had: dict[str, Any] = written if isinstance(written, dict) else {}
                    # (a copy of one container's or the limits' quantity
                    # as parsed; a sum of several, computed: no cached text)
                    added = {k: _milli_form(q) for k, q in got.items() if k not in had}
                    if added:
                        res[key] = {**had, **added}
    _status_lists(out.get("status"))
    _status_times(out.get("status"))
    _drop_empty_structs(out, POD_TYPE)
    return out


def _drop_empty_structs(doc: dict[str, Any], t: GoType) -> None:
    """An empty struct held by value (``status: {}``, a container's
    ``resources: {}``, one left empty by an unknown field dropped) as
    absent, as the kubelet's decoded pod has it: the zero struct either
    way (a pointer's empty struct is not nil: it stays)."""
    prefix = t.name.removeprefix("v1.")
    for k in list(doc):
        field = t.fields.get(k)
        if field is None:
            continue
        ft, go = field
        v = doc[k]
        if ft.kind == "struct" and isinstance(v, dict):
            _drop_empty_structs(v, ft)
            if not v and (go if "." in go else f"{prefix}.{k}") not in POINTER_FIELDS:
                del doc[k]
        elif ft.kind == "slice" and isinstance(v, list) and ft.elem is not None and ft.elem.kind == "struct":
            for x in v:
                if isinstance(x, dict):
                    _drop_empty_structs(x, ft.elem)


def _refused(errors: list[tuple[str, str]], located: Document, name: str) -> InputError:
    """The kubelet's ``invalid pod: [...]``, with the line of the first
    error's field when the manifest has it."""
    first = errors[0][0]
    pos = located.locate(first) if not first.startswith("spec.nodeName") else None
    where = f" (line {pos[0]}, column {pos[1]})" if pos is not None else ""
    return StaticPodErrors(errors, file=name, suffix=where)


def _leftovers(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _leftovers(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_leftovers(v) for v in data]
    return int_or_string_form(data)


def _hash(data: object) -> bytes:
    # (an IntOrString keeps the half a later occurrence of the other type
    # did not set: hashed with it)
    return json.dumps(_leftovers(data), sort_keys=True, separators=(",", ":"), default=str).encode()


# ---------------------------------------------------------------- decoding


def decode_static_pod(raw_text: str, *, name: str, node_name: str, gates: FeatureGateView,
                      is_json: bool | None = None, raw: bytes | None = None) -> StaticPod:
    """The static pod of the manifest text ``raw_text`` read from ``name``
    (the path, as in the UID's hash), or ``InputError``. ``is_json``: how
    the kubelet reads it, when its bytes say (a UTF-16 ``{`` is YAML to
    it); by default JSON when ``{`` comes after what ``unicode.IsSpace``
    trims (``hasJSONPrefix``). ``raw``: the file's bytes ``raw_text`` was
    decoded from (a JSON syntax error quotes its byte)."""
    if is_json is None:
        is_json = raw_text.lstrip(GO_SPACE).startswith("{")
    if is_json:
        _json_white_space(raw_text, name)
    root = None
    if is_json:
        data = _load_json(raw_text, name, raw)
    else:
        data, root = _load_yaml(raw_text, name)
    doc = _lenient(_check_kind(data, raw_text, is_json, name))
    located = Document(name, doc, root)
    # Go's decoder: a value of the wrong type in a field podnuma reads is
    # refused in its words; a null element of a list is its zero value
    try:
        doc = go_decode(doc, from_json=is_json)
    except GoDecodeError as e:  # (podnuma names the field and its line)
        raise located.enrich(InputError(
            f"couldn't parse as pod({e.message}), please check config file", path=e.path, file=name)) from None
    doc = _lenient(doc)  # (a repeated key's values as Go leaves them: unknown fields dropped again)
    located = Document(name, doc, root)

    meta = doc.get("metadata")
    if not (isinstance(meta, Mapping) and meta.get("name")):
        raise InputError("invalid pod: name is needed for the pod", file=name)
    spec = doc.get("spec")
    pod_level_raw = spec.get("resources") if isinstance(spec, Mapping) else None
    without = doc
    if isinstance(spec, Mapping) and "resources" in spec:
        without = {**doc, "spec": {k: v for k, v in spec.items() if k != "resources"}}
    # ValidatePodCreate, on the pod as the file source defaulted it (the
    # name suffixed, spec.nodeName the node's: a node name that is no DNS
    # subdomain refuses every static pod); every error, in the kubelet's
    # words and order, in one message
    try:
        errors = validate_static_pod(doc, node_name=node_name, gates=gates)
    except InputError as e:  # (a value of the wrong type: the decoder's refusal)
        raise located.enrich(e.in_file(name)) from None
    if errors:
        raise _refused(errors, located, name)
    # (parse_pod validates the name the kubelet validates: suffixed)
    full_name = f"{meta['name']}-{go_lower(node_name)}" if isinstance(meta["name"], str) else meta["name"]
    without = {**without, "metadata": {**meta, "name": full_name}}
    try:
        pod = parse_pod(without, gates=gates)
        assert isinstance(spec, Mapping)  # (parse_pod requires it)
        _check_images(spec)
        if isinstance(pod_level_raw, Mapping) and gates.enabled(GATE_POD_LEVEL_RESOURCES):
            pod = pod.replace(resources=_pod_level(spec, gates))
    except InputError as e:
        raise located.enrich(e.in_file(name)) from None
    ref = _api_reference(spec)
    if ref:
        raise InputError(f"static pods may not reference {ref}", file=name)

    canonical = _hash(_canonical(doc, gates))
    uid = pod.uid
    if not (isinstance(meta, Mapping) and meta.get("uid")):
        h = hashlib.blake2b(digest_size=16)
        h.update(canonical)
        h.update(f"host:{node_name}".encode())
        h.update(f"file:{name}".encode())
        uid = h.hexdigest()
    return StaticPod(
        pod.replace(uid=uid),
        hashlib.blake2b(canonical, digest_size=16).hexdigest(),
    )
