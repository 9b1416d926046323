"""One name for one thing wherever the user meets it: the CPUs pinned to
sidecars alone are ``sidecar-only CPUs`` in ``demo``'s side-by-side as in
``compare`` and ``advise``; and docs/cli.md names ``advise
--as-scenario``'s other node shapes' files as advise writes them (the
shape number before the suffix: ``replay.shape-1.yaml``)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from podnuma.cli import cli

ROOT = Path(__file__).resolve().parents[2]
WHATIF = ROOT / "examples" / "whatif"

WIDE = """\
apiVersion: v1
kind: Pod
metadata: {name: wide, namespace: ml}
spec:
  initContainers:
    - name: logs
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 64Mi}}
  containers:
    - name: app
      resources: {limits: {cpu: "32", memory: 128Mi}}
"""


def test_demo_names_the_sidecar_figure_as_compare_and_advise_do() -> None:
    demo = CliRunner().invoke(cli, ["demo"])
    assert demo.exit_code == 0, demo.output
    compare = CliRunner().invoke(cli, ["compare", str(WHATIF / "trainer-pod.yaml"), "--node", str(WHATIF / "node.yaml"),
                                       "--kubelet-config", str(WHATIF / "kubelet-config.yaml")])
    assert compare.exit_code == 0, compare.output
    for out in (demo.stdout, compare.stdout):
        assert "sidecar-only CPUs" in out
        assert "held by sidecars" not in out
    # (the demo's page shows the same rows)
    page = (ROOT / "docs" / "commands" / "demo.md").read_text(encoding="utf-8")
    assert " sidecar-only CPUs          3                         0\n" in page
    assert " sidecar-only CPUs          3                         0\n" in demo.stdout


def test_cli_md_names_the_shape_files_as_advise_writes_them(tmp_path: Path) -> None:
    pod = tmp_path / "wide.yaml"
    pod.write_text(WIDE)
    out = tmp_path / "replay.yaml"
    r = CliRunner().invoke(cli, ["advise", str(pod), "--node", str(WHATIF / "node.yaml"), "--kubelet-config",
                                 str(WHATIF / "kubelet-config.yaml"), "--as-scenario", str(out)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "replay.shape-1.yaml").is_file()
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "`replay.shape-1.yaml` for\n  `replay.yaml`" in text
    assert "(`FILE.shape-K`) and" not in text
