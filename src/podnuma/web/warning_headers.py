"""Warnings as HTTP ``Warning`` headers, written as the Kubernetes API
server writes them.

An answer whose body cannot hold them (the SVG of ``/api/topology``) gives
the warnings the command prints on standard error in ``Warning`` headers,
as kube-apiserver gives its warnings and kubectl prints them. Mirrors the
API server's per-request warning recorder
(``k8s.io/apiserver/pkg/endpoints/filters/warning.go``, ``recorder``) and
the header's format (``k8s.io/apimachinery/pkg/util/net/http.go``,
``NewWarningHeader``), both of v0.37.2:

* each header is ``299 - "TEXT"``: code 299, agent ``-``, the text quoted
  with only ``"`` and ``\\`` escaped by a backslash (everything else as it
  is: UTF-8 on the wire);
* a text that is empty, already recorded, or holds a control character
  (U+0000-U+001F, U+007F-U+009F: Go's ``unicode.IsControl``) gives no
  header (one refused for a control character is still remembered, and
  written again never, as upstream does);
* while the texts written total at most 4,096 characters (runes) they are
  written whole; the text that would pass that switches to truncation:
  every text recorded so far is written again cut to 256 characters, the
  count starting over, and so is each later one until the count has
  reached 4,096, after which the rest are dropped.

``oracle/`` runs the upstream recorder and parser over the same texts
(``kubelet-oracle warnings``): the headers are compared byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["TRUNCATE_AT_TOTAL_RUNES", "TRUNCATE_ITEM_RUNES", "header_value", "warning_headers"]

#: upstream's truncateAtTotalRunes
TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
#: upstream's truncateItemRunes
TRUNCATE_ITEM_RUNES = 256
#: the code of every warning (upstream's recorder writes 299,
#: "miscellaneous persistent warning")
WARNING_CODE = 299


def _is_control(c: str) -> bool:
    o = ord(c)
    return o < 0x20 or 0x7F <= o <= 0x9F


def header_value(text: str, code: int = WARNING_CODE, agent: str = "-") -> str | None:
    """One ``Warning`` header's value, or ``None`` where upstream's
    ``NewWarningHeader`` refuses the text (not valid UTF-8, or a control
    character in it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if any(_is_control(c) for c in text):
        return None
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'{code:03d} {agent} "{quoted}"'


def warning_headers(texts: Iterable[str]) -> list[str]:
    """The ``Warning`` header values, in order, that upstream's recorder
    leaves on a response whose handler added ``texts`` in this order."""
    recorded: set[str] = set()
    ordered: list[str] = []
    headers: list[str] = []
    written = 0
    truncating = False
    for text in texts:
        if not text:
            continue
        if written >= TRUNCATE_AT_TOTAL_RUNES and truncating:
            continue
        if text in recorded:
            continue
        recorded.add(text)
        ordered.append(text)
        runes = len(text)
        if truncating and runes > TRUNCATE_ITEM_RUNES:
            text, runes = text[:TRUNCATE_ITEM_RUNES], TRUNCATE_ITEM_RUNES
        header = header_value(text)
        if header is None:
            continue
        if written + runes <= TRUNCATE_AT_TOTAL_RUNES or truncating:
            written += runes
            headers.append(header)
            continue
        # over the limit: every text so far written again, each cut short
        truncating, written, headers = True, 0, []
        for earlier in ordered:
            runes = len(earlier)
            if runes > TRUNCATE_ITEM_RUNES:
                earlier, runes = earlier[:TRUNCATE_ITEM_RUNES], TRUNCATE_ITEM_RUNES
            header = header_value(earlier)
            if header is not None:
                written += runes
                headers.append(header)
    return headers
