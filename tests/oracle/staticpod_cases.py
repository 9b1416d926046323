"""The differential check of static-pod manifests shared by the
``test_staticpod_*`` files: every manifest through the oracle
(``kubelet-oracle staticpod``) and through podnuma's agent, then the same
verdict asserted of both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.oracle.test_staticpod_differential import _oracle, _podnuma, kubelet_words


def decoded_cases(oracle_binary: str, directory: Path,
                  cases: dict[str, tuple[str, str | None]]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Each case's manifest written to ``directory`` and read by both: name
    -> (the kubelet's answer, podnuma's)."""
    files: list[Path] = []
    for name, (text, _) in cases.items():
        (directory / name).write_text(text)
        files.append(directory / name)
    return {f.name: (r, _podnuma(f)) for f, r in zip(files, _oracle(oracle_binary, files), strict=True)}


def assert_as_the_kubelet(kubelet: dict[str, Any], ours: dict[str, Any], phrase: str | None, *,
                          whole: bool = True) -> None:
    """Accepted by both (``phrase`` None: the same name and namespace), or
    refused by both with ``phrase`` in each error and, with ``whole``, the
    kubelet's whole message (every error, in its order) inside podnuma's."""
    if phrase is None:
        assert "error" not in kubelet, f"expected the kubelet to accept it: {kubelet['error']}"
        assert "error" not in ours, f"the kubelet accepts it; podnuma refuses: {ours['error']}"
        assert (ours["name"], ours["namespace"], ours["qosClass"]) == (
            kubelet["name"], kubelet["namespace"], kubelet["qosClass"])
        return
    assert "error" in kubelet, f"expected the kubelet to refuse it with {phrase!r}"
    assert phrase in kubelet["error"], kubelet["error"]
    assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
    assert phrase in ours["error"], ours["error"]
    if whole:
        assert kubelet_words(kubelet["error"]) in ours["error"], (kubelet["error"], ours["error"])
