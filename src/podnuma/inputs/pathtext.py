"""A file argument's path as :mod:`pathlib` reads it, without importing
:mod:`pathlib`.

``podnuma simulate FILE`` opens ``Path(FILE)`` and resolves the files a
scenario names against ``Path(FILE).parent``; importing :mod:`pathlib`
(with ``urllib.parse``, ``ipaddress`` and ``fnmatch``) costs a command about
4 ms of CPU at start-up, more than the rest of reading a one-step scenario
(docs/speed.md). :func:`path_text` is ``str(Path(p))`` and
:func:`parent_text` ``str(Path(p).parent)`` on a POSIX system, worked out on
the text; a scenario that names a file makes its ``Path`` then.
Elsewhere (Windows paths) both ask :mod:`pathlib` itself.

A speed module: ``tests/inputs/test_pathtext.py`` compares both with
:mod:`pathlib` on many paths.
"""

from __future__ import annotations

import os

__all__ = ["names_directory", "open_text", "parent_text", "path_text", "referenced_text"]

_POSIX = os.name == "posix"


def _parts(p: str) -> tuple[str, list[str]]:
    """The root (``""``, ``"/"``, or ``"//"``: POSIX leaves two leading
    slashes to the system, and pathlib keeps them) and the parts of
    ``p`` (empty parts and ``.`` dropped, ``..`` kept)."""
    root = ""
    if p.startswith("/"):
        root = "//" if p.startswith("//") and not p.startswith("///") else "/"
    return root, [part for part in p.split("/") if part and part != "."]


def path_text(p: str | os.PathLike[str]) -> str:
    """``str(pathlib.Path(p))``."""
    if not _POSIX:
        from pathlib import Path

        return str(Path(p))
    root, parts = _parts(os.fspath(p))
    return root + "/".join(parts) or "."


def parent_text(p: str | os.PathLike[str]) -> str:
    """``str(pathlib.Path(p).parent)``."""
    if not _POSIX:
        from pathlib import Path

        return str(Path(p).parent)
    root, parts = _parts(os.fspath(p))
    return root + "/".join(parts[:-1]) or "."


def names_directory(p: str | os.PathLike[str]) -> bool:
    """Whether ``p``'s text ends in ``/`` or ``/.`` past its root
    (``f.yaml/``): the system then takes it for a directory (a file there
    is ``ENOTDIR``, a file made there ``EISDIR``), while :mod:`pathlib`
    drops the ending (``Path("f.yaml/")`` is ``f.yaml``)."""
    text = os.fspath(p)
    return text.endswith(("/", "/.")) and not path_text(text).endswith("/")


def open_text(p: str | os.PathLike[str]) -> str:
    """The name to open for ``p``: :func:`path_text`, keeping the ``/`` of
    a name that ends as a directory's (:func:`names_directory`), so that
    ``f.yaml/`` is refused as the system and every other program refuse it
    (``Not a directory``), not read as ``f.yaml``."""
    text = path_text(p)
    return text + "/" if names_directory(p) else text


def _go_join(base: str, ref: str) -> str:
    """Go's ``filepath.Join(base, ref)`` on the text: joined, then cleaned
    lexically (``m.json/`` is ``m.json``, ``lnk/../m.json`` is ``m.json``
    whatever ``lnk`` links to)."""
    from podnuma.golang.filepath import join

    return os.fsdecode(join(os.fsencode(base), os.fsencode(ref)))


def referenced_text(base: str | os.PathLike[str], ref: str, *, home: bool = True) -> str:
    """The file a document's field names, ``ref``, as the text to open and
    to name it by -- the oracle's rule for a scenario's file fields
    (``resolve`` in ``oracle/internal/scenario/scenario.go``), and
    client-go's ``ResolvePaths`` for a kubeconfig's (``home=False``):

    * a leading ``~/`` (only that: not a bare ``~``, not ``~user/``) is the
      home directory (``$HOME``; left as written when ``$HOME`` is unset or
      empty), joined as Go joins (cleaned); never for a kubeconfig;
    * a relative path is joined to ``base`` (the document's directory) as
      Go's ``filepath.Join`` joins: cleaned lexically, so ``kc.yaml/`` is
      ``kc.yaml`` and ``lnk/../kc.yaml`` is ``kc.yaml`` beside the
      document, whatever ``lnk`` links to;
    * an absolute path is opened as written (:func:`open_text`: not
      cleaned, as Go leaves it; ``/etc/kc.yaml/`` is refused by the
      system).

    ``-`` in a document is the file named ``-`` beside it, never standard
    input (standard input is the command line's ``-`` only, as the
    oracle's Go reader opens ``-`` as a file): ``./-`` when the join comes
    back to the bare ``-`` (a document named ``s.yaml`` or ``./s.yaml``),
    so that no reader takes it for standard input.

    ``InputError`` (without a field path: the caller's to add) for a name
    holding a NUL byte, which no system call takes (the oracle's Go reader
    refuses it: ``invalid argument``)."""
    if "\0" in ref:
        from podnuma.errors import InputError

        raise InputError(f"{ref!r} is no file name: it holds a NUL byte")
    if home and ref.startswith("~/"):
        home_dir = os.environ.get("HOME", "")
        if home_dir:  # (Go's os.UserHomeDir: $HOME, an error when empty)
            ref = _go_join(home_dir, ref[2:])
    text = open_text(ref) if os.path.isabs(ref) else _go_join(os.fspath(base), ref)
    return "./-" if text == "-" else text
