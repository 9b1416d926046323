"""The agent's static-pod validation of the scheduling and name-resolution
fields (tolerations, affinity, topology spread constraints, ``os``,
``runtimeClassName``, ``preemptionPolicy``, ``dnsConfig`` with
``dnsPolicy``, ``hostAliases``) against the kubelet's file source
(``kubelet-oracle staticpod``: k8s.io/kubernetes v1.37.2
pkg/kubelet/config/common.go, ``ValidatePodCreate``).

Every manifest goes through both: accepted by both, or refused by both
with the kubelet's phrase in both messages (several errors in one phrase
pin their order; a wrong type is refused in Go's decoder's words).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.oracle.staticpod_cases import assert_as_the_kubelet, decoded_cases
from tests.oracle.test_staticpod_differential import HEAD

#: name -> (manifest text, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {}


def _spec(extra: str) -> str:
    """The pod with ``extra`` in its spec and one container."""
    return HEAD + "metadata: {name: web}\nspec:\n" + "".join(
        f"  {line}\n" for line in extra.splitlines()) + "  containers: [{name: c, image: nginx}]\n"


def _case(name: str, extra: str, phrase: str | None) -> None:
    assert name not in CASES, name
    CASES[name + ".yaml"] = (_spec(extra), phrase)


_UNMARSHAL = "couldn't parse as pod(json: cannot unmarshal "
_LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                "or '.', and must start and end with an alphanumeric character")
_NAME_PART = "name part must consist of alphanumeric characters"
_NA = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
_NA_PREF = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
_PA = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"
_PAA_PREF = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"

# ---------------------------------------------------------------- tolerations
_case("toleration-ok", "tolerations:\n- {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}\n"
      "- {operator: Exists}\n- {key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 30}", None)
_case("toleration-default-replaced", "tolerations: [{operator: Exists, effect: NoExecute, tolerationSeconds: 5}]",
      None)
_case("toleration-empty-key-equal", "tolerations: [{operator: Equal, value: x}]",
      'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
      'which means "match all values and all keys"')
_case("toleration-empty", "tolerations: [{}]",
      'spec.tolerations[0].operator: Invalid value: "": operator must be Exists when `key` is empty')
_case("toleration-bad-key", "tolerations: [{key: 'a b', operator: Exists}]",
      f'spec.tolerations[0].key: Invalid value: "a b": {_NAME_PART}')
_case("toleration-seconds-without-noexecute", "tolerations: [{key: k, operator: Exists, effect: NoSchedule, "
      "tolerationSeconds: 3}]",
      "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
      "`tolerationSeconds` is set]")
_case("toleration-bad-value", "tolerations: [{key: k, value: 'a b'}]",
      f'spec.tolerations[0].operator: Invalid value: "a b": {_LABEL_VALUE}')
_case("toleration-exists-with-value", "tolerations: [{key: k, operator: Exists, value: v}]",
      "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'")
_case("toleration-lt-gate-off", "tolerations: [{key: k, operator: Lt, value: '5'}]",
      'spec.tolerations[0].operator: Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"')
_case("toleration-bad-operator", "tolerations: [{key: k, operator: In}]",
      'spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"]')
_case("toleration-bad-effect", "tolerations: [{key: k, operator: Exists, effect: Evict}]",
      'spec.tolerations[0].effect: Unsupported value: "Evict": supported values: "NoSchedule", '
      '"PreferNoSchedule", "NoExecute"')
_case("toleration-many-errors", "tolerations: [{operator: Bad, value: 'x y', effect: Sometimes, "
      "tolerationSeconds: 1}]",
      'spec.tolerations[0].operator: Invalid value: "Bad": operator must be Exists when `key` is empty, which '
      'means "match all values and all keys" spec.tolerations[0].effect: Invalid value: "Sometimes": effect '
      "must be 'NoExecute' when `tolerationSeconds` is set spec.tolerations[0].operator: Unsupported value: "
      '"Bad": supported values: "Equal", "Exists" spec.tolerations[0].effect: Unsupported value: "Sometimes"')
_case("toleration-json-quoted-operator", "tolerations: [{operator: 'a<b'}]",
      'spec.tolerations[0].operator: Invalid value: "a\\u003cb": operator must be Exists')
_case("toleration-null-element", "tolerations: [null]",
      'spec.tolerations[0].operator: Invalid value: "": operator must be Exists')
_case("type-tolerations-object", "tolerations: {key: k}", _UNMARSHAL + "object into Go struct field "
      "PodSpec.spec.tolerations of type []v1.Toleration)")
_case("type-toleration-seconds-string", "tolerations: [{key: k, operator: Exists, effect: NoExecute, "
      "tolerationSeconds: '5'}]", _UNMARSHAL + "string into Go struct field "
      "Toleration.spec.tolerations.tolerationSeconds of type int64)")
_case("type-toleration-value-number", "tolerations: [{key: k, value: 5}]", _UNMARSHAL + "number into Go "
      "struct field Toleration.spec.tolerations.value of type string)")

# ---------------------------------------------------------------- node affinity
_case("node-affinity-ok", """\
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/os, operator: In, values: [linux]}
        - {key: disk, operator: Exists}
        - {key: cores, operator: Gt, values: ["4"]}
        matchFields:
        - {key: metadata.name, operator: In, values: [node-a]}
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      preference:
        matchExpressions: [{key: zone, operator: NotIn, values: ["not a label value"]}]""", None)
_case("node-affinity-no-terms", "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {}}}",
      f"{_NA}: Required value: must have at least one node selector term")
_case("node-affinity-null-required", "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
      "null}}", None)
_case("node-affinity-in-without-values", """\
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]""",
      f"{_NA}[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'")
_case("node-affinity-exists-with-values", """\
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: [{matchExpressions: [{key: a, operator: DoesNotExist, values: [b]}]}]""",
      f"{_NA}[0].matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
      "'DoesNotExist'")
_case("node-affinity-gt-two-values", """\
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Gt, values: ["1", "2"]}]}]""",
      f"{_NA}[0].matchExpressions[0].values: Required value: must be specified single value when `operator` is "
      "'Lt' or 'Gt'")
_case("node-affinity-bad-operator-key-value", """\
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: [{matchExpressions: [{key: '-a', operator: Equals, values: ['b c']}]}]""",
      f'{_NA}[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator '
      f'{_NA}[0].matchExpressions[0].key: Invalid value: "-a": {_NAME_PART}')
_case("node-affinity-bad-value-required", """\
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [ok, 'b c']}]}]""",
      f'{_NA}[0].matchExpressions[0].values[1]: Invalid value: "b c": {_LABEL_VALUE}')
_case("node-affinity-match-fields", """\
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.labels, operator: Exists}
        - {key: metadata.name, operator: In, values: [a, b]}
        - {key: metadata.name, operator: NotIn, values: [Node_A]}""",
      f'{_NA}[0].matchFields[0].operator: Invalid value: "Exists": not a valid selector operator '
      f'{_NA}[0].matchFields[0].key: Invalid value: "metadata.labels": not a valid field selector key '
      f"{_NA}[0].matchFields[1].values: Required value: must be only one value when `operator` is 'In' or "
      "'NotIn' for node field selector "
      f'{_NA}[0].matchFields[2].values[0]: Invalid value: "Node_A": a lowercase RFC 1123 subdomain')
_case("node-affinity-preferred-weight", """\
affinity:
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - {weight: 0, preference: {}}
    - {weight: 101, preference: {matchExpressions: [{key: a, operator: Nope}]}}""",
      f"{_NA_PREF}[0].weight: Invalid value: 0: must be in the range 1-100 "
      f"{_NA_PREF}[1].weight: Invalid value: 101: must be in the range 1-100 "
      f'{_NA_PREF}[1].preference.matchExpressions[0].operator: Invalid value: "Nope": not a valid selector operator')
_case("type-node-affinity-weight-float", "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
      "[{weight: 1.5, preference: {}}]}}", _UNMARSHAL + "number 1.5 into Go struct field "
      "PreferredSchedulingTerm.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.weight "
      "of type int32)")
_case("type-node-selector-terms-object", "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
      "{nodeSelectorTerms: {a: b}}}}", _UNMARSHAL + "object into Go struct field NodeSelector.spec.affinity."
      "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms of type "
      "[]v1.NodeSelectorTerm)")
_case("type-affinity-string", "affinity: x", _UNMARSHAL + "string into Go struct field PodSpec.spec.affinity "
      "of type v1.Affinity)")

# ---------------------------------------------------------------- pod (anti-)affinity
_case("pod-affinity-ok", """\
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - labelSelector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: In, values: [a]}]}
      topologyKey: kubernetes.io/hostname
      namespaces: [default, kube-system]
      namespaceSelector: {}
      matchLabelKeys: [pod-template-hash]
      mismatchLabelKeys: [team]
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 50
      podAffinityTerm: {labelSelector: {matchLabels: {app: web}}, topologyKey: zone}""", None)
_case("pod-affinity-no-topology-key", "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
      "[{labelSelector: {}}]}}",
      f'{_PA}[0].topologyKey: Required value: can not be empty {_PA}[0].topologyKey: Invalid value: "": '
      "name part must be non-empty")
_case("pod-affinity-bad-namespace", "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
      "[{topologyKey: zone, namespaces: [ok, Bad.NS]}]}}",
      f'{_PA}[0].namespace: Invalid value: "Bad.NS": a lowercase RFC 1123 label')
_case("pod-affinity-selector-errors", """\
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: zone
      labelSelector:
        matchLabels: {app: 'x y'}
        matchExpressions:
        - {key: a, operator: In}
        - {key: b, operator: Exists, values: [c]}
        - {key: c, operator: Equals, values: ['d e']}
      namespaceSelector: {matchExpressions: [{key: 'a/b/c', operator: Exists}]}""",
      f'{_PA}[0].labelSelector.matchLabels: Invalid value: "x y": {_LABEL_VALUE}')
_case("pod-affinity-selector-order", """\
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: zone
      labelSelector:
        matchExpressions:
        - {key: a, operator: In}
        - {key: b, operator: Exists, values: [c]}
        - {key: c, operator: Equals, values: ['d e']}
      namespaceSelector: {matchExpressions: [{key: 'a/b/c', operator: Exists}]}""",
      f"{_PA}[0].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is "
      f"'In' or 'NotIn' {_PA}[0].labelSelector.matchExpressions[1].values: Forbidden: may not be specified when "
      f"`operator` is 'Exists' or 'DoesNotExist' {_PA}[0].labelSelector.matchExpressions[2].operator: Invalid "
      f'value: "Equals": not a valid selector operator {_PA}[0].labelSelector.matchExpressions[2].values[0]: '
      f'Invalid value: "d e": {_LABEL_VALUE}')
_case("pod-affinity-label-keys-without-selector", "affinity: {podAffinity: "
      "{requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, matchLabelKeys: [a], "
      "mismatchLabelKeys: [b]}]}}",
      f"{_PA}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set "
      f"{_PA}[0].mismatchLabelKeys: Forbidden: must not be specified when labelSelector is not set")
_case("pod-affinity-label-keys-overlap", """\
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: zone
      labelSelector:
        matchLabels: {app: web}
        matchExpressions: [{key: app, operator: Exists}]
      matchLabelKeys: [x, app, 'bad key']
      mismatchLabelKeys: [x]""",
      f'{_PA}[0].matchLabelKeys[2]: Invalid value: "bad key": {_NAME_PART}')
_case("pod-affinity-label-keys-overlap-order", """\
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: zone
      labelSelector:
        matchLabels: {app: web}
        matchExpressions: [{key: app, operator: Exists}]
      matchLabelKeys: [x, app]
      mismatchLabelKeys: [x]""",
      f'{_PA}[0][1]: Invalid value: "app": exists in both matchLabelKeys and labelSelector '
      f'{_PA}[0].matchLabelKeys[0]: Invalid value: "x": exists in both matchLabelKeys and mismatchLabelKeys]')
_case("pod-affinity-label-key-in-two-expressions", """\
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: zone
      labelSelector: {matchExpressions: [{key: app, operator: Exists}, {key: app, operator: Exists}]}
      matchLabelKeys: [app, b, app]""",
      f'{_PA}[0][2]: Invalid value: "app": exists in both matchLabelKeys and labelSelector]')
_case("pod-affinity-label-key-only-in-match-labels", """\
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - {topologyKey: zone, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [app]}""", None)
_case("pod-anti-affinity-preferred", """\
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - {weight: -1, podAffinityTerm: {topologyKey: 'a b'}}""",
      f"{_PAA_PREF}[0].weight: Invalid value: -1: must be in the range 1-100 "
      f'{_PAA_PREF}[0].podAffinityTerm.topologyKey: Invalid value: "a b": {_NAME_PART}')
_case("pod-anti-affinity-preferred-null-term", "affinity: {podAntiAffinity: "
      "{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5}]}}",
      f"{_PAA_PREF}[0].podAffinityTerm.topologyKey: Required value: can not be empty")
_case("type-pod-affinity-namespaces-string", "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution:"
      " [{topologyKey: zone, namespaces: default}]}}", _UNMARSHAL + "string into Go struct field PodAffinityTerm."
      "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.namespaces of type []string)")
_case("type-label-selector-match-labels-list", "affinity: {podAffinity: "
      "{requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: {matchLabels: [a]}}]}}",
      _UNMARSHAL + "array into Go struct field LabelSelector.spec.affinity.podAffinity."
      "requiredDuringSchedulingIgnoredDuringExecution.labelSelector.matchLabels of type map[string]string)")

# ---------------------------------------------------------------- topology spread constraints
_TSC = "spec.topologySpreadConstraints"
_case("spread-ok", """\
topologySpreadConstraints:
- maxSkew: 1
  topologyKey: zone
  whenUnsatisfiable: DoNotSchedule
  minDomains: 2
  nodeAffinityPolicy: Honor
  nodeTaintsPolicy: Ignore
  labelSelector: {matchLabels: {app: web}}
  matchLabelKeys: [pod-template-hash]
- {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}""", None)
_case("spread-empty", "topologySpreadConstraints: [{}]",
      f'{_TSC}[0].maxSkew: Invalid value: 0: must be greater than zero {_TSC}[0].topologyKey: Required value: '
      f'can not be empty {_TSC}[0].whenUnsatisfiable: Unsupported value: "": supported values: "DoNotSchedule", '
      '"ScheduleAnyway"]')
_case("spread-duplicate", "topologySpreadConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
      "DoNotSchedule}\n- {maxSkew: 3, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}",
      f'{_TSC}[0].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{zone, DoNotSchedule}}"]')
_case("spread-min-domains", "topologySpreadConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
      "ScheduleAnyway, minDomains: 0}",
      f"{_TSC}[0].minDomains: Invalid value: 0: must be greater than zero {_TSC}[0].minDomains: Invalid value: 0: "
      "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway]")
_case("spread-policies", "topologySpreadConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
      "DoNotSchedule, nodeAffinityPolicy: honor, nodeTaintsPolicy: Always}",
      f'{_TSC}[0].nodeAffinityPolicy: Unsupported value: "honor": supported values: "Honor", "Ignore" '
      f'{_TSC}[0].nodeTaintsPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"]')
_case("spread-match-label-keys", """\
topologySpreadConstraints:
- maxSkew: 1
  topologyKey: zone
  whenUnsatisfiable: DoNotSchedule
  labelSelector: {matchLabels: {app: web}, matchExpressions: [{key: app, operator: In, values: ['x y']}]}
  matchLabelKeys: [app]""",
      f'{_TSC}[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector '
      f'{_TSC}[0].labelSelector.matchExpressions[0].values[0]: Invalid value: "x y": {_LABEL_VALUE}')
_case("spread-match-label-keys-without-selector", "topologySpreadConstraints:\n- {maxSkew: 1, topologyKey: zone, "
      "whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [a]}",
      f"{_TSC}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set")
_case("type-spread-max-skew-string", "topologySpreadConstraints: [{maxSkew: '1'}]", _UNMARSHAL + "string into "
      "Go struct field TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32)")

# ---------------------------------------------------------------- dnsConfig, dnsPolicy None
_case("dns-none-ok", "dnsPolicy: None\ndnsConfig: {nameservers: [1.1.1.1, '2001:db8::1'], searches: [svc.local., "
      "_srv.example.com, .], options: [{name: ndots, value: '2'}]}", None)
_case("dns-none-without-config", "dnsPolicy: None",
      "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None")
_case("dns-none-without-nameservers", "dnsPolicy: None\ndnsConfig: {searches: ['Bad']}",
      "spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is "
      "None]")
_case("dns-config-with-cluster-first", "dnsConfig: {searches: [a.b]}", None)
_case("dns-config-too-many-nameservers", "dnsConfig: {nameservers: [1.1.1.1, 1.0.0.1, 8.8.8.8, 'x']}",
      'spec.dnsConfig.nameservers: Invalid value: ["1.1.1.1","1.0.0.1","8.8.8.8","x"]: must not have more than '
      '3 nameservers spec.dnsConfig.nameservers[3]: Invalid value: "x": must be a valid IP address, '
      "(e.g. 10.9.8.7 or 2001:db8::ffff)]")
_case("dns-config-strict-ips", "dnsConfig: {nameservers: ['010.1.1.1', '::ffff:1.2.3.4', 'fe80::1%eth0']}",
      'spec.dnsConfig.nameservers[0]: Invalid value: "010.1.1.1": must not have leading 0s '
      'spec.dnsConfig.nameservers[1]: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address '
      'spec.dnsConfig.nameservers[2]: Invalid value: "fe80::1%eth0": must be a valid IP address')
_case("dns-config-searches", "dnsConfig: {searches: [Upper.com, 'a..', '-x'], options: [{value: '1'}]}",
      'spec.dnsConfig.searches[0]: Invalid value: "Upper.com": a lowercase RFC 1123 subdomain must consist of '
      "lower case alphanumeric characters, '_', '-' or '.'")
_case("dns-config-searches-order", "dnsConfig: {searches: ['a..', '-x'], options: [{value: '1'}]}",
      'spec.dnsConfig.searches[0]: Invalid value: "a.": a lowercase RFC 1123 subdomain must consist of lower case '
      "alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. "
      "'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*"
      "[a-z0-9])?)*') spec.dnsConfig.searches[1]: Invalid value: \"-x\"")
_case("dns-config-options-empty-name", "dnsConfig: {options: [{value: '1'}]}",
      "spec.dnsConfig.options[0]: Required value: must not be empty]")
_case("dns-config-too-many-searches", "dnsConfig: {searches: [" + ", ".join(f"s{i}" for i in range(33)) + "]}",
      'spec.dnsConfig.searches: Invalid value: ["s0","s1",')
_case("dns-config-search-list-too-long", "dnsConfig: {searches: [" + ", ".join(["a" * 250] * 9) + "]}",
      "must not have more than 2048 characters (including spaces) in the search list]")
_case("type-dns-config-nameservers-string", "dnsPolicy: None\ndnsConfig: {nameservers: 1.1.1.1}",
      _UNMARSHAL + "string into Go struct field PodDNSConfig.spec.dnsConfig.nameservers of type []string)")

# ---------------------------------------------------------------- hostAliases
_case("host-aliases-ok", "hostAliases: [{ip: 127.0.0.1, hostnames: [foo.local, bar]}, {ip: '::1'}]", None)
_case("host-aliases-errors", "hostAliases: [{hostnames: [Foo]}, {ip: 1.2.3, hostnames: [ok, 'a_b']}]",
      'spec.hostAliases[0].ip: Invalid value: "": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) '
      'spec.hostAliases[0].hostnames[0]: Invalid value: "Foo": a lowercase RFC 1123 subdomain must consist of '
      "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
      "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
      "[a-z0-9])?)*') spec.hostAliases[1].ip: Invalid value: \"1.2.3\": must be a valid IP address")
_case("host-aliases-ip-forms", "hostAliases: [{ip: '::'}, {ip: '1:2:3:4:5:6:1.2.3.4'}, {ip: 'FE80::ABC'}, "
      "{ip: '00001::1'}, {ip: '::ffff:102:304'}, {ip: '1::2::3'}, {ip: '1.1.1.01'}]",
      'spec.hostAliases[3].ip: Invalid value: "00001::1": must not have leading 0s '
      'spec.hostAliases[4].ip: Invalid value: "::ffff:102:304": must not be an IPv4-mapped IPv6 address '
      'spec.hostAliases[5].ip: Invalid value: "1::2::3": must be a valid IP address, (e.g. 10.9.8.7 or '
      '2001:db8::ffff) spec.hostAliases[6].ip: Invalid value: "1.1.1.01": must not have leading 0s]')
_case("type-host-alias-hostnames-string", "hostAliases: [{ip: 1.2.3.4, hostnames: foo}]", _UNMARSHAL + "string "
      "into Go struct field HostAlias.spec.hostAliases.hostnames of type []string)")

# ---------------------------------------------------------------- runtimeClassName, preemptionPolicy, os
_case("runtime-class-ok", "runtimeClassName: gvisor\npreemptionPolicy: Never\nos: {name: linux}", None)
_case("runtime-class-bad", "runtimeClassName: Kata_Containers",
      'spec.runtimeClassName: Invalid value: "Kata_Containers": a lowercase RFC 1123 subdomain')
_case("runtime-class-empty", "runtimeClassName: ''",
      'spec.runtimeClassName: Invalid value: "": a lowercase RFC 1123 subdomain')
_case("runtime-class-null", "runtimeClassName: null", None)
_case("preemption-empty", "preemptionPolicy: ''", "spec.preemptionPolicy: Required value]")
_case("preemption-bad", "preemptionPolicy: Always",
      'spec.preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"]')
_case("os-empty", "os: {}", "spec.os.name: Required value]")
_case("os-bad", "os: {name: Linux}", 'spec.os: Unsupported value: "Linux": supported values: "linux", "windows"]')
_case("os-linux-windows-options", "os: {name: linux}\nsecurityContext: {windowsOptions: {runAsUserName: a}}",
      "spec.securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod]")
_case("os-windows-forbidden", "os: {name: windows}\nhostPID: true\nsecurityContext: {runAsUser: 1000}",
      "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod spec.hostPID: Forbidden: "
      "cannot be set for a windows pod]")
_case("os-windows-ok", "os: {name: windows}", None)
_case("os-windows-containers", "os: {name: windows}\nshareProcessNamespace: false\n"
      "securityContext: {sysctls: [], supplementalGroups: []}\n"
      "initContainers: [{name: i, image: x, securityContext: {privileged: false, capabilities: {}}}]",
      "spec.securityContext.supplementalGroups: Forbidden: cannot be set for a windows pod "
      "spec.shareProcessNamespace: Forbidden: cannot be set for a windows pod "
      "spec.initContainers[0].securityContext.capabilities: Forbidden: cannot be set for a windows pod "
      "spec.initContainers[0].securityContext.privileged: Forbidden: cannot be set for a windows pod]")
_case("os-linux-init-container-windows-options", "os: {name: linux}\n"
      "initContainers: [{name: i, image: x, securityContext: {windowsOptions: {}}}]",
      "spec.initContainers[0].securityContext.windowsOptions: Forbidden: windows options cannot be set for a "
      "linux pod]")
_case("type-os-string", "os: linux", _UNMARSHAL + "string into Go struct field PodSpec.spec.os of type v1.PodOS)")
_case("type-preemption-number", "preemptionPolicy: 1", _UNMARSHAL + "number into Go struct field "
      "PodSpec.spec.preemptionPolicy of type v1.PreemptionPolicy)")

# ---------------------------------------------------------------- ordering across the spec
_case("order-across-fields", """\
restartPolicy: Sometimes
os: {name: mac}
preemptionPolicy: Sometimes
runtimeClassName: A
hostAliases: [{ip: x}]
tolerations: [{key: k, operator: X}]
activeDeadlineSeconds: 0
topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule, minDomains: -1}]
schedulingGates: [{name: 'a b'}]
dnsPolicy: None
affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: z, namespaces: [A]}]}}
nodeSelector: {a: 'b c'}""",
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never" '
      f'spec.nodeSelector: Invalid value: "b c": {_LABEL_VALUE}')
CASES["order-across-fields-tail.yaml"] = (CASES["order-across-fields.yaml"][0],
      f'{_PA}[0].namespace: Invalid value: "A": a lowercase RFC 1123 label must consist of lower case alphanumeric '
      "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
      "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?') "
      "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None "
      "spec.schedulingGates[0]: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' "
      "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
      "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
      f"{_TSC}[0].minDomains: Invalid value: -1: must be greater than zero "
      "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive "
      'spec.tolerations[0].operator: Unsupported value: "X": supported values: "Equal", "Exists" '
      'spec.hostAliases[0].ip: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) '
      'spec.runtimeClassName: Invalid value: "A": a lowercase RFC 1123 subdomain must consist of lower case '
      "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
      "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') "
      'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never" '
      'spec.os: Unsupported value: "mac": supported values: "linux", "windows" '
      'spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared]')
CASES["order-json-types.json"] = (json.dumps({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}], "tolerations": [{"key": 1}],
             "hostAliases": "x"}}),
    _UNMARSHAL + "number into Go struct field Toleration.spec.tolerations.key of type string)")
# a value of a named type is shown as encoding/json writes it, a string as %q does
CASES["quoting-json-and-go.json"] = (json.dumps({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}],
             "tolerations": [{"key": "k", "operator": "<\x01\x7f>", "effect": "\u2028"},
                             {"key": "k", "value": "\x01\x7f"}]}}),
    'spec.tolerations[0].operator: Unsupported value: "\\u003c\\u0001\x7f\\u003e": supported values: "Equal", '
    '"Exists" spec.tolerations[0].effect: Unsupported value: "\\u2028": supported values: "NoSchedule", '
    '"PreferNoSchedule", "NoExecute" spec.tolerations[1].operator: Invalid value: "\\x01\\x7f": ')
CASES["order-yaml-types-sorted.yaml"] = (_spec("tolerations: [{key: 1}]\nhostAliases: x"),
    _UNMARSHAL + "string into Go struct field PodSpec.spec.hostAliases of type []v1.HostAlias)")


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("scheduling"), CASES)


def test_enough_cases() -> None:
    refused = [n for n, (_, phrase) in CASES.items() if phrase]
    assert len(CASES) >= 40 and len(refused) >= 30 and len(CASES) - len(refused) >= 10


@pytest.mark.parametrize("name", sorted(CASES))
def test_validated_as_the_kubelet_validates(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert_as_the_kubelet(kubelet, ours, CASES[name][1])
