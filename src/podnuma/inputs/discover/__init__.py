"""Machine discovery: the ``node`` section of a scenario -> ``Machine``.

Exactly one machine form (see docs of each module):

- ``machineInfo`` (inline cadvisor MachineInfo JSON) or ``machineInfoFile``
  (path to it) — ``machineinfo.py``
- ``sysfs`` (path to a copy of ``/sys``) — ``sysfs.py``
- ``synthetic`` — ``synthetic.py``
- ``cpus`` (+ ``memory``, ``memoryCapacity``, ``cpuCapacity``, ``distances``) — ``table.py``

plus ``devices: {RESOURCE: [{id, numaNodes: [..]}]}`` and ``name``.

Every form builds cadvisor's ``MachineInfo`` and goes through the kubelet's
``topology.Discover``. Errors are ``InputError`` with paths relative to the
node mapping (the scenario loader prefixes ``node``); errors inside a file
carry that file in ``InputError.file``. Relative paths resolve against
``base_dir`` (the scenario's directory).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from podnuma.errors import InputError
from podnuma.fieldkit import expect_list, expect_mapping
from podnuma.inputs.discover._fields import (
    check_keys,
    expect_id,
    expect_int,
    expect_name,
    expect_str,
    join,
)
from podnuma.inputs.discover.machineinfo import (
    MachineInfo,
    build_machine,
    discover,
    parse_machine_info,
)
from podnuma.inputs.discover.synthetic import parse_synthetic
from podnuma.inputs.discover.table import parse_table
from podnuma.inputs.documents import parse_document, read_text
from podnuma.machine.topology import Device, Machine

if TYPE_CHECKING:
    from pathlib import Path  # (made only for a node read from files)

__all__ = [
    "load_node",
    "parse_devices",
    "MachineInfo",
    "parse_machine_info",
    "discover",
    "build_machine",
    "parse_synthetic",
    "parse_table",
]

FORMS = ("machineInfo", "machineInfoFile", "sysfs", "synthetic", "cpus")
_TABLE_KEYS = ("memory", "memoryCapacity", "cpuCapacity", "distances")
_KEYS = (*FORMS, *_TABLE_KEYS, "devices", "name")


def _named_as_written(err: InputError, root: str) -> InputError:
    """``err`` of the sysfs tree ``root``, its file named under ``root`` as
    written: ``./-`` (a document's ``-``, the file beside it) is ``-`` to
    :mod:`pathlib`, which would name it as the command line's standard input."""
    file = err.file
    if root.startswith("./") and file is not None and (file + "/").startswith(root[2:] + "/"):
        return InputError(err.message, path=err.path, file="./" + file)
    return err


def _resolve_file(value: object, path: str, base_dir: Path | str) -> str:
    """The file (or ``sysfs`` tree) a node form's field names, as text,
    resolved as every file field of a document is (a leading ``~/`` the
    home directory, a relative path joined to ``base_dir`` and cleaned as
    Go's ``filepath.Join`` cleans: :func:`~podnuma.inputs.pathtext.referenced_text`)."""
    from podnuma.inputs.pathtext import referenced_text

    try:
        return referenced_text(base_dir, expect_str(value, path))
    except InputError as e:  # (a NUL byte)
        raise e.at(path) from None


def _machine_info_file(file: str) -> MachineInfo:
    try:
        doc = parse_document(read_text(file, what="machine info"), name=str(file), json_only=True)
    except InputError as err:
        raise InputError(err.message, path="machineInfoFile", file=str(file)) from None
    doc = doc.data
    try:
        return parse_machine_info(doc)
    except InputError as err:
        raise _in_file(err, file) from None


def _in_file(err: InputError, file: str) -> InputError:
    return InputError(err.message, path=err.at("machineInfoFile").path, file=str(file))


def parse_devices(value: object, numa_ids: set[int], path: str = "devices") -> dict[str, tuple[Device, ...]]:
    """``{RESOURCE: [{id, numaNodes: [..]}]}``; device ids unique, NUMA ids any int64 (as a
    device plugin may report them: the device manager leaves out of its hints the ids
    not in ``numa_ids``, the machine's)."""
    doc = expect_mapping(value, path)
    out: dict[str, tuple[Device, ...]] = {}
    for resource, items in doc.items():
        rpath = join(path, str(resource))
        if not isinstance(resource, str) or not resource:
            raise InputError(f"invalid resource name {resource!r}", path=rpath)
        seen: set[str] = set()
        devices = []
        for i, raw in enumerate(expect_list(items, rpath)):
            dpath = join(rpath, i)
            entry = expect_mapping(raw, dpath)
            check_keys(entry, ("id", "numaNodes"), dpath)
            if "id" not in entry:
                raise InputError("required field is missing", path=join(dpath, "id"))
            raw_id = entry["id"]
            if isinstance(raw_id, int) and not isinstance(raw_id, bool):
                raw_id = str(raw_id)
            dev_id = expect_id(raw_id, join(dpath, "id"))
            if dev_id in seen:
                raise InputError(f"duplicate device id {dev_id!r}", path=join(dpath, "id"))
            seen.add(dev_id)
            nodes: list[int] = []
            if entry.get("numaNodes") is not None:
                npath = join(dpath, "numaNodes")
                for j, n in enumerate(expect_list(entry["numaNodes"], npath)):
                    # the kubelet takes the plugin's TopologyInfo ids as given
                    # (int64), nodes the machine lacks included
                    nid = expect_int(n, join(npath, j), minimum=-(1 << 63), maximum=(1 << 63) - 1)
                    if nid in nodes:
                        raise InputError(f"NUMA node {nid} listed twice", path=join(npath, j))
                    nodes.append(nid)
            devices.append(Device(id=dev_id, numa_nodes=tuple(sorted(nodes))))
        out[resource] = tuple(devices)
    return out


def load_node(node_doc: Mapping[str, Any], *, base_dir: Path | str) -> Machine:
    """Build the ``Machine`` of a scenario's ``node`` mapping."""
    doc = expect_mapping(node_doc, "")
    check_keys(doc, _KEYS, "")
    forms = [k for k in FORMS if k in doc]
    if len(forms) != 1:
        found = f"got {', '.join(forms)}" if forms else "got none"
        raise InputError(f"exactly one of {', '.join(FORMS)} is required ({found})")
    form = forms[0]
    if form != "cpus":
        for key in _TABLE_KEYS:
            if key in doc:
                raise InputError(f"{key!r} only goes with the 'cpus' form", path=key)

    name = "node"
    if doc.get("name") is not None:
        name = expect_name(doc["name"], "name")

    if form == "machineInfo":
        info = parse_machine_info_at(doc["machineInfo"])
    elif form == "machineInfoFile":
        info_file = _resolve_file(doc["machineInfoFile"], "machineInfoFile", base_dir)
        info = _machine_info_file(info_file)
    elif form == "sysfs":
        from pathlib import Path

        from podnuma.inputs.discover.sysfs import read_sysfs  # (only for a sysfs tree)

        root = _resolve_file(doc["sysfs"], "sysfs", base_dir)
        try:
            info = read_sysfs(Path(root))
        except InputError as err:
            raise _named_as_written(err, root).at("sysfs") from None
    elif form == "synthetic":
        info = parse_synthetic(doc["synthetic"], "synthetic")
    else:
        info = parse_table(doc)

    try:
        machine = build_machine(info, name=name)
    except InputError as err:
        if form == "machineInfo":
            raise err.at("machineInfo") from None
        if form == "machineInfoFile":
            raise _in_file(err, info_file) from None
        # Only a sysfs tree can get here (e.g. no online CPU): the kubelet's own message.
        raise InputError(err.message, path=form) from None

    if doc.get("devices") is not None:
        devices = parse_devices(doc["devices"], set(machine.numa_ids()))
        machine = machine.replace(devices=devices)
    return machine


def parse_machine_info_at(value: object) -> MachineInfo:
    try:
        return parse_machine_info(value)
    except InputError as err:
        raise err.at("machineInfo") from None
