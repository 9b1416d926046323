"""sysfs discovery past what cadvisor's integers hold, and the numbers read
with Go's ``fmt.Sscanf`` (``podnuma.golang.fmtscan``). The kubelet's answers
for the same trees are compared in tests/oracle/test_sysfs_wrap.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnuma.cm.container_manager import go_int64
from podnuma.golang.fmtscan import ScanError, go_trim_space, sscanf_int
from podnuma.inputs.discover.sysfs import load_sysfs, read_sysfs
from tests.inputs.test_discover_sysfs import Tree

U64 = (1 << 64) - 1


# ---------------------------------------------------------------- fmt.Sscanf


@pytest.mark.parametrize(
    ("text", "unsigned", "literal", "value"),
    [
        ("5", True, "", 5), (" \t5\n", True, "", 5), ("\r5", True, "", 5), ("\u00a0\u30005", True, "", 5),
        ("5 6", True, "", 5), ("5x", True, "", 5), ("007", True, "", 7), ("4\n5", True, "", 4),
        (str(U64), True, "", U64), ("+5", False, "", 5), ("-5", False, "", -5),
        (str(-(1 << 63)), False, "", -(1 << 63)), ("8192K\n", True, "K", 8192), (" 8192K", True, "K", 8192),
    ],
)
def test_sscanf_reads_what_go_reads(text: str, unsigned: bool, literal: str, value: int) -> None:
    assert sscanf_int(text, unsigned=unsigned, literal=literal) == value


@pytest.mark.parametrize(
    ("text", "unsigned", "literal", "error"),
    [
        ("\n5", True, "", "unexpected newline"), ("\r\n5", True, "", "unexpected newline"),
        (" \n5", False, "", "unexpected newline"), ("", True, "", "EOF"), ("  ", True, "", "EOF"),
        ("+5", True, "", "expected integer"), ("-5", True, "", "expected integer"), ("x", False, "", "expected integer"),
        ("+", False, "", "EOF"), ("\ufeff5", True, "", "expected integer"), ("\u0665", True, "", "expected integer"),
        (str(U64 + 1), True, "", f'strconv.ParseUint: parsing "{U64 + 1}": value out of range'),
        (str(1 << 63), False, "", f'strconv.ParseInt: parsing "{1 << 63}": value out of range'),
        ("9" * 5000, True, "", "value out of range"),
        ("8192", True, "K", "unexpected EOF"), ("8192 K", True, "K", "input does not match format"),
    ],
)
def test_sscanf_fails_where_go_fails(text: str, unsigned: bool, literal: str, error: str) -> None:
    with pytest.raises(ScanError) as exc:
        sscanf_int(text, unsigned=unsigned, literal=literal)
    assert error in str(exc.value)


def test_trim_space_is_unicode_is_space() -> None:
    assert go_trim_space("\u0085\v\f 5\u2028\u3000\n") == "5"
    assert go_trim_space("\ufeff5\u200b") == "\ufeff5\u200b"  # (not white space for Go)


# ------------------------------------------------------------ discovery wraps


def _tree(tmp_path: Path, hugepages: dict[int, dict[int, int]], meminfo_kb: int = 8 << 20) -> Path:
    return Tree(cpus={0: (0, 0), 1: (1, 0), 2: (0, 0), 3: (1, 0)}, nodes={0: [0, 1], 1: [2, 3]},
                meminfo_kb={0: meminfo_kb, 1: meminfo_kb}, hugepages=hugepages).write(tmp_path)


def test_hugepage_pools_past_an_int64_are_kept_as_cadvisor_reports_them(tmp_path: Path) -> None:
    pages = (1 << 33) + 1  # 2^63 + 1 GiB of 1 GiB pages
    machine = load_sysfs(_tree(tmp_path, {0: {1048576: pages}, 1: {1048576: 1}}))
    assert machine.numa_nodes[0].hugepages == {1 << 30: (1 << 63) + (1 << 30)}
    total = machine.hugepage_capacity()[1 << 30]
    assert go_int64(total) == -(1 << 63) + (2 << 30)  # (the kubelet's capacity)


def test_page_counts_and_pool_bytes_wrap_at_2_to_the_64(tmp_path: Path) -> None:
    # each node 2^63 pages of 2 MiB: 2^84 bytes wrap to 0; the machine's 2^64 pages to 0
    info = read_sysfs(_tree(tmp_path, {0: {2048: 1 << 63}, 1: {2048: 1 << 63}}))
    assert [(hp.page_size, hp.num_pages) for hp in info.hugepages] == [(2048, 0)]
    machine = load_sysfs(tmp_path)
    assert [n.hugepages for n in machine.numa_nodes] == [{2 << 20: 0}, {2 << 20: 0}]
    assert machine.hugepage_capacity() == {2 << 20: 0}


def test_node_memtotal_bytes_wrap_and_so_does_their_sum(tmp_path: Path) -> None:
    # 2^53 + 8 GiB kB per node: each wraps to 2^63 + 8 GiB bytes, the sum to 16 GiB
    info = read_sysfs(_tree(tmp_path, {}, meminfo_kb=(1 << 53) + (8 << 20)))
    assert [n.memory for n in info.topology] == [(1 << 63) + (8 << 30)] * 2
    assert info.memory_capacity == 16 << 30
