"""fleet analyze's contradictions between a node form and the node's
status: what the kubelet reserves is its capacity less its allocatable
(never a negative figure), and a form with another number of CPUs than
the node's capacity is said to be another machine."""

from __future__ import annotations

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.fleet.assumptions import contradictions

CONFIG = load_kubelet_config({"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"})


def test_a_form_of_another_machine_is_said_and_reserves_come_from_the_capacity() -> None:
    said = contradictions(CONFIG, 16, allocatable={"cpu": "31"}, capacity={"cpu": "32"}, nrt_attributes={})
    assert said == [
        "status.capacity cpu is 32, the node form has 16 CPUs: the form is not this node's machine",
        "status.allocatable cpu is 31, the configuration gives 15 (16 CPUs, 1 reserved): the kubelet "
        "reserves 1 CPUs of its status.capacity (kubeReserved, systemReserved or reservedSystemCPUs)",
    ]


def test_reserving_more_than_the_machine_gives_no_negative_figure() -> None:
    config = load_kubelet_config({"cpuManagerPolicy": "static", "reservedSystemCPUs": "0-200"})
    (said,) = contradictions(config, 64, allocatable={"cpu": "63"}, capacity={"cpu": "64"}, nrt_attributes={})
    assert said.startswith("status.allocatable cpu is 63, the configuration gives 0 (64 CPUs, 201 reserved "
                           "(more than the machine has)): the kubelet reserves 1 CPUs")
    assert "-137" not in said


def test_allocatable_above_the_capacity_is_said_so() -> None:
    (said,) = contradictions(CONFIG, 8, allocatable={"cpu": "9"}, capacity={"cpu": "8"}, nrt_attributes={})
    assert said.endswith(": more than the node's capacity") and "reserves" not in said


def test_agreeing_status_says_nothing() -> None:
    assert contradictions(CONFIG, 8, allocatable={"cpu": "7"}, capacity={"cpu": "8"}, nrt_attributes={}) == []
