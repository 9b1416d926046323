"""The shape of ``KubeletConfiguration`` (kubelet.config.k8s.io/v1beta1) at
Kubernetes v1.37.2, as data: every JSON field the kubelet's decoder knows,
how it is read (``staging/src/k8s.io/kubelet/config/v1beta1/types.go`` and
the types it embeds), for the strict and lenient decoding of
``pkg/kubelet/kubeletconfig/util/codec``.

A schema is a scalar kind (``"string"``, ``"bool"``, ``"int32"``,
``"int64"``, ``"uint32"``, ``"uint64"``, ``"float"``, or ``"any"`` for a type
with a decoder of its own that takes several JSON forms), or
``("struct", {field: schema})``, ``("map", schema)``, ``("list", schema)``.
Generated from the Go types by ``kubelet-oracle kubeletconfig --schema``;
``tests/oracle/test_kubeletconfig_differential.py`` checks it still matches.
"""

from __future__ import annotations

from typing import Any, Final

SCHEMA: Final[Any] = ("struct", {
    "address": "string",
    "allowedUnsafeSysctls": ("list", "string"),
    "apiVersion": "string",
    "authentication": ("struct", {
        "anonymous": ("struct", {
            "enabled": "bool",
        }),
        "webhook": ("struct", {
            "cacheTTL": "string",
            "enabled": "bool",
        }),
        "x509": ("struct", {
            "clientCAFile": "string",
        }),
    }),
    "authorization": ("struct", {
        "mode": "string",
        "webhook": ("struct", {
            "cacheAuthorizedTTL": "string",
            "cacheUnauthorizedTTL": "string",
        }),
    }),
    "cgroupDriver": "string",
    "cgroupRoot": "string",
    "cgroupsPerQOS": "bool",
    "clusterDNS": ("list", "string"),
    "clusterDomain": "string",
    "configMapAndSecretChangeDetectionStrategy": "string",
    "containerLogMaxFiles": "int32",
    "containerLogMaxSize": "string",
    "containerLogMaxWorkers": "int32",
    "containerLogMonitorInterval": "string",
    "containerRuntimeEndpoint": "string",
    "contentType": "string",
    "cpuCFSQuota": "bool",
    "cpuCFSQuotaPeriod": "string",
    "cpuManagerPolicy": "string",
    "cpuManagerPolicyOptions": ("map", "string"),
    "cpuManagerReconcilePeriod": "string",
    "crashLoopBackOff": ("struct", {
        "maxContainerRestartPeriod": "string",
    }),
    "defaultPodSysctls": ("map", "string"),
    "enableContentionProfiling": "bool",
    "enableControllerAttachDetach": "bool",
    "enableDebugFlagsHandler": "bool",
    "enableDebuggingHandlers": "bool",
    "enableProfilingHandler": "bool",
    "enableServer": "bool",
    "enableSystemLogHandler": "bool",
    "enableSystemLogQuery": "bool",
    "enforceNodeAllocatable": ("list", "string"),
    "eventBurst": "int32",
    "eventRecordQPS": "int32",
    "evictionHard": ("map", "string"),
    "evictionMaxPodGracePeriod": "int32",
    "evictionMinimumReclaim": ("map", "string"),
    "evictionPressureTransitionPeriod": "string",
    "evictionSoft": ("map", "string"),
    "evictionSoftGracePeriod": ("map", "string"),
    "failCgroupV1": "bool",
    "failSwapOn": "bool",
    "featureGates": ("map", "bool"),
    "fileCheckFrequency": "string",
    "hairpinMode": "string",
    "healthzBindAddress": "string",
    "healthzPort": "int32",
    "httpCheckFrequency": "string",
    "imageGCHighThresholdPercent": "int32",
    "imageGCLowThresholdPercent": "int32",
    "imageMaximumGCAge": "string",
    "imageMinimumGCAge": "string",
    "imagePullCredentialsVerificationPolicy": "string",
    "imageServiceEndpoint": "string",
    "iptablesDropBit": "int32",
    "iptablesMasqueradeBit": "int32",
    "kernelMemcgNotification": "bool",
    "kind": "string",
    "kubeAPIBurst": "int32",
    "kubeAPIQPS": "int32",
    "kubeReserved": ("map", "string"),
    "kubeReservedCgroup": "string",
    "kubeletCgroups": "string",
    "localStorageCapacityIsolation": "bool",
    "logging": ("struct", {
        "flushFrequency": "any",
        "format": "string",
        "options": ("struct", {
            "json": ("struct", {
                "infoBufferSize": "any",
                "splitStream": "bool",
            }),
            "text": ("struct", {
                "infoBufferSize": "any",
                "splitStream": "bool",
            }),
        }),
        "verbosity": "uint32",
        "vmodule": ("list", ("struct", {
            "filePattern": "string",
            "verbosity": "uint32",
        })),
    }),
    "makeIPTablesUtilChains": "bool",
    "maxOpenFiles": "int64",
    "maxParallelImagePulls": "int32",
    "maxPods": "int32",
    "memoryManagerPolicy": "string",
    "memoryReservationPolicy": "string",
    "memorySwap": ("struct", {
        "swapBehavior": "string",
    }),
    "memoryThrottlingFactor": "float",
    "mergeDefaultEvictionSettings": "bool",
    "nodeLeaseDurationSeconds": "int32",
    "nodeStatusMaxImages": "int32",
    "nodeStatusReportFrequency": "string",
    "nodeStatusUpdateFrequency": "string",
    "oomScoreAdj": "int32",
    "podCIDR": "string",
    "podLogsDir": "string",
    "podPidsLimit": "int64",
    "podsPerCore": "int32",
    "port": "int32",
    "preloadedImagesVerificationAllowlist": ("list", "string"),
    "protectKernelDefaults": "bool",
    "providerID": "string",
    "qosReserved": ("map", "string"),
    "readOnlyPort": "int32",
    "registerNode": "bool",
    "registerWithTaints": ("list", ("struct", {
        "effect": "string",
        "key": "string",
        "timeAdded": "any",
        "value": "string",
    })),
    "registryBurst": "int32",
    "registryPullQPS": "int32",
    "reservedMemory": ("list", ("struct", {
        "limits": ("map", "any"),
        "numaNode": "int32",
    })),
    "reservedSystemCPUs": "string",
    "resolvConf": "string",
    "rotateCertificates": "bool",
    "runOnce": "bool",
    "runtimeRequestTimeout": "string",
    "seccompDefault": "bool",
    "serializeImagePulls": "bool",
    "serverTLSBootstrap": "bool",
    "showHiddenMetricsForVersion": "string",
    "shutdownGracePeriod": "string",
    "shutdownGracePeriodByPodPriority": ("list", ("struct", {
        "priority": "int32",
        "shutdownGracePeriodSeconds": "int64",
    })),
    "shutdownGracePeriodCriticalPods": "string",
    "singleProcessOOMKill": "bool",
    "staticPodPath": "string",
    "staticPodURL": "string",
    "staticPodURLHeader": ("map", ("list", "string")),
    "streamingConnectionIdleTimeout": "string",
    "syncFrequency": "string",
    "systemCgroups": "string",
    "systemReserved": ("map", "string"),
    "systemReservedCgroup": "string",
    "tlsCertFile": "string",
    "tlsCipherSuites": ("list", "string"),
    "tlsCurvePreferences": ("list", "int32"),
    "tlsMinVersion": "string",
    "tlsPrivateKeyFile": "string",
    "topologyManagerPolicy": "string",
    "topologyManagerPolicyOptions": ("map", "string"),
    "topologyManagerScope": "string",
    "tracing": ("struct", {
        "endpoint": "string",
        "samplingRatePerMillion": "int32",
    }),
    "userNamespaces": ("struct", {
        "idsPerPod": "int64",
    }),
    "volumePluginDir": "string",
    "volumeStatsAggPeriod": "string",
})

#: The fields whose Go type is ``metav1.Duration`` (dotted JSON paths), which
#: SCHEMA types as "string", their JSON form (the oracle's ``--schema``
#: does too). ``metav1.Duration.UnmarshalJSON``
#: (``k8s.io/apimachinery/pkg/apis/meta/v1/duration.go``) passes the string
#: to ``time.ParseDuration``, whose error stops the decoding. The value says
#: how a JSON ``null`` is read: ``"value"``, a non-pointer field, still calls
#: the decoder, which then parses ``""`` and fails; ``"pointer"``, a
#: ``*metav1.Duration``, is left nil; ``"flush"``, the logging flush frequency
#: (``k8s.io/component-base/logs/api/v1`` ``TimeOrMetaDuration``), takes a
#: string as a ``metav1.Duration`` or an integer count of nanoseconds.
DURATION_FIELDS: Final[dict[str, str]] = {
    "syncFrequency": "value",
    "fileCheckFrequency": "value",
    "httpCheckFrequency": "value",
    "streamingConnectionIdleTimeout": "value",
    "nodeStatusUpdateFrequency": "value",
    "nodeStatusReportFrequency": "value",
    "imageMinimumGCAge": "value",
    "imageMaximumGCAge": "value",
    "volumeStatsAggPeriod": "value",
    "cpuManagerReconcilePeriod": "value",
    "runtimeRequestTimeout": "value",
    "cpuCFSQuotaPeriod": "pointer",
    "evictionPressureTransitionPeriod": "value",
    "containerLogMonitorInterval": "pointer",
    "shutdownGracePeriod": "value",
    "shutdownGracePeriodCriticalPods": "value",
    "authorization.webhook.cacheAuthorizedTTL": "value",
    "authorization.webhook.cacheUnauthorizedTTL": "value",
    "authentication.webhook.cacheTTL": "value",
    "crashLoopBackOff.maxContainerRestartPeriod": "pointer",
    "logging.flushFrequency": "flush",
}
