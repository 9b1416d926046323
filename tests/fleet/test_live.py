"""Reading a live cluster: what needs no API server. The live-cluster tests
proper run against a real kube-apiserver on loopback (tests/cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import need


def _kubeconfig(tmp_path: Path, server: str) -> Path:
    p = tmp_path / "kubeconfig"
    p.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {{server: "{server}"}}
users:
- name: reader
  user: {{token: some-token}}
contexts:
- name: nowhere
  context: {{cluster: nowhere, user: reader}}
current-context: nowhere
""")
    return p


def test_unreachable_api_server_is_an_input_error(tmp_path: Path) -> None:
    need("kubernetes")
    import socket

    from podnuma.errors import InputError
    from podnuma.fleet.live import load_live

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(InputError, match="cannot reach the API server"):
        load_live(str(_kubeconfig(tmp_path, f"http://127.0.0.1:{port}")))
