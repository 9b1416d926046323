"""Where a "kubelet would not start" line puts the blame: on ``--set`` and
the field it set when the refused value came from the command line (as
``--set reservedSystemCPUs=99`` is), else on the file and the field path
(``kubeletConfig.maxPods`` in a scenario, ``maxPods`` in a kubelet
configuration file). The field is read from the kubelet's own message:
every message of ``ValidateKubeletConfiguration``
(``pkg/kubelet/apis/config/validation/validation.go`` and its
``validation_reserved_memory.go`` / ``validation_linux.go``) that names a
field maps back to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli
from podnuma.errors import KubeletStartupError
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.startup import config_field, startup_failure

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "examples" / "static-dual-socket.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def error_line(got: Result) -> str:
    assert got.exit_code == 2, got.output
    lines = [ln for ln in got.output.splitlines() if ln.startswith("error: kubelet would not start")]
    assert len(lines) == 1, got.output
    return lines[0]


SET_CASES = [
    ("maxPods=-5", "invalid configuration: maxPods (--max-pods) -5 must not be a negative number",
     "(--set: maxPods)"),
    ("podsPerCore=-1", "invalid configuration: podsPerCore (--pods-per-core) -1 must not be a negative number",
     "(--set: podsPerCore)"),
    ("memoryReservationPolicy=Foo", 'invalid configuration: option "Foo" specified for memoryReservationPolicy',
     "(--set: memoryReservationPolicy)"),
    ("featureGates.AllAlpha=true", "failed to set feature gates from initial flags-based config",
     "(--set: featureGates.AllAlpha)"),
    # a gate spelling a field's name is still a gate
    ("featureGates.CPUManagerPolicyOptions=false",
     "cannot set feature gate CPUManagerPolicyOptions to false, feature is locked to true",
     "(--set: featureGates.CPUManagerPolicyOptions)"),
]


@pytest.mark.parametrize(("item", "message", "where"), SET_CASES)
def test_a_value_from_set_is_blamed_on_set(item: str, message: str, where: str) -> None:
    line = error_line(run("simulate", str(STATIC), "--set", item))
    assert message in line
    assert line.endswith(where), line


FILE_CASES: list[tuple[dict[str, Any], str]] = [
    ({"maxPods": -5}, "kubeletConfig.maxPods"),
    ({"podsPerCore": -1}, "kubeletConfig.podsPerCore"),
    ({"memoryReservationPolicy": "Foo"}, "kubeletConfig.memoryReservationPolicy"),
    ({"featureGates": {"AllAlpha": True}}, "kubeletConfig.featureGates"),
    # a null gate is false (refused when locked to true, as unknown gates
    # are), blamed on the gates, not on the policy options its name spells
    ({"featureGates": {"CPUManagerPolicyOptions": None}}, "kubeletConfig.featureGates"),
    ({"featureGates": {"TopologyManagerPolicyOptions": None}}, "kubeletConfig.featureGates"),
    ({"featureGates": {"MemoryManagerPolicyOptions": None}}, "kubeletConfig.featureGates"),
]


@pytest.mark.parametrize(("fields", "path"), FILE_CASES)
def test_a_value_from_the_scenario_is_blamed_on_its_field(tmp_path: Path, fields: dict[str, Any], path: str) -> None:
    sc = yaml.safe_load(STATIC.read_text())
    sc["kubeletConfig"].update(fields)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(sc))
    line = error_line(run("simulate", str(scenario)))
    assert line.endswith(f"({scenario}: {path})"), line


@pytest.mark.parametrize(("fields", "path"), FILE_CASES)
def test_a_value_from_a_kubelet_config_file_is_blamed_on_its_field(
    tmp_path: Path, fields: dict[str, Any], path: str
) -> None:
    sc = yaml.safe_load(STATIC.read_text())
    config = dict(sc.pop("kubeletConfig"))
    config.update(fields)
    (tmp_path / "kc.yaml").write_text(yaml.safe_dump(config))
    sc["kubeletConfigFile"] = "kc.yaml"
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(sc))
    line = error_line(run("simulate", str(tmp_path / "s.yaml")))
    assert line.endswith(f"({tmp_path / 'kc.yaml'}: {path.removeprefix('kubeletConfig.')})"), line


def test_the_file_is_blamed_when_set_changed_another_field(tmp_path: Path) -> None:
    sc = yaml.safe_load(STATIC.read_text())
    sc["kubeletConfig"]["maxPods"] = -5
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(sc))
    line = error_line(run("simulate", str(tmp_path / "s.yaml"), "--set", "podsPerCore=2"))
    assert line.endswith(f"({tmp_path / 's.yaml'}: kubeletConfig.maxPods)"), line


def test_startup_failure_names_the_override() -> None:
    err = KubeletStartupError("invalid configuration: maxPods (--max-pods) -5 must not be a negative number")
    got = startup_failure(err, file="s.yaml", overrides=parse_overrides(["maxPods=-5"]))
    assert got.location() == "--set: maxPods"
    got = startup_failure(err, file="s.yaml")
    assert got.location() == "s.yaml: kubeletConfig.maxPods"


#: every message of ValidateKubeletConfiguration (v1.37.2) that names a
#: field, as the kubelet prints it, and that field
VALIDATION_MESSAGES = [
    ("nodeLeaseDurationSeconds must be greater than 0", "nodeLeaseDurationSeconds"),
    ("systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified",
     "systemCgroups"),
    ("eventBurst (--event-burst) -1 must not be a negative number", "eventBurst"),
    ("eventRecordQPS (--event-qps) -1 must not be a negative number", "eventRecordQPS"),
    ("healthzPort (--healthz-port) 0 must be between 1 and 65535, inclusive", "healthzPort"),
    ("cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {50ms} requires feature gate CustomCPUCFSQuotaPeriod",
     "cpuCFSQuotaPeriod"),
    ("cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {2s} must be between 1ms and 1sec, inclusive",
     "cpuCFSQuotaPeriod"),
    ("imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be between 0 and 100, inclusive",
     "imageGCHighThresholdPercent"),
    ("imageGCLowThresholdPercent (--image-gc-low-threshold) -1 must be between 0 and 100, inclusive",
     "imageGCLowThresholdPercent"),
    ("imageGCLowThresholdPercent (--image-gc-low-threshold) 90 must be less than imageGCHighThresholdPercent "
     "(--image-gc-high-threshold) 80", "imageGCLowThresholdPercent"),
    ("ImageMaximumGCAge feature gate is required for Kubelet configuration option imageMaximumGCAge",
     "imageMaximumGCAge"),
    ("DefaultPodSysctls feature gate is required for Kubelet configuration option defaultPodSysctls",
     "defaultPodSysctls"),
    ('"port" is not a valid sysctl name for defaultPodSysctls', "defaultPodSysctls"),
    ('"kernel.foo" is not known to be namespaced for defaultPodSysctls', "defaultPodSysctls"),
    ('duplicate sysctl "net.ipv4.ip_forward" found in defaultPodSysctls', "defaultPodSysctls"),
    ("imageMinimumGCAge -1s must not be negative", "imageMinimumGCAge"),
    ("imageMaximumGCAge -1s must not be negative", "imageMaximumGCAge"),
    ("imageMaximumGCAge 1m0s must be greater than imageMinimumGCAge 2m0s", "imageMaximumGCAge"),
    ("iptablesDropBit (--iptables-drop-bit) 32 must be between 0 and 31, inclusive", "iptablesDropBit"),
    ("iptablesMasqueradeBit (--iptables-masquerade-bit) 32 must be between 0 and 31, inclusive",
     "iptablesMasqueradeBit"),
    ("kubeAPIBurst (--kube-api-burst) -1 must not be a negative number", "kubeAPIBurst"),
    ("kubeAPIQPS (--kube-api-qps) -1 must not be a negative number", "kubeAPIQPS"),
    ("nodeStatusMaxImages (--node-status-max-images) -2 must be -1 or greater", "nodeStatusMaxImages"),
    ("maxOpenFiles (--max-open-files) -1 must not be a negative number", "maxOpenFiles"),
    ("maxPods (--max-pods) -5 must not be a negative number", "maxPods"),
    ("oomScoreAdj (--oom-score-adj) 1001 must be between -1000 and 1000, inclusive", "oomScoreAdj"),
    ("podsPerCore (--pods-per-core) -1 must not be a negative number", "podsPerCore"),
    ("port (--port) 0 must be between 1 and 65535, inclusive", "port"),
    ("readOnlyPort (--read-only-port) -1 must be between 0 and 65535, inclusive", "readOnlyPort"),
    ("registryBurst (--registry-burst) -1 must not be a negative number", "registryBurst"),
    ("registryPullQPS (--registry-qps) -1 must not be a negative number", "registryPullQPS"),
    ("maxParallelImagePulls 0 must be a positive number", "maxParallelImagePulls"),
    ("maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is "
     "set to false", "maxParallelImagePulls"),
    ("serverTLSBootstrap true requires feature gate RotateKubeletServerCertificate", "serverTLSBootstrap"),
    ("runOnce (--runOnce) true, Runonce mode has been deprecated and should not be set", "runOnce"),
    ('topologyManagerPolicy (--topology-manager-policy) "x" must be one of: ["none" "best-effort" '
     '"restricted" "single-numa-node"]', "topologyManagerPolicy"),
    ('topologyManagerScope (--topology-manager-scope) "x" must be one of: "container", or "pod"',
     "topologyManagerScope"),
    ("shutdownGracePeriodCriticalPods 2m0s must be <= shutdownGracePeriod 1m0s",
     "shutdownGracePeriodCriticalPods"),
    ("shutdownGracePeriod 500ms must be either zero or otherwise >= 1 sec", "shutdownGracePeriod"),
    ("shutdownGracePeriodCriticalPods 500ms must be either zero or otherwise >= 1 sec",
     "shutdownGracePeriodCriticalPods"),
    ("specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate "
     "GracefulNodeShutdown", "shutdownGracePeriod"),
    ("Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time",
     "shutdownGracePeriodByPodPriority"),
    ("Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority",
     "shutdownGracePeriodByPodPriority"),
    ('memorySwap.swapBehavior "Foo" must be one of: "", "LimitedSwap" or "NoSwap"', "memorySwap.swapBehavior"),
    ("memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled", "memorySwap.swapBehavior"),
    ("FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set",
     "crashLoopBackOff.maxContainerRestartPeriod"),
    ("CrashLoopBackOff.MaxContainerRestartPeriod (got: 500 seconds) must be set between 1s and 300s",
     "crashLoopBackOff.maxContainerRestartPeriod"),
    ("FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not "
     "be set", "crashLoopBackOff.maxContainerRestartPeriod"),
    ('both "none" and "pods" cannot be specified together in enforceNodeAllocatable '
     "(--enforce-node-allocatable)", "enforceNodeAllocatable"),
    ('duplicated enforcements "pods" in enforceNodeAllocatable (--enforce-node-allocatable)',
     "enforceNodeAllocatable"),
    ('systemReservedCgroup (--system-reserved-cgroup) must be specified when "system-reserved" or '
     '"system-reserved-compressible" included in enforceNodeAllocatable (--enforce-node-allocatable)',
     "systemReservedCgroup"),
    ('kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "kube-reserved" or '
     '"kube-reserved-compressible" included in enforceNodeAllocatable (--enforce-node-allocatable)',
     "kubeReservedCgroup"),
    ('enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" '
     "is specified", "enforceNodeAllocatable"),
    ('option "port" specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are '
     '"pods", "system-reserved", "system-reserved-compressible", "kube-reserved", '
     '"kube-reserved-compressible" or "none"', "enforceNodeAllocatable"),
    ('cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods" contained in enforceNodeAllocatable '
     "(--enforce-node-allocatable)", "cgroupsPerQOS"),
    ('option "foo" specified for hairpinMode (--hairpin-mode). Valid options are "promiscuous-bridge", '
     '"hairpin-veth" or "none"', "hairpinMode"),
    ('option "foo" specified for imagePullCredentialsVerificationPolicy. Valid options are '
     '"NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"',
     "imagePullCredentialsVerificationPolicy"),
    ("can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not "
     '"NeverVerifyAllowlistedImages"', "preloadedImagesVerificationAllowlist"),
    ("invalid image pattern in `preloadedImagesVerificationAllowlist`: bad", "preloadedImagesVerificationAllowlist"),
    ("`imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate "
     "is not enabled", "imagePullCredentialsVerificationPolicy"),
    ("`preloadedImagesVerificationAllowlist` must not be set if KubeletEnsureSecretPulledImages feature gate "
     "is not enabled", "preloadedImagesVerificationAllowlist"),
    ("can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or "
     "kubeReservedCgroup (--kube-reserved-cgroup)", "reservedSystemCPUs"),
    ('unable to parse reservedSystemCPUs (--reserved-cpus) x, error: strconv.Atoi: parsing "x": invalid syntax',
     "reservedSystemCPUs"),
    ('the limit type "cpu" for NUMA node 0 is not supported, only [memory hugepages-<HugePageSize>] is '
     "accepted", "reservedMemory"),
    ('reserved memory may not be zero for NUMA node 0 and resource "memory"', "reservedMemory"),
    ('the reserved memory has a duplicate value for NUMA node 0 and resource "memory"', "reservedMemory"),
    ("singleProcessOOMKill must not be explicitly set to false when using cgroup v1", "singleProcessOOMKill"),
    ("userNamespaces.idsPerPod must not be less than 65536", "userNamespaces.idsPerPod"),
    ("userNamespaces.idsPerPod must be a multiple of 65536", "userNamespaces.idsPerPod"),
    ("memoryThrottlingFactor must not be set when MemoryQoS feature gate is disabled", "memoryThrottlingFactor"),
    ("memoryThrottlingFactor 1.5 must be greater than 0 and less than or equal to 1.0", "memoryThrottlingFactor"),
    ('memoryReservationPolicy "TieredReservation" requires MemoryQoS feature gate to be enabled',
     "memoryReservationPolicy"),
    ('option "Foo" specified for memoryReservationPolicy. Valid options are "None" or "TieredReservation"',
     "memoryReservationPolicy"),
    ("the containerRuntimeEndpoint was not specified or empty", "containerRuntimeEndpoint"),
    ("NodeLogQuery feature gate is required for enableSystemLogQuery", "enableSystemLogQuery"),
    ("enableSystemLogHandler is required for enableSystemLogQuery", "enableSystemLogHandler"),
    ("containerLogMaxWorkers must be greater than or equal to 1", "containerLogMaxWorkers"),
    ("containerLogMonitorInterval must be a positive time duration greater than or equal to 3s",
     "containerLogMonitorInterval"),
    ("containerLogMaxFiles must be greater than 1", "containerLogMaxFiles"),
    ("podLogsDir was not specified", "podLogsDir"),
    ('pod logs path "var/log" must be absolute path', "podLogsDir"),
    ('pod logs path "/var//log" must be normalized', "podLogsDir"),
    ('pod logs path "/var/lög" mut contains ASCII characters only', "podLogsDir"),
]

#: the messages of the same validation that are not "invalid configuration:"
OTHER_MESSAGES = [
    ("invalid taint: {port value Foo <nil>}", "registerWithTaints"),
    ("invalid configuration: taint.TimeAdded is not nil", "registerWithTaints"),
    ('logging.format: Unsupported value: "foo": supported values: "text"', "logging.format"),
    ("tracing.samplingRatePerMillion: Invalid value: -1: sampling rate must be positive",
     "tracing.samplingRatePerMillion"),
    ("--show-hidden-metrics-for-version must be omitted or have the value '1.36'. Only the previous minor "
     "version is allowed", "showHiddenMetricsForVersion"),
]


@pytest.mark.parametrize(("message", "field"), VALIDATION_MESSAGES)
def test_each_validation_message_maps_to_its_field(message: str, field: str) -> None:
    assert config_field("invalid configuration: " + message) == field


@pytest.mark.parametrize(("message", "field"), OTHER_MESSAGES)
def test_the_other_validation_messages_map_to_their_field(message: str, field: str) -> None:
    assert config_field(message) == field


def test_an_aggregate_names_its_first_field() -> None:
    message = ("[invalid configuration: podsPerCore (--pods-per-core) -1 must not be a negative number, "
               "invalid configuration: maxPods (--max-pods) -5 must not be a negative number]")
    assert config_field(message) == "podsPerCore"


#: the messages of ValidateKubeletConfiguration about enforceNodeAllocatable
#: (validation.go ~262-315) and the field each is blamed on: the field the
#: message names first by its JSON name with its flag
ENFORCEMENT_CASES: list[tuple[dict[str, Any], str, str]] = [
    ({"enforceNodeAllocatable": ["full-pcpus-only"]}, 'option "full-pcpus-only" specified for',
     "enforceNodeAllocatable"),
    ({"enforceNodeAllocatable": ["prefer-closest-numa-nodes"]}, 'option "prefer-closest-numa-nodes" specified for',
     "enforceNodeAllocatable"),
    ({"enforceNodeAllocatable": [None]}, 'option "" specified for', "enforceNodeAllocatable"),
    ({"enforceNodeAllocatable": ["pods", "pods"]}, 'duplicated enforcements "pods"', "enforceNodeAllocatable"),
    ({"enforceNodeAllocatable": ["none", "pods"]}, "may not contain additional enforcements",
     "enforceNodeAllocatable"),
    ({"enforceNodeAllocatable": ["kube-reserved", "kube-reserved-compressible"], "kubeReservedCgroup": "/k"},
     "cannot be specified together", "enforceNodeAllocatable"),
    ({"enforceNodeAllocatable": ["system-reserved"]}, "systemReservedCgroup (--system-reserved-cgroup) must be",
     "systemReservedCgroup"),
    ({"enforceNodeAllocatable": ["kube-reserved"]}, "kubeReservedCgroup (--kube-reserved-cgroup) must be",
     "kubeReservedCgroup"),
    ({"cgroupsPerQOS": False}, "cgroupsPerQOS (--cgroups-per-qos) must be set to true", "cgroupsPerQOS"),
    ({"memoryReservationPolicy": "full-pcpus-only"}, 'option "full-pcpus-only" specified for memoryReservationPolicy',
     "memoryReservationPolicy"),
]


@pytest.mark.parametrize(("fields", "words", "field"), ENFORCEMENT_CASES)
def test_enforcement_messages_are_blamed_on_their_field(
    tmp_path: Path, fields: dict[str, Any], words: str, field: str
) -> None:
    # a policy option of the same name as the refused value must not take
    # the blame (the option is named in the message only as a value)
    sc = yaml.safe_load(STATIC.read_text())
    sc["kubeletConfig"].update(fields)
    sc["kubeletConfig"]["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
    sc["kubeletConfig"]["topologyManagerPolicyOptions"] = {"prefer-closest-numa-nodes": "true"}
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(sc))
    line = error_line(run("simulate", str(scenario)))
    assert words in line
    assert line.endswith(f"({scenario}: kubeletConfig.{field})"), line
    config = dict(sc.pop("kubeletConfig"))
    (tmp_path / "kc.yaml").write_text(yaml.safe_dump(config))
    sc["kubeletConfigFile"] = "kc.yaml"
    scenario.write_text(yaml.safe_dump(sc))
    line = error_line(run("simulate", str(scenario)))
    assert line.endswith(f"({tmp_path / 'kc.yaml'}: {field})"), line


def test_a_flagged_field_wins_over_a_policy_option_of_the_same_name() -> None:
    from podnuma.api.kubeletconfig import KubeletConfig

    config = KubeletConfig(cpu_manager_policy_options={"full-pcpus-only": "true"},
                           topology_manager_policy_options={"max-allowable-numa-nodes": "9"})
    message = ('invalid configuration: option "full-pcpus-only" specified for enforceNodeAllocatable '
               '(--enforce-node-allocatable). Valid options are "pods", "system-reserved", '
               '"system-reserved-compressible", "kube-reserved", "kube-reserved-compressible" or "none"')
    assert config_field(message, config) == "enforceNodeAllocatable"
    # the managers' own option messages still name the option's field
    assert config_field('unknown CPU Manager Policy option: "full-pcpus-only"', config) == "cpuManagerPolicyOptions"
    assert config_field('bad value for option "max-allowable-numa-nodes": x', config) == \
        "topologyManagerPolicyOptions"
