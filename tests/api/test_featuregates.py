"""Feature gates: v1.37 defaults and component-base SetFromMap behaviour."""

from __future__ import annotations

import pytest

from podnuma.api.featuregates import DEPENDENCIES, KNOWN_FEATURES, FeatureGates, Maturity
from podnuma.errors import KubeletStartupError


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("CPUManagerPolicyAlphaOptions", False),
        ("CPUManagerPolicyBetaOptions", True),
        ("CPUManagerPolicyOptions", True),
        ("TopologyManagerPolicyAlphaOptions", False),
        ("TopologyManagerPolicyBetaOptions", True),
        ("TopologyManagerPolicyOptions", True),
        ("PodLevelResources", True),
        ("PodLevelResourceManagers", False),
        ("PodLevelResourcesFixDefaulting", True),
        ("InPlacePodVerticalScaling", True),
        ("InPlacePodVerticalScalingExclusiveCPUs", False),
    ],
)
def test_defaults(name: str, expected: bool) -> None:
    assert FeatureGates.defaults().enabled(name) is expected


@pytest.mark.parametrize("name", ["MemoryManager", "SidecarContainers", "TopologyAwareHints"])
def test_gates_removed_before_v137_are_unrecognized(name: str) -> None:
    with pytest.raises(KubeletStartupError, match=f"unrecognized feature gate: {name}"):
        FeatureGates.from_mapping({name: True})


def test_gate_table_spellings_and_locks() -> None:
    # the Go identifier and the gate's name differ for some gates
    assert "CustomCPUCFSQuotaPeriod" in KNOWN_FEATURES and "CPUCFSQuotaPeriod" not in KNOWN_FEATURES
    assert KNOWN_FEATURES["NodeSwap"].locked
    assert DEPENDENCIES["ClusterTrustBundleProjection"] == ("ClusterTrustBundle",)
    with pytest.raises(KubeletStartupError, match="depends on features that are disabled"):
        FeatureGates.from_mapping({"TopologyAwareWorkloadScheduling": True})


def test_pod_level_resource_managers_is_beta_off() -> None:
    spec = KNOWN_FEATURES["PodLevelResourceManagers"]
    assert spec.maturity is Maturity.BETA and spec.default is False
    assert DEPENDENCIES["PodLevelResourceManagers"] == ("PodLevelResources",)


@pytest.mark.parametrize(
    ("settings", "enabled", "expected"),
    [
        ({"PodLevelResourceManagers": True}, "PodLevelResourceManagers", True),
        ({"CPUManagerPolicyAlphaOptions": True}, "CPUManagerPolicyAlphaOptions", True),
        ({"CPUManagerPolicyBetaOptions": False}, "CPUManagerPolicyBetaOptions", False),
        # AllAlpha alone turns on alpha gates whose beta dependency
        # (GenericWorkload) stays off: the beta gate must come along
        ({"AllAlpha": True, "GenericWorkload": True}, "CPUManagerPolicyAlphaOptions", True),
        ({"AllAlpha": True, "GenericWorkload": True}, "TopologyManagerPolicyAlphaOptions", True),
        ({"AllAlpha": True, "GenericWorkload": True, "CPUManagerPolicyAlphaOptions": False},
         "CPUManagerPolicyAlphaOptions", False),
        ({"CPUManagerPolicyAlphaOptions": False, "GenericWorkload": True, "AllAlpha": True},
         "CPUManagerPolicyAlphaOptions", False),
        ({"AllBeta": True}, "PodLevelResourceManagers", True),
        # Setting a locked gate to its locked value is fine.
        ({"CPUManagerPolicyOptions": True}, "CPUManagerPolicyOptions", True),
        # A real gate podnuma does not interpret is accepted.
        ({"KubeletTracing": True}, "KubeletTracing", True),
        # Disabling the dependency together with its dependents is fine.
        ({"PodLevelResources": False, "PodLevelResourcesFixDefaulting": False,
          "PodLevelResourcesFixKubeletQOSClass": False,
          "InPlacePodLevelResourcesVerticalScaling": False}, "PodLevelResources", False),
    ],
)
def test_from_mapping(settings: dict[str, bool], enabled: str, expected: bool) -> None:
    assert FeatureGates.from_mapping(settings).enabled(enabled) is expected


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"PodLevelResourceManager": True}, "unrecognized feature gate: PodLevelResourceManager"),
        ({"CPUManagerPolicyOptions": False},
         "cannot set feature gate CPUManagerPolicyOptions to false, feature is locked to true"),
        ({"NodeSwap": False},
         "cannot set feature gate NodeSwap to false, feature is locked to true"),
        ({"KubeletPSI": False, "InPlacePodVerticalScaling": False},
         "[cannot set feature gate KubeletPSI to false, feature is locked to true, "
         "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true]"),
        # upstream stops at the first unknown gate, keeping earlier errors
        ({"KubeletPSI": False, "Nope": True, "Other": True},
         "[cannot set feature gate KubeletPSI to false, feature is locked to true, "
         "unrecognized feature gate: Nope]"),
        ({"AllAlpha": True},
         "[CompositePodGroup is enabled, but depends on features that are disabled: [GenericWorkload], "
         "PodGroupPreemptionPolicy is enabled, but depends on features that are disabled: [GenericWorkload], "
         "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: "
         "[GenericWorkload], WorkloadWithJob is enabled, but depends on features that are disabled: "
         "[GenericWorkload]]"),
        ({"PodLevelResources": False, "PodLevelResourcesFixDefaulting": False,
          "InPlacePodLevelResourcesVerticalScaling": False},
         "PodLevelResourcesFixKubeletQOSClass is enabled, but depends on features that are "
         "disabled: [PodLevelResources]"),
        ({"PodLevelResources": False, "PodLevelResourceManagers": True,
          "PodLevelResourcesFixDefaulting": False, "PodLevelResourcesFixKubeletQOSClass": False,
          "InPlacePodLevelResourcesVerticalScaling": False},
         "PodLevelResourceManagers is enabled, but depends on features that are disabled: "
         "[PodLevelResources]"),
        ({"PodLevelResources": False},
         "[InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that "
         "are disabled: [PodLevelResources], PodLevelResourcesFixDefaulting is enabled, but depends on features that are disabled: "
         "[PodLevelResources], PodLevelResourcesFixKubeletQOSClass is enabled, but depends on "
         "features that are disabled: [PodLevelResources]]"),
        ({"AllBeta": False, "PodLevelResourceManagers": True},
         "PodLevelResourceManagers is enabled, but depends on features that are disabled: "
         "[PodLevelResources]"),
    ],
)
def test_from_mapping_errors(settings: dict[str, bool], message: str) -> None:
    with pytest.raises(KubeletStartupError) as exc:
        FeatureGates.from_mapping(settings)
    assert str(exc.value) == message


def test_enabled_unknown_gate_is_programming_error() -> None:
    with pytest.raises(ValueError):
        FeatureGates.defaults().enabled("NoSuchGate")


def test_as_dict_and_equality() -> None:
    gates = FeatureGates.from_mapping({"PodLevelResourceManagers": True})
    d = gates.as_dict()
    assert d["PodLevelResourceManagers"] is True
    assert d["PodLevelResources"] is True
    assert "AllAlpha" not in d
    assert list(d) == sorted(d)
    assert gates == FeatureGates.from_mapping({"PodLevelResourceManagers": True})
    assert gates != FeatureGates.defaults()
    # explicit defaults compare equal to nothing set
    assert FeatureGates.from_mapping({"PodLevelResources": True}) == FeatureGates.defaults()
    assert gates.explicit() == {"PodLevelResourceManagers": True}
