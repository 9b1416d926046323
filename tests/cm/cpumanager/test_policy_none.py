"""The none policy: upstream policy_none_test.go."""

from __future__ import annotations

import pytest

from podnuma.cm.cpumanager.policy_none import NonePolicy, new_none_policy
from podnuma.errors import KubeletStartupError
from tests.cm.cpumanager.cpu_policy_helpers import cs, make_pod, make_state


def test_none_policy_name() -> None:
    assert NonePolicy().name() == "none"


def test_none_policy_allocate() -> None:
    st = make_state(cs(1, 2, 3, 4, 5, 6, 7))
    pod = make_pod("fakePod", "fakeContainer1", "1000m", "1000m")
    NonePolicy().allocate(st, pod, pod.containers[0])
    assert st.assignments == {}
    assert st.default_cpuset == cs(1, 2, 3, 4, 5, 6, 7)


def test_none_policy_remove() -> None:
    st = make_state(cs(1, 2, 3, 4, 5, 6, 7))
    NonePolicy().remove_container(st, "fakePod", "fakeContainer1")
    assert st.default_cpuset == cs(1, 2, 3, 4, 5, 6, 7)


def test_none_policy_get_allocatable_cpus() -> None:
    st = make_state(cs(*range(8)))
    assert NonePolicy().get_allocatable_cpus(st).is_empty()


def test_none_policy_hints_are_nil() -> None:
    st = make_state(cs(*range(8)))
    pod = make_pod("fakePod", "c", "2", "2")
    assert NonePolicy().get_topology_hints(st, pod, pod.containers[0]) is None
    assert NonePolicy().get_pod_topology_hints(st, pod) is None


def test_none_policy_start_leaves_state_alone() -> None:
    st = make_state(cs(), {"p": {"c": cs(1)}})
    NonePolicy().start(st)  # no validation under none
    assert st.default_cpuset == cs()


@pytest.mark.parametrize(
    ("description", "options", "error"),
    [
        ("nil args", None, None),
        ("empty args", {}, None),
        ("bad single arg", {"full-pcpus-only": "true"},
         "None policy: received unsupported options=map[full-pcpus-only:true]"),
        ("two args", {"b": "2", "a": "1"}, "None policy: received unsupported options=map[a:1 b:2]"),
    ],
)
def test_none_policy_options(description: str, options: dict[str, str] | None, error: str | None) -> None:
    if error is None:
        assert new_none_policy(options).name() == "none"
    else:
        with pytest.raises(KubeletStartupError) as exc:
            new_none_policy(options)
        assert str(exc.value) == error
