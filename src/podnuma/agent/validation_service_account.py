"""The static pod's service account name, as ``ValidatePodSpec``
(``pkg/apis/core/validation/validation.go``) checks it.

The v1 defaults (``SetDefaults_PodSpec``, ``pkg/apis/core/v1/defaults.go``)
take the deprecated ``serviceAccount`` as ``serviceAccountName`` when the
latter is empty and then set both to the same value, so the deprecated
field's own check (``must be the same as serviceAccountName``) never fires
for a decoded pod. A non-empty name must be a DNS subdomain
(``ValidateServiceAccountName``, apimachinery's ``NameIsDNSSubdomain``),
reported at ``spec.serviceAccountName`` whichever field gave it. The file
source validates before it looks for references to API objects, so an
invalid name is refused with this error, not ``static pods may not
reference serviceaccounts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.agent.validation_kit import _Errors, _str
from podnuma.api.pod_validation import dns_subdomain_errors

__all__ = ["check_service_account_name"]


def check_service_account_name(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """The errors of the pod's service account name (the defaulted one)."""
    name = _str(spec, "serviceAccountName") or _str(spec, "serviceAccount") or ""
    if name:
        errs.each("spec.serviceAccountName", name, dns_subdomain_errors(name))
