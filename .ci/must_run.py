"""Fail CI when a test that must run there was skipped.

Reads pytest's JUnit report; the suites listed below need Go (the kubelet
oracle), Debian's chromium, or the loopback cluster's binaries
(kube-apiserver, etcd, kubectl, kubelet, fake CRI: cluster/build), which
.ci/run installs or builds, so a skip there means the run proved nothing
about them.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

MUST_RUN = ("tests.oracle.", "tests.web.test_browser", "tests.agent.", "tests.fleet.",
            "tests.cluster.")


def _skipped(case: ET.Element) -> bool:
    """Skipped, not an expected failure (JUnit lists a strict xfail that
    failed as expected under <skipped type="pytest.xfail">: it ran)."""
    skipped = case.find("skipped")
    return skipped is not None and skipped.get("type") != "pytest.xfail"


def main(path: str) -> int:
    root = ET.parse(path).getroot()
    ran = skipped = 0
    bad: list[str] = []
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if _skipped(case):
            skipped += 1
            if name.startswith(MUST_RUN):
                msg = case.find("skipped")
                reason = msg.get("message", "") if msg is not None else ""
                bad.append(f"{name}: {reason}")
        else:
            ran += 1
    must = sum(
        1
        for case in root.iter("testcase")
        if f"{case.get('classname', '')}".startswith(MUST_RUN) and not _skipped(case)
    )
    print(f"{ran} tests ran, {skipped} skipped; {must} of them in suites that must run in CI")
    if bad:
        print("skipped although CI must run them:", file=sys.stderr)
        for line in bad:
            print(f"  {line}", file=sys.stderr)
        return 1
    if must == 0:
        print("no test of the must-run suites ran", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
