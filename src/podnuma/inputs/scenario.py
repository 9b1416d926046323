"""Loading a scenario file (the contract in docs: scenario format v1).

The edge between the user's files and the pure core: reads the scenario
(YAML or JSON, a file or ``-`` for standard input), the files it references
(kubelet configuration, machine files through ``podnuma.inputs.discover``,
checkpoints), checks every field and turns each problem into an
:class:`~podnuma.errors.InputError` that names the file and the field path,
with the line and column when known (:mod:`podnuma.inputs.documents`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from podnuma.api.featuregates import FeatureGateReader, FeatureGates
from podnuma.api.kubeletconfig import KubeletConfig, load_kubelet_config, strict_decoding_error
from podnuma.api.pod import Pod
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.qos import set_status_qos
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.checkpoint import DEFAULT_STATE_DIR, found_bytes
from podnuma.cm.cpumanager.checkpoint import (
    CPUCheckpointData,
    encode_cpu_checkpoint,
    restore_cpu_state,
)
from podnuma.cm.devicemanager.checkpoint import DeviceCheckpointData, read_device_checkpoint
from podnuma.cm.memorymanager.checkpoint import (
    MemoryCheckpointData,
    encode_memory_checkpoint,
    restore_memory_state,
)
from podnuma.cm.results import StepOp
from podnuma.errors import InputError, KubeletStartupError
from podnuma.fieldkit import check_known_fields, expect_string_keys, wrong_type
from podnuma.inputs.discover import load_node
from podnuma.inputs.documents import (
    Document,
    JSONListStream,
    decode_text,
    input_name,
    is_stdin,
    load_json_streamed,
    parse_document,
    read_text,
)
from podnuma.inputs.overrides import Override, apply_overrides, blame
from podnuma.inputs.scenario_pods import PodParses
from podnuma.inputs.scenario_stream import JSONStepReader
from podnuma.inputs.startup import startup_failure
from podnuma.machine.topology import Machine

if TYPE_CHECKING:
    from pathlib import Path  # (a run that reads no other file does not import it)

    from podnuma.inputs.scenario_yaml import YAMLStepReader  # (PyYAML: never for JSON)

__all__ = [
    "API_VERSION",
    "KIND",
    "Scenario",
    "Step",
    "load_scenario",
    "load_scenario_document",
    "load_scenario_text",
    "open_scenario_stream",
    "open_scenario_text",
    "read_referenced",
]

API_VERSION = "podnuma.io/v1"
KIND = "Scenario"

# --------------------------------------------------------------------------
# The scenario
# --------------------------------------------------------------------------

_TOP_KEYS = ("apiVersion", "kind", "node", "kubeletConfig", "kubeletConfigFile", "apiServer", "state", "steps")
_STATE_KEYS = (
    "cpuManager", "cpuManagerFile", "memoryManager", "memoryManagerFile", "deviceManager", "deviceManagerFile",
    "pods",
)  # fmt: skip
_STEP_KEYS: tuple[StepOp, ...] = ("addPod", "removeContainer", "removePod", "reconcile")


class Step:
    """One step of a scenario, validated (not to be changed: hashed by its
    value; not frozen, since a frozen dataclass's ``__init__`` costs three
    times a plain one's, a step at a time).

    ``path`` is the step's field path (``steps[3].addPod``) for messages
    about it later (e.g. a removal naming a pod that is not running).

    A plain record (its methods written out, not made by ``dataclass`` when
    the module is imported: that cost every command's start-up).
    """

    index: int
    op: StepOp
    path: str
    pod: Pod | None  # addPod
    ref: str | None  # removeContainer / removePod: uid or NAMESPACE/NAME
    container: str | None  # removeContainer

    def __init__(
        self, index: int, op: StepOp, path: str, pod: Pod | None = None, ref: str | None = None,
        container: str | None = None,
    ) -> None:
        self.index = index
        self.op = op
        self.path = path
        self.pod = pod
        self.ref = ref
        self.container = container

    def _key(self) -> tuple[Any, ...]:
        return (self.index, self.op, self.path, self.pod, self.ref, self.container)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Step)
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(index={self.index!r}, op={self.op!r}, path={self.path!r}, "
                f"pod={self.pod!r}, ref={self.ref!r}, container={self.container!r})")

    def replace(self, **changes: Any) -> Step:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values: dict[str, Any] = {
            "index": self.index, "op": self.op, "path": self.path, "pod": self.pod,
            "ref": self.ref, "container": self.container,
        }
        values.update(changes)
        return Step(**values)


#: the fields of :class:`Scenario`, in order
_SCENARIO_FIELDS = (
    "name", "base_dir", "machine", "config", "steps", "cpu_checkpoint", "memory_checkpoint",
    "files", "kubelet_config_file", "cpu_state_path", "memory_state_path",
    "cpu_restore_failure", "memory_restore_failure", "running_pods", "device_checkpoint",
    "device_state_path", "document", "overrides", "config_document",
)


class Scenario:
    """A loaded scenario: the machine, the kubelet configuration, the
    starting checkpoints and the steps. ``name`` is the file name used in
    messages; ``base_dir`` resolves the relative paths it references.

    A plain record (its methods written out, not made by ``dataclass`` when
    the module is imported: that cost every command's start-up); ``document``
    and ``config_document`` are left out of its comparison and its repr.
    """

    name: str
    # base_dir (a property): where the relative paths it references resolve
    _base_dir: Path | str
    machine: Machine
    config: KubeletConfig
    steps: tuple[Step, ...]
    cpu_checkpoint: CPUCheckpointData | None
    memory_checkpoint: MemoryCheckpointData | None
    files: tuple[str, ...]  # files read besides the scenario
    kubelet_config_file: str | None  # where the configuration came from, if a file
    cpu_state_path: str | None  # field path of the starting CPU checkpoint, if any
    memory_state_path: str | None  # field path of the starting memory checkpoint, if any
    # the kubelet's message for refusing a starting checkpoint (it does not
    # start: raised when that manager starts)
    cpu_restore_failure: str | None
    memory_restore_failure: str | None
    # the specs of the pods running at the start (state.pods), as the
    # kubelet knows them from the API server after a restart
    running_pods: tuple[Pod, ...]
    # the device manager's starting checkpoint as the kubelet reads it (one
    # it cannot read restores nothing: the kubelet logs it and goes on)
    device_checkpoint: DeviceCheckpointData | None
    device_state_path: str | None
    document: Document | None
    # ``--set`` overrides applied on top of the scenario's configuration, and
    # the configuration document the run used (theirs, overrides applied)
    overrides: tuple[Override, ...]
    config_document: Mapping[str, Any] | None

    def __init__(
        self,
        name: str,
        base_dir: Path | str,
        machine: Machine,
        config: KubeletConfig,
        steps: tuple[Step, ...],
        cpu_checkpoint: CPUCheckpointData | None = None,
        memory_checkpoint: MemoryCheckpointData | None = None,
        files: tuple[str, ...] = (),
        kubelet_config_file: str | None = None,
        cpu_state_path: str | None = None,
        memory_state_path: str | None = None,
        cpu_restore_failure: str | None = None,
        memory_restore_failure: str | None = None,
        running_pods: tuple[Pod, ...] = (),
        device_checkpoint: DeviceCheckpointData | None = None,
        device_state_path: str | None = None,
        document: Document | None = None,
        overrides: tuple[Override, ...] = (),
        config_document: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self._base_dir = base_dir
        self.machine = machine
        self.config = config
        self.steps = steps
        self.cpu_checkpoint = cpu_checkpoint
        self.memory_checkpoint = memory_checkpoint
        self.files = files
        self.kubelet_config_file = kubelet_config_file
        self.cpu_state_path = cpu_state_path
        self.memory_state_path = memory_state_path
        self.cpu_restore_failure = cpu_restore_failure
        self.memory_restore_failure = memory_restore_failure
        self.running_pods = running_pods
        self.device_checkpoint = device_checkpoint
        self.device_state_path = device_state_path
        self.document = document
        self.overrides = overrides
        self.config_document = config_document

    @property
    def base_dir(self) -> Path:
        """Where the relative paths it references resolve: a ``Path``, made
        when first asked for from the text it was given as (a run that
        reads no other file does not import :mod:`pathlib`)."""
        d = self._base_dir
        if isinstance(d, str):
            from pathlib import Path

            d = self._base_dir = Path(d)
        return d

    def replace(self, **changes: Any) -> Scenario:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values = {name: getattr(self, name) for name in _SCENARIO_FIELDS}
        values.update(changes)
        return Scenario(**values)

    def _key(self) -> tuple[Any, ...]:
        """The compared fields (all but ``document`` and ``config_document``)."""
        return (
            self.name, self.base_dir, self.machine, self.config, self.steps, self.cpu_checkpoint,
            self.memory_checkpoint, self.files, self.kubelet_config_file, self.cpu_state_path,
            self.memory_state_path, self.cpu_restore_failure, self.memory_restore_failure,
            self.running_pods, self.device_checkpoint, self.device_state_path, self.overrides,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Scenario)
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{n}={getattr(self, n)!r}" for n in _SCENARIO_FIELDS
            if n not in ("document", "config_document")
        )
        return f"{type(self).__qualname__}({fields})"

    def input_error(self, err: InputError) -> InputError:
        """``err`` (about this scenario's file) with the file name and the
        field's line when known."""
        if self.document is not None:
            return self.document.enrich(err)
        return err if err.file else err.in_file(self.name)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate the scenario file at ``path`` (``-``: standard
    input; its relative references then resolve from the working directory).

    Every problem raises :class:`InputError` naming the file and the field.
    """
    from pathlib import Path

    name = input_name(path)
    text = read_text(path, name=name, what="scenario")
    base_dir = Path.cwd() if is_stdin(path) else Path(path).parent
    return load_scenario_text(text, name=name, base_dir=base_dir)


def load_scenario_text(
    text: str, *, name: str, base_dir: Path | str, overrides: tuple[Override, ...] = (),
    state_dir: str = DEFAULT_STATE_DIR, json_only: bool = False,
) -> Scenario:
    """Validate a scenario given as text; ``name`` is used in messages and
    ``base_dir`` resolves the relative paths the scenario references;
    ``overrides`` (``--set``) change its kubelet configuration before it is
    decoded and validated; ``state_dir``: the kubelet's state directory, in
    which its refusal of a starting checkpoint names the file (a node's
    copied state directory, replayed); ``json_only``: the text is JSON
    whatever its name (a document podnuma wrote to read again: read as
    YAML, a number kept with its text would be a float again)."""
    return load_scenario_document(
        parse_document(text, name=name, json_only=json_only), base_dir=base_dir, overrides=overrides,
        state_dir=state_dir,
    )


def load_scenario_document(
    doc: Document, *, base_dir: Path | str, overrides: tuple[Override, ...] = (),
    state_dir: str = DEFAULT_STATE_DIR,
) -> Scenario:
    """Validate a scenario already parsed (:func:`parse_document`)."""
    name = doc.name
    try:
        return _load(doc, base_dir=base_dir, overrides=overrides, state_dir=state_dir)
    except InputError as e:
        if e.file is not None and e.file != name:
            raise
        raise doc.enrich(e) from None


def open_scenario_text(
    text: str, *, name: str, base_dir: Path | str, overrides: tuple[Override, ...] = ()
) -> tuple[Scenario, Iterator[Step]]:
    """The scenario without its steps (``steps`` is empty), and its steps,
    read and validated one at a time as the iterator is consumed, so that a
    long scenario is never held whole. A JSON scenario (``name`` ends in
    ``.json``) is streamed so: its text is checked whole against the read
    limits first, then each step is decoded when it is reached. Anything
    else is loaded whole (:func:`load_scenario_text`) and its steps handed
    out from there. A step that is not valid raises when it is reached."""
    if not name.lower().endswith(".json"):
        whole = load_scenario_text(text, name=name, base_dir=base_dir, overrides=overrides)
        return whole, iter(whole.steps)
    data = load_json_streamed(text, name=name, key="steps")
    if not isinstance(data, JSONListStream):
        whole = load_scenario_document(
            Document(name, data, None, source=text), base_dir=base_dir, overrides=overrides
        )
        return whole, iter(whole.steps)
    doc = Document(name, {**data.top, "steps": []}, None, source=text)
    head = load_scenario_document(doc, base_dir=base_dir, overrides=overrides)
    return head, _steps(data.items(), head, doc, data.top)


def open_scenario_stream(
    reader: JSONStepReader | YAMLStepReader, *, overrides: tuple[Override, ...] = ()
) -> tuple[Scenario, Iterator[Step]]:
    """As :func:`open_scenario_text` for a file read in one pass
    (:class:`~podnuma.inputs.scenario_stream.JSONStepReader`,
    :class:`~podnuma.inputs.scenario_yaml.YAMLStepReader`): the head is
    read and validated, the steps come as the iterator is consumed. Every
    error about the file gives the whole read's verdict first (a problem of
    the file as a whole is the answer, as when it is read whole), and names
    the field's line and column from the whole text, read again then.
    Raises :class:`~podnuma.inputs.scenario_stream.ReadWhole` when the file
    is not laid out for it."""
    src = reader.src
    top = reader.head()
    doc = _ReadAgainDocument(src.name, {**top, "steps": []}, reader)
    head = load_scenario_document(doc, base_dir=src.directory, overrides=overrides)
    # (MessagePack keys the pods where msgspec decodes the steps: a long file)
    return head, _steps(
        reader.items(), head, doc, top,
        plain=isinstance(reader, JSONStepReader) and reader.decoder is not None,
    )


@mypyc_attr(native_class=False)  # (its base class is a Python class)
class _ReadAgainDocument(Document):
    """The head of a file read in one pass: a field's position is looked
    up in the whole text, read again (after the whole read's verdict)."""

    def __init__(self, name: str, data: Any, reader: JSONStepReader | YAMLStepReader) -> None:
        super().__init__(name, data, None)
        self._reader = reader

    def locate(self, path: str, key: bool = False) -> tuple[int, int] | None:
        if self.root is None and self.source is None:
            self._reader.check()
            self.root, self.source = self._reader.whole_tree()
        return super().locate(path, key)


def _steps(
    items: Iterator[Any], head: Scenario, doc: Document, top: Mapping[str, Any], *,
    plain: bool = False,
) -> Iterator[Step]:
    """The steps of ``items`` validated one at a time (errors enriched by
    ``doc``; ``plain``: the items hold JSON's types only)."""
    name = head.name
    api_gates = _api_server_gates(top, head.config)  # checked by the head's load
    api_server = top.get("apiServer") is not None
    pods = PodParses(api_gates, plain=plain, json_text=_json_text(name))  # one run's memo
    for i, raw in enumerate(items):
        try:
            step = _load_step(i, raw, pods)
        except InputError as e:
            if e.file is not None and e.file != name:
                raise
            raise doc.enrich(e) from None
        if api_server and step.pod is not None:  # as _load does for every pod
            set_status_qos(
                step.pod, pod_level_resources=api_gates.enabled("PodLevelResources"),
                fix_kubelet_qos_class=api_gates.enabled("PodLevelResourcesFixKubeletQOSClass"),
            )  # fmt: skip
        yield step


def _resolve(base_dir: Path | str, value: object, *, path: str) -> Path:
    if not isinstance(value, str):
        raise wrong_type(path, "a file path (a string)", value)
    if not value:
        raise wrong_type(path, "a file path", value)
    from pathlib import Path  # (here: only a scenario naming a file needs it)

    from podnuma.inputs.pathtext import referenced_text

    try:
        return Path(referenced_text(base_dir, value))
    except InputError as e:
        raise e.at(path) from None


def read_referenced(base_dir: Path | str, value: object, *, path: str, what: str) -> tuple[Path, bytes]:
    """The file a scenario's field ``path`` names (``value``, resolved
    against ``base_dir``) and its bytes (bounded), or ``InputError`` at
    that field."""
    from podnuma.inputs.documents import read_limited
    from podnuma.inputs.limits import DEFAULT_LIMITS
    from podnuma.inputs.pathtext import referenced_text

    p = _resolve(base_dir, value, path=path)
    # (opened, and named, as the oracle resolves it: ``p`` would lose an absolute path's ``/``)
    text = referenced_text(base_dir, value) if isinstance(value, str) else str(p)
    try:
        # (a named pipe there is waited for as one named on the command line is)
        return p, read_limited(text, DEFAULT_LIMITS.max_bytes, wait=what)
    except InputError as e:  # (no writer came to the pipe)
        raise InputError(f"{what} file {text!r}: {e.message}", path=path) from None
    except FileNotFoundError:
        raise InputError(f"{what} file {text!r} not found", path=path) from None
    except IsADirectoryError:
        raise InputError(f"{what} file {text!r} is a directory", path=path) from None
    except OSError as e:
        raise InputError(f"cannot read {what} file {text!r}: {e.strerror or e}", path=path) from None


def _mapping(value: object, *, path: str, what: str) -> Mapping[str, Any]:
    return expect_string_keys(value, path, "a mapping" if path else f"a mapping ({what})")


def _unknown(keys: Mapping[str, Any], known: tuple[str, ...], *, path: str) -> None:
    check_known_fields(keys, known, path)


def _load(doc: Document, *, base_dir: Path | str, overrides: tuple[Override, ...] = (),
          state_dir: str = DEFAULT_STATE_DIR) -> Scenario:
    if doc.data is None:
        raise InputError("the scenario is empty")
    top = _mapping(doc.data, path="", what="a scenario")
    _unknown(top, _TOP_KEYS, path="")

    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        if key not in top:
            raise InputError(f"required field is missing (expected {want!r})", path=key)
        if top[key] != want:
            raise InputError(f"must be {want!r}, got {top[key]!r}", path=key)

    if "node" not in top:
        raise InputError("required field is missing: the machine", path="node")
    node_doc = _mapping(top["node"], path="node", what="node")
    try:
        machine = load_node(node_doc, base_dir=base_dir)
    except InputError as e:
        raise e.at("node") from None

    config, files, config_doc = _load_kubelet_config(
        top, base_dir=base_dir, scenario_name=doc.name, overrides=overrides
    )
    api_gates = _api_server_gates(top, config)

    cpu_ckpt: CPUCheckpointData | None = None
    mem_ckpt: MemoryCheckpointData | None = None
    cpu_failure: str | None = None
    mem_failure: str | None = None
    running: tuple[Pod, ...] = ()
    f1: tuple[str, ...] = ()
    f2: tuple[str, ...] = ()
    dev_ckpt: DeviceCheckpointData | None = None
    f3: tuple[str, ...] = ()
    if "state" in top and top["state"] is not None:
        state = _mapping(top["state"], path="state", what="state")
        _unknown(state, _STATE_KEYS, path="state")
        plrm = config.feature_gates.enabled("PodLevelResourceManagers")
        cpu_ckpt, cpu_failure, f1 = _load_checkpoint(
            state, "cpuManager", base_dir=base_dir, plrm=plrm, config=config, state_dir=state_dir
        )
        mem_ckpt, mem_failure, f2 = _load_checkpoint(
            state, "memoryManager", base_dir=base_dir, plrm=plrm, config=config, state_dir=state_dir
        )
        dev_ckpt, f3 = _load_device_checkpoint(state, base_dir=base_dir)
        files += f1 + f2 + f3
        running = _load_running_pods(state, api_gates, json_text=_json_text(doc.name))

    if "steps" not in top:
        raise InputError("required field is missing: the list of steps", path="steps")
    raw_steps = top["steps"]
    if not isinstance(raw_steps, list):
        raise wrong_type("steps", "a list (of steps)", raw_steps)
    pods = PodParses(api_gates, json_text=_json_text(doc.name))
    steps = tuple(_load_step(i, raw, pods) for i, raw in enumerate(raw_steps))
    if top.get("apiServer") is not None:
        # The API server's status.qosClass (its gates), which the kubelet
        # takes over computing its own.
        for pod in (*running, *(st.pod for st in steps if st.pod is not None)):
            set_status_qos(
                pod, pod_level_resources=api_gates.enabled("PodLevelResources"),
                fix_kubelet_qos_class=api_gates.enabled("PodLevelResourcesFixKubeletQOSClass"),
            )  # fmt: skip

    return Scenario(
        name=doc.name,
        base_dir=base_dir,
        machine=machine,
        config=config,
        steps=steps,
        cpu_checkpoint=cpu_ckpt,
        memory_checkpoint=mem_ckpt,
        files=files,
        kubelet_config_file=files[0] if "kubeletConfigFile" in top else None,
        cpu_state_path=(
            _state_path(top, "cpuManager", f1) if cpu_ckpt is not None or cpu_failure else None
        ),
        memory_state_path=(
            _state_path(top, "memoryManager", f2) if mem_ckpt is not None or mem_failure else None
        ),
        cpu_restore_failure=cpu_failure,
        memory_restore_failure=mem_failure,
        running_pods=running,
        device_checkpoint=dev_ckpt,
        device_state_path=_state_path(top, "deviceManager", f3) if dev_ckpt is not None else None,
        document=doc,
        overrides=overrides,
        config_document=config_doc,
    )


def _state_path(top: Mapping[str, Any], key: str, files: tuple[str, ...] = ()) -> str:
    """Where a starting checkpoint is in the input: its field path, and the
    file it names, if any."""
    state = top.get("state") or {}
    if f"{key}File" in state:
        return f"state.{key}File ({files[0]})" if files else f"state.{key}File"
    return f"state.{key}"


def _load_kubelet_config(
    top: Mapping[str, Any], *, base_dir: Path | str, scenario_name: str,
    overrides: tuple[Override, ...] = (),
) -> tuple[KubeletConfig, tuple[str, ...], Mapping[str, Any]]:
    """The configuration, the file it was read from (if any) and its
    document with ``overrides`` applied (what the configuration is)."""
    if "kubeletConfig" in top and "kubeletConfigFile" in top:
        raise InputError(
            "give the kubelet configuration inline (kubeletConfig) or as a file "
            "(kubeletConfigFile), not both",
            path="kubeletConfigFile",
        )
    if "kubeletConfigFile" in top:
        p, raw = read_referenced(
            base_dir, top["kubeletConfigFile"], path="kubeletConfigFile", what="kubelet configuration"
        )
        name = str(p)
        text = decode_text(raw, what="kubelet configuration", name=name)  # (its byte, as read directly)
        sub = parse_document(text, name=name)
        try:
            if sub.data is None:
                raise InputError("the kubelet configuration file is empty")
            cfg_doc = _mapping(sub.data, path="", what="a KubeletConfiguration")
            if overrides:  # (the kubelet decodes its file before a flag sets anything)
                strict_decoding_error(cfg_doc)
        except InputError as e:
            raise sub.enrich(e) from None
        cfg_doc = apply_overrides(cfg_doc, overrides) if overrides else cfg_doc
        try:
            return load_kubelet_config(cfg_doc), (name,), cfg_doc
        except InputError as e:
            blamed = blame(e, overrides)
            raise (blamed if blamed is not e else sub.enrich(e)) from None
        except KubeletStartupError as e:
            raise startup_failure(e, file=name, kubelet_config_file=name, overrides=overrides) from None
    raw_cfg = top.get("kubeletConfig")
    if raw_cfg is None:
        raw_cfg = {}
    cfg_doc = _mapping(raw_cfg, path="kubeletConfig", what="kubeletConfig")
    if overrides:  # (the configuration decodes on its own before a flag sets anything)
        try:
            strict_decoding_error(cfg_doc)
        except InputError as e:
            raise e.at("kubeletConfig") from None
    cfg_doc = apply_overrides(cfg_doc, overrides) if overrides else cfg_doc
    try:
        return load_kubelet_config(cfg_doc), (), cfg_doc
    except InputError as e:
        blamed = blame(e, overrides)
        raise (blamed if blamed is not e else e.at("kubeletConfig")) from None
    except KubeletStartupError as e:
        raise startup_failure(e, file=scenario_name, overrides=overrides) from None


def _restore(
    blob: bytes | Mapping[str, Any], key: str, plrm: bool, config: KubeletConfig, state_dir: str
) -> tuple[CPUCheckpointData | MemoryCheckpointData | None, str | None]:
    """The manager's ``restoreState`` on a starting checkpoint: its data, or
    the kubelet's full message for refusing it, naming the checkpoint file in
    ``state_dir`` (the kubelet then does not start; the message is raised
    when that manager starts, in the kubelet's order: see
    :class:`podnuma.node.Node`)."""
    data: CPUCheckpointData | MemoryCheckpointData
    try:
        if key == "cpuManager":
            data = restore_cpu_state(
                blob, config.cpu_manager_policy, pod_level_resource_managers=plrm, state_dir=state_dir
            )
        else:
            data = restore_memory_state(
                blob, config.memory_manager_policy, pod_level_resource_managers=plrm, state_dir=state_dir
            )
    except KubeletStartupError as e:
        return None, str(e)
    data.found = _inline_bytes(blob, data) if isinstance(blob, Mapping) else found_bytes(blob)
    return data, None


def _inline_bytes(obj: Mapping[str, Any], data: CPUCheckpointData | MemoryCheckpointData) -> bytes | None:
    """The file an inline starting checkpoint stands for. A mapping keeps no
    byte form: when it is exactly what the kubelet writes for that state
    (its current format), the kubelet's own bytes; otherwise its JSON with
    sorted keys."""
    own = (
        encode_cpu_checkpoint(data) if isinstance(data, CPUCheckpointData) else encode_memory_checkpoint(data)
    )
    try:
        if json.loads(own) == json.loads(json.dumps(obj)):
            return own
    except (TypeError, ValueError):
        pass
    return found_bytes(obj)


def _load_checkpoint(
    state: Mapping[str, Any], key: str, *, base_dir: Path | str, plrm: bool, config: KubeletConfig,
    state_dir: str,
) -> tuple[Any, str | None, tuple[str, ...]]:
    """Read and restore the starting checkpoint of one manager (``plrm``: the
    PodLevelResourceManagers gate, which changes what the kubelet reads):
    (data, the kubelet's refusal message, files read). A checkpoint the
    kubelet refuses is not invalid input: the kubelet does not start."""
    file_key = f"{key}File"
    if key in state and file_key in state:
        raise InputError(
            f"give the checkpoint inline ({key}) or as a file ({file_key}), not both",
            path=f"state.{file_key}",
        )
    if file_key in state:
        p, raw = read_referenced(base_dir, state[file_key], path=f"state.{file_key}", what="checkpoint")
        try:
            data, failure = _restore(raw, key, plrm, config, state_dir)
        except InputError as e:
            raise InputError(f"{p}: {e}", path=f"state.{file_key}") from None
        return data, failure, (str(p),)
    if key in state and state[key] is not None:
        obj = _mapping(state[key], path=f"state.{key}", what="a checkpoint")
        try:
            data, failure = _restore(obj, key, plrm, config, state_dir)
        except InputError as e:
            raise e.at(f"state.{key}") from None
        return data, failure, ()
    return None, None, ()


def _load_device_checkpoint(
    state: Mapping[str, Any], *, base_dir: Path | str
) -> tuple[DeviceCheckpointData | None, tuple[str, ...]]:
    """``state.deviceManager`` / ``state.deviceManagerFile``: the device
    manager's checkpoint (``kubelet_internal_checkpoint``) as the kubelet
    reads it at start. A checkpoint it cannot read is not invalid input: the
    kubelet logs that and starts with no device state."""
    if "deviceManager" in state and "deviceManagerFile" in state:
        raise InputError(
            "give the checkpoint inline (deviceManager) or as a file (deviceManagerFile), not both",
            path="state.deviceManagerFile",
        )
    if "deviceManagerFile" in state:
        p, raw = read_referenced(
            base_dir, state["deviceManagerFile"], path="state.deviceManagerFile", what="checkpoint"
        )
        return read_device_checkpoint(raw), (str(p),)
    if state.get("deviceManager") is not None:
        obj = _mapping(state["deviceManager"], path="state.deviceManager", what="a checkpoint")
        return read_device_checkpoint(obj), ()
    return None, ()


def _ref(value: object, *, path: str, what: str) -> str:
    if not isinstance(value, str):
        raise wrong_type(path, f"a string ({what})", value)
    if not value.strip():
        raise InputError(f"{what} must not be empty", path=path)
    return value


def _api_server_gates(top: Mapping[str, Any], config: KubeletConfig) -> FeatureGates:
    """The feature gates of the API server the pods go through: without
    ``apiServer``, the kubelet's; with it, the API server's own (v1.37
    defaults with ``apiServer.featureGates`` set), e.g. ``PodLevelResources``
    on (its default) while the kubelet has it off, so that ``spec.resources``
    reaches the kubelet."""
    raw = top.get("apiServer")
    if raw is None:
        return config.feature_gates
    api = _mapping(raw, path="apiServer", what="the API server's settings")
    _unknown(api, ("featureGates",), path="apiServer")
    gates = _mapping(api.get("featureGates") or {}, path="apiServer.featureGates", what="feature gates")
    for name, value in gates.items():
        if not isinstance(value, bool):
            raise wrong_type(f"apiServer.featureGates.{name}", "a boolean", value)
    try:
        return FeatureGates.from_mapping(gates)
    except KubeletStartupError as e:
        raise InputError(str(getattr(e, "message", e)), path="apiServer.featureGates") from None


def _json_text(name: str) -> bool:
    """A scenario file's pods reach Go's decoder with their numbers as
    written: a JSON file's (the name ends in ``.json``, as podnuma and the
    kubelet oracle tell JSON from YAML); a YAML file's go through
    ``sigs.k8s.io/yaml``'s conversion (a float64 each)."""
    return name.lower().endswith(".json")


def _load_running_pods(state: Mapping[str, Any], gates: FeatureGateReader, *,
                       json_text: bool = False) -> tuple[Pod, ...]:
    """``state.pods``: the pods running on the node when it starts (their
    full specs), validated as ``addPod`` pods are."""
    raw = state.get("pods")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise wrong_type("state.pods", "a list (of pods)", raw)
    pods: list[Pod] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(raw):
        path = f"state.pods[{i}]"
        doc = _mapping(item, path=path, what="a pod")
        try:
            pod = parse_pod(doc, gates=gates, sort_keys=True, numbers="text" if json_text else "float",
                            unknown_in_order=True)
        except InputError as e:
            raise e.at(path) from None
        for key in (pod.uid, pod.ref):
            if key in seen:
                raise InputError(
                    f"pod {pod.ref} (UID {pod.uid}) is already listed at state.pods[{seen[key]}]",
                    path=path,
                )
            seen[key] = i
        pods.append(pod)
    return tuple(pods)


def _load_step(index: int, raw: object, pods: PodParses) -> Step:
    if type(raw) is dict and len(raw) == 1:  # the usual shapes, checked cheaply
        for op, body in raw.items():
            if op == "addPod" and type(body) is dict:
                for k in body:
                    if type(k) is not str:
                        break
                else:
                    try:
                        pod = pods.parse(body)
                    except InputError as e:
                        raise e.at(f"steps[{index}].addPod") from None
                    return Step(index, "addPod", f"steps[{index}].addPod", pod, pod.ref)
            elif op == "removePod" and type(body) is str and body.strip():
                return Step(index, "removePod", f"steps[{index}].removePod", None, body)
    return _load_any_step(index, raw, pods)


def _load_any_step(index: int, raw: object, pods: PodParses) -> Step:
    at = f"steps[{index}]"
    if not isinstance(raw, Mapping):
        raise wrong_type(at, f"a mapping (a step: one of {', '.join(_STEP_KEYS)})", raw)
    _unknown(raw, _STEP_KEYS, path=at)
    if len(raw) != 1:
        keys = ", ".join(str(k) for k in raw) or "none"
        raise InputError(
            f"a step must have exactly one of {', '.join(_STEP_KEYS)} (found: {keys})", path=at
        )
    (op, body), = raw.items()
    path = f"{at}.{op}"
    if op == "addPod":
        pod_doc = _mapping(body, path=path, what="a pod manifest")
        try:
            pod = pods.parse(pod_doc)
        except InputError as e:
            raise e.at(path) from None
        return Step(index, "addPod", path, pod=pod, ref=pod.ref)
    if op == "removePod":
        return Step(index, "removePod", path, ref=_ref(body, path=path, what="the pod (uid or namespace/name)"))
    if op == "reconcile":
        if body is not None:
            _unknown(_mapping(body, path=path, what="reconcile (an empty mapping)"), (), path=path)
        return Step(index, "reconcile", path)
    body = _mapping(body, path=path, what="removeContainer")
    _unknown(body, ("pod", "container"), path=path)
    for k in ("pod", "container"):
        if k not in body:
            raise InputError("required field is missing", path=f"{path}.{k}")
    ref = _ref(body["pod"], path=f"{path}.pod", what="the pod (uid or namespace/name)")
    container = _ref(body["container"], path=f"{path}.container", what="the container name")
    return Step(index, "removeContainer", path, ref=ref, container=container)
