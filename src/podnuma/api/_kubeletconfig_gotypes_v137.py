"""Where Go's encoding/json places a ``KubeletConfiguration`` field (v1.37.2)
in its "cannot unmarshal" words: for each field path of
``_kubeletconfig_v137.SCHEMA`` (list indices and map keys left out) whose
words are not the default ones, ``(the innermost struct, the field path
as the decoder names it, the Go type)``. The default: the struct
``KubeletConfiguration``, the path itself, the Go type of the schema's
kind (``float`` is ``float64``). Generated with ``kubelet-oracle
kubeletconfig --file`` (a number past the float range in each field);
``tests/oracle/test_kubeletconfig_numbers_differential.py`` checks it.

``GO_COMPOSITES``: the same words for every field, list item and map value
whose Go type is a struct, a slice or a map, keyed by the schema path with
``[]`` for a list's item and ``{}`` for a map's value
(``registerWithTaints[]``: the ``v1.Taint`` of the list). Generated with
``kubelet-oracle kubeletconfig --file`` (``true`` in each);
``tests/oracle/test_kubeletconfig_types_differential.py`` checks it."""

from __future__ import annotations

from typing import Final

GO_FIELDS: Final[dict[str, tuple[str, str, str]]] = {
    "authentication.anonymous.enabled": ("KubeletAnonymousAuthentication", "authentication.anonymous.enabled", "bool"),
    "authentication.webhook.cacheTTL": ("KubeletWebhookAuthentication", "authentication.webhook.cacheTTL", "string"),
    "authentication.webhook.enabled": ("KubeletWebhookAuthentication", "authentication.webhook.enabled", "bool"),
    "authentication.x509.clientCAFile": ("KubeletX509Authentication", "authentication.x509.clientCAFile", "string"),
    "authorization.mode": ("KubeletAuthorization", "authorization.mode", "v1beta1.KubeletAuthorizationMode"),
    "authorization.webhook.cacheAuthorizedTTL": ("KubeletWebhookAuthorization", "authorization.webhook.cacheAuthorizedTTL", "string"),
    "authorization.webhook.cacheUnauthorizedTTL": ("KubeletWebhookAuthorization", "authorization.webhook.cacheUnauthorizedTTL", "string"),
    "configMapAndSecretChangeDetectionStrategy": ("KubeletConfiguration", "configMapAndSecretChangeDetectionStrategy", "v1beta1.ResourceChangeDetectionStrategy"),
    "crashLoopBackOff.maxContainerRestartPeriod": ("CrashLoopBackOffConfig", "crashLoopBackOff.maxContainerRestartPeriod", "string"),
    "imagePullCredentialsVerificationPolicy": ("KubeletConfiguration", "imagePullCredentialsVerificationPolicy", "v1beta1.ImagePullCredentialsVerificationPolicy"),
    "logging.format": ("LoggingConfiguration", "logging.format", "string"),
    "logging.options.json.splitStream": ("JSONOptions", "logging.options.json.OutputRoutingOptions.splitStream", "bool"),
    "logging.options.text.splitStream": ("TextOptions", "logging.options.text.OutputRoutingOptions.splitStream", "bool"),
    "logging.verbosity": ("LoggingConfiguration", "logging.verbosity", "v1.VerbosityLevel"),
    "logging.vmodule.filePattern": ("VModuleItem", "logging.vmodule.filePattern", "string"),
    "logging.vmodule.verbosity": ("VModuleItem", "logging.vmodule.verbosity", "v1.VerbosityLevel"),
    "memoryReservationPolicy": ("KubeletConfiguration", "memoryReservationPolicy", "v1beta1.MemoryReservationPolicy"),
    "memorySwap.swapBehavior": ("MemorySwapConfiguration", "memorySwap.swapBehavior", "string"),
    "registerWithTaints.effect": ("Taint", "registerWithTaints.effect", "v1.TaintEffect"),
    "registerWithTaints.key": ("Taint", "registerWithTaints.key", "string"),
    "registerWithTaints.timeAdded": ("Taint", "registerWithTaints.timeAdded", "string"),
    "registerWithTaints.value": ("Taint", "registerWithTaints.value", "string"),
    "reservedMemory.numaNode": ("MemoryReservation", "reservedMemory.numaNode", "int32"),
    "shutdownGracePeriodByPodPriority.priority": ("ShutdownGracePeriodByPodPriority", "shutdownGracePeriodByPodPriority.priority", "int32"),
    "shutdownGracePeriodByPodPriority.shutdownGracePeriodSeconds": ("ShutdownGracePeriodByPodPriority", "shutdownGracePeriodByPodPriority.shutdownGracePeriodSeconds", "int64"),
    "tracing.endpoint": ("TracingConfiguration", "tracing.endpoint", "string"),
    "tracing.samplingRatePerMillion": ("TracingConfiguration", "tracing.samplingRatePerMillion", "int32"),
    "userNamespaces.idsPerPod": ("UserNamespaces", "userNamespaces.idsPerPod", "int64"),
}

GO_COMPOSITES: Final[dict[str, tuple[str, str, str]]] = {
    "allowedUnsafeSysctls": ("KubeletConfiguration", "allowedUnsafeSysctls", "[]string"),
    "authentication": ("KubeletConfiguration", "authentication", "v1beta1.KubeletAuthentication"),
    "authentication.anonymous": ("KubeletAuthentication", "authentication.anonymous", "v1beta1.KubeletAnonymousAuthentication"),
    "authentication.webhook": ("KubeletAuthentication", "authentication.webhook", "v1beta1.KubeletWebhookAuthentication"),
    "authentication.x509": ("KubeletAuthentication", "authentication.x509", "v1beta1.KubeletX509Authentication"),
    "authorization": ("KubeletConfiguration", "authorization", "v1beta1.KubeletAuthorization"),
    "authorization.webhook": ("KubeletAuthorization", "authorization.webhook", "v1beta1.KubeletWebhookAuthorization"),
    "clusterDNS": ("KubeletConfiguration", "clusterDNS", "[]string"),
    "cpuManagerPolicyOptions": ("KubeletConfiguration", "cpuManagerPolicyOptions", "map[string]string"),
    "crashLoopBackOff": ("KubeletConfiguration", "crashLoopBackOff", "v1beta1.CrashLoopBackOffConfig"),
    "defaultPodSysctls": ("KubeletConfiguration", "defaultPodSysctls", "map[string]string"),
    "enforceNodeAllocatable": ("KubeletConfiguration", "enforceNodeAllocatable", "[]string"),
    "evictionHard": ("KubeletConfiguration", "evictionHard", "map[string]string"),
    "evictionMinimumReclaim": ("KubeletConfiguration", "evictionMinimumReclaim", "map[string]string"),
    "evictionSoft": ("KubeletConfiguration", "evictionSoft", "map[string]string"),
    "evictionSoftGracePeriod": ("KubeletConfiguration", "evictionSoftGracePeriod", "map[string]string"),
    "featureGates": ("KubeletConfiguration", "featureGates", "map[string]bool"),
    "kubeReserved": ("KubeletConfiguration", "kubeReserved", "map[string]string"),
    "logging": ("KubeletConfiguration", "logging", "v1.LoggingConfiguration"),
    "logging.options": ("LoggingConfiguration", "logging.options", "v1.FormatOptions"),
    "logging.options.json": ("FormatOptions", "logging.options.json", "v1.JSONOptions"),
    "logging.options.text": ("FormatOptions", "logging.options.text", "v1.TextOptions"),
    "logging.vmodule": ("LoggingConfiguration", "logging.vmodule", "v1.VModuleConfiguration"),
    "logging.vmodule[]": ("LoggingConfiguration", "logging.vmodule", "v1.VModuleItem"),
    "memorySwap": ("KubeletConfiguration", "memorySwap", "v1beta1.MemorySwapConfiguration"),
    "preloadedImagesVerificationAllowlist": ("KubeletConfiguration", "preloadedImagesVerificationAllowlist", "[]string"),
    "qosReserved": ("KubeletConfiguration", "qosReserved", "map[string]string"),
    "registerWithTaints": ("KubeletConfiguration", "registerWithTaints", "[]v1.Taint"),
    "registerWithTaints[]": ("KubeletConfiguration", "registerWithTaints", "v1.Taint"),
    "reservedMemory": ("KubeletConfiguration", "reservedMemory", "[]v1beta1.MemoryReservation"),
    "reservedMemory[]": ("KubeletConfiguration", "reservedMemory", "v1beta1.MemoryReservation"),
    "reservedMemory[].limits": ("MemoryReservation", "reservedMemory.limits", "v1.ResourceList"),
    "shutdownGracePeriodByPodPriority": ("KubeletConfiguration", "shutdownGracePeriodByPodPriority", "[]v1beta1.ShutdownGracePeriodByPodPriority"),
    "shutdownGracePeriodByPodPriority[]": ("KubeletConfiguration", "shutdownGracePeriodByPodPriority", "v1beta1.ShutdownGracePeriodByPodPriority"),
    "staticPodURLHeader": ("KubeletConfiguration", "staticPodURLHeader", "map[string][]string"),
    "staticPodURLHeader{}": ("KubeletConfiguration", "staticPodURLHeader", "[]string"),
    "systemReserved": ("KubeletConfiguration", "systemReserved", "map[string]string"),
    "tlsCipherSuites": ("KubeletConfiguration", "tlsCipherSuites", "[]string"),
    "tlsCurvePreferences": ("KubeletConfiguration", "tlsCurvePreferences", "[]int32"),
    "topologyManagerPolicyOptions": ("KubeletConfiguration", "topologyManagerPolicyOptions", "map[string]string"),
    "tracing": ("KubeletConfiguration", "tracing", "v1.TracingConfiguration"),
    "userNamespaces": ("KubeletConfiguration", "userNamespaces", "v1beta1.UserNamespaces"),
}
