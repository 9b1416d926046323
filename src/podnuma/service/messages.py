"""The words every door uses: the message of an error (what follows
``error:``), the notes on configuration podnuma does not model, the
messages of a question that found nothing, and podnuma's version."""

from __future__ import annotations

from typing import TYPE_CHECKING

from podnuma.errors import InputError, KubeletStartupError

if TYPE_CHECKING:
    from podnuma.api.kubeletconfig import KubeletConfig

__all__ = [
    "error_message",
    "is_input_error",
    "no_pod",
    "no_step_matches",
    "not_modelled_notes",
    "shown_note",
    "version",
]


def is_input_error(err: BaseException) -> bool:
    """Whether ``err`` is invalid input (exit code 2, HTTP 400) rather than
    a bug."""
    return isinstance(err, InputError | KubeletStartupError)


def error_message(err: BaseException) -> str:
    """The text after ``error:`` for ``err``: ``FILE: FIELD.PATH: MESSAGE``
    for invalid input, the kubelet's words for a configuration it would not
    start with or a checkpoint it would refuse; anything else is a bug."""
    if isinstance(err, InputError):
        return str(err)
    # the modules these errors come from are imported only for the message
    # (``podnuma --version`` and a bad option need none of them)
    from podnuma.cm.checkpoint import CheckpointError
    from podnuma.inputs.startup import StartupFailure

    if isinstance(err, CheckpointError):  # a KubeletStartupError: test it first
        return f"invalid checkpoint: {err}"
    if isinstance(err, KubeletStartupError):
        where = err.location() if isinstance(err, StartupFailure) else ""
        return f"kubelet would not start: {err}" + (f" ({where})" if where else "")
    return f"internal error: {type(err).__name__}: {err}"


def shown_note(message: str) -> str:
    """A note as the commands print it on standard error: a warning (a
    message starting ``warning: ``) as it is, any other note after
    ``note: ``, on one line (its line breaks and control characters
    escaped: :func:`~podnuma.fieldkit.inert`). The web API answers these
    lines (``warnings``)."""
    from podnuma.fieldkit import inert

    return inert(message) if message.startswith("warning: ") else f"note: {inert(message)}"


def not_modelled_notes(config: KubeletConfig, file: str, prefix: str = "kubeletConfig.") -> list[str]:
    """The kubelet's warning when the configuration decoded only leniently
    (fields unknown to v1.37 or given twice; a line starting ``warning: ``),
    then one note per set configuration field that changes admission but is
    not modelled."""
    from podnuma.api.kubeletconfig import LENIENT_DECODING, not_modelled

    out = []
    if config.decode_warning:
        where = prefix.rstrip(".") or "kubelet configuration"
        out.append(
            f"warning: {file}: {where}: {LENIENT_DECODING} (the kubelet starts, ignoring what it "
            f"does not know and keeping the last of duplicates): {config.decode_warning}"
        )
    out.extend(
        f"{file}: {prefix}{name}: not modelled ({what}); the results ignore it"
        for name, what in not_modelled(config)
    )
    return out


def no_pod(file: str) -> InputError:
    """A pod file with no Pod in it."""
    return InputError("no Pod in the file", file=file)


def no_step_matches(step: int | None, pod: str | None, file: str) -> InputError:
    """``--step`` / ``--pod`` selecting no ``addPod`` step."""
    what = []
    if step is not None:
        what.append(f"step {step}")
    if pod is not None:
        what.append(f"pod {pod}")
    return InputError(f"no addPod step matches {' and '.join(what)}", file=file)


def version() -> str:
    """podnuma's installed version (``0+unknown`` in a source tree that was
    never installed)."""
    from importlib import metadata  # a scan of the installed packages: only when asked

    try:
        return metadata.version("podnuma")
    except metadata.PackageNotFoundError:  # pragma: no cover - source tree without install
        return "0+unknown"
