"""An input as every door hands it over: its text, the name messages give
it, and where the files it names are read from.

The command line reads a file argument (``-``: standard input) into a
:class:`TextInput` whose ``base_dir`` is the file's directory; the web page
sends the text itself, with ``base_dir`` ``None``: such an input may name
no file on the machine that reads it, and every field that would
(:data:`FILE_FIELDS`) is refused before anything is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from podnuma.errors import InputError
from podnuma.inputs.documents import Document, input_name, is_stdin, read_bytes, read_text

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["FILE_FIELDS", "KUBELET_CONFIGURATION", "NO_FILES", "NOWHERE", "TextInput", "refuse_files", "request_name"]

#: Fields of a scenario that name a file on the machine that reads it, and
#: what to give instead.
FILE_FIELDS = (
    ("kubeletConfigFile", "give the configuration inline (kubeletConfig)"),
    ("state.cpuManagerFile", "give the checkpoint inline (state.cpuManager)"),
    ("state.memoryManagerFile", "give the checkpoint inline (state.memoryManager)"),
    ("state.deviceManagerFile", "give the checkpoint inline (state.deviceManager)"),
    ("node.machineInfoFile", "give the machine inline (machineInfo, synthetic or cpus)"),
    ("node.sysfs", "give the machine inline (machineInfo, synthetic or cpus)"),
)

#: the ``what`` of the ``--kubelet-config`` file, whose bytes
#: :meth:`TextInput.read` keeps as they are
KUBELET_CONFIGURATION = "kubelet configuration"

#: the message for a field naming a file in an input that may name none
NO_FILES = "the server reads no files named in a request"

if TYPE_CHECKING:
    #: the base directory given to loaders for an input that may name no
    #: file (never read: every field that would is refused first):
    #: ``Path("/nonexistent")``, made when first asked for (a command that
    #: reads a file does not import :mod:`pathlib`: docs/speed.md)
    NOWHERE: Path
else:

    def __getattr__(name: str) -> Any:
        global NOWHERE
        if name == "NOWHERE":
            from pathlib import Path

            NOWHERE = Path("/nonexistent")
            return NOWHERE
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class TextInput:
    """One input: ``text``; ``name``, how messages name it; ``base_dir``,
    where the relative file paths it holds resolve (``None``: it may name
    no file); ``origin``, how reports say where it came from (default
    ``name``)."""

    text: str
    name: str
    base_dir: Path | None
    origin: str | None

    def __init__(
        self,
        text: str,
        name: str,
        base_dir: Path | None = None,
        origin: str | None = None,
    ) -> None:
        self.text = text
        self.name = name
        self.base_dir = base_dir
        self.origin = origin

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(text={self.text!r}, name={self.name!r}, base_dir={self.base_dir!r}, origin={self.origin!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TextInput) or other.__class__ is not self.__class__:
            return False
        return (self.text, self.name, self.base_dir, self.origin) == (other.text, other.name, other.base_dir, other.origin)

    def __hash__(self) -> int:
        return hash((self.text, self.name, self.base_dir, self.origin))

    @property
    def source(self) -> str:
        """Where the input came from, for reports (``origin`` or ``name``)."""
        return self.name if self.origin is None else self.origin

    @classmethod
    def read(cls, path: str | Path, *, what: str) -> TextInput:
        """The file argument ``path`` (``-``: standard input, whose relative
        references resolve from the working directory)."""
        from pathlib import Path

        name = input_name(path)
        if what == KUBELET_CONFIGURATION:
            # the kubelet's loader decodes the bytes itself (go-yaml decodes
            # only what it reads, UTF-16 after a byte order mark too): every
            # byte kept, one that is not UTF-8 as a lone surrogate
            # (surrogateescape), for podnuma.inputs.pods to take back
            text = read_bytes(path, what=what, name=name).decode("utf-8", "surrogateescape")
        else:
            text = read_text(path, what=what, name=name)
        base_dir = Path.cwd() if is_stdin(path) else Path(path).parent
        # (reports say where it came from by its name: standard input is
        # <stdin> there as in every message, never '-')
        return cls(text, name, base_dir)


def refuse_files(doc: Document, fields: tuple[tuple[str, str], ...] = FILE_FIELDS,
                 prefix: str = "") -> None:
    """Refuse, at its field, the first of ``fields`` (paths under
    ``prefix``) that ``doc`` holds."""
    data = doc.data
    if not isinstance(data, Mapping):
        return
    for path, instead in fields:
        head, _, key = path.rpartition(".")
        holder: Any = data.get(head) if head else data
        if isinstance(holder, Mapping) and key in holder:
            where = f"{prefix}.{path}" if prefix else path
            raise doc.enrich(InputError(f"{NO_FILES}: {instead}", path=where))


def request_name(name: str | None, default: str) -> str:
    """The name messages give content a request uploaded: the last part of
    what the client sent (never a path on the server), at most 100
    characters, or ``default``."""
    if not name:
        return default
    from pathlib import PurePosixPath

    base = PurePosixPath(name.replace("\\", "/")).name.strip()
    base = "".join(ch for ch in base if ch.isprintable())[:100]
    return base or default
