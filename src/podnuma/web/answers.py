"""What a web job answers besides a document: a picture drawn by the job
(:class:`Drawn`), and any answer once the job has encoded it
(:class:`Encoded`). Apart from the job pool (:mod:`podnuma.web.worker`) and
the jobs (:mod:`podnuma.web.service`), which both use them: the pool
imports the jobs' module to preload it, so the jobs cannot import the
pool's."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Drawn", "Encoded"]


@dataclass(frozen=True)
class Encoded:
    """An answer encoded by the job: its bytes and media type, and the
    warnings the command would print on standard error, for an answer whose
    body has no place for them (sent as ``Warning`` headers)."""

    body: bytes
    media_type: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Drawn:
    """A job's answer that is no document (a picture): its text, its media
    type and the warnings the command would print on standard error;
    encoded by the job (:class:`Encoded`)."""

    text: str
    media_type: str
    warnings: tuple[str, ...] = ()
