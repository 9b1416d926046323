"""Error types shared by the core and the edges.

The core raises typed exceptions; only ``podnuma.cli`` turns them into exit
codes and text.
"""

from __future__ import annotations

__all__ = ["PodnumaError", "InputError", "InputErrors", "KubeletStartupError", "step_out_of_range"]


class PodnumaError(Exception):
    """Base class of every error podnuma raises on purpose."""


class InputError(PodnumaError):
    """Invalid user input: a file, a field, a value.

    ``path`` is the field path inside the document (``steps[2].addPod.spec.
    containers[0].resources.limits[cpu]``), ``file`` the file it came from.
    The CLI prints ``FILE: PATH: MESSAGE`` and exits with code 2.
    """

    def __init__(self, message: str, *, path: str = "", file: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.file = file

    def at(self, prefix: str) -> InputError:
        """The same error with ``prefix`` prepended to its field path."""
        if not prefix:
            return self
        path = prefix if not self.path else (
            f"{prefix}{self.path}" if self.path.startswith("[") else f"{prefix}.{self.path}"
        )
        return InputError(self.message, path=path, file=self.file)

    def in_file(self, file: str) -> InputError:
        return InputError(self.message, path=self.path, file=self.file or file)

    def __str__(self) -> str:
        where = ": ".join(p for p in (self.file, self.path) if p)
        return f"{where}: {self.message}" if where else self.message


class InputErrors(InputError):
    """Several problems of one input, each a whole line of its own as the
    CLI prints it (``FILE: PATH: MESSAGE``): ``problems``; the message is
    them a line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


class KubeletStartupError(PodnumaError):
    """The kubelet would refuse to start with this configuration or state.

    The message is the kubelet's own reason (e.g. "[cpumanager] unable to
    determine reserved CPU resources for static policy").
    """


def step_out_of_range(step: int, steps: int, file: str | None = None) -> InputError:
    """``--step N`` past the scenario's ``steps`` steps: the one wording of
    every command that takes it (``topology``, ``cgroups plan|apply``,
    ``explain``)."""
    span = f"has steps 0-{steps - 1}" if steps else "has no steps"
    return InputError(f"--step {step}: no such step (the scenario {span})", file=file)
