"""Where Go's encoding/json places a ``KubeletConfiguration`` field (v1.37.2)
in its "cannot unmarshal" words: for each field path of
``_kubeletconfig_v137.SCHEMA`` (list indices and map keys left out) whose
words are not the default ones, ``(the innermost struct, the field path
as the decoder names it, the Go type)``. The default: the struct
``KubeletConfiguration``, the path itself, the Go type of the schema's
kind (``float`` is ``float64``). Generated with ``kubelet-oracle
kubeletconfig --file`` (a number past the float range in each field);
``tests/oracle/test_kubeletconfig_numbers_differential.py`` checks it."""

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
