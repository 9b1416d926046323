"""Kubelet feature gates as of Kubernetes v1.37.

Mirrors ``k8s.io/component-base/featuregate/feature_gate.go`` (``SetFromMap``:
unknown gates, locked gates, the ``AllAlpha``/``AllBeta`` specials and the
dependency check) over the gate table of ``pkg/features/kube_features.go``
(``defaultVersionedKubernetesFeatureGates`` and
``defaultKubernetesFeatureGateDependencies``) at v1.37.

Every gate the kubelet registers carries its v1.37.2 spec (default,
maturity, lock) and dependencies; the table is data in ``_gates_v137.py``.
Gates removed before v1.37 (``MemoryManager``, ``SidecarContainers``, ...)
are unrecognized, as in the kubelet.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Final, Protocol

from podnuma.api._gates_v137 import DEPENDENCIES as _DEPENDENCIES
from podnuma.api._gates_v137 import GATES as _GATES
from podnuma.buildinfo import mypyc_attr
from podnuma.errors import KubeletStartupError

__all__ = [
    "FeatureGateReader",
    "Maturity",
    "FeatureSpec",
    "FeatureGates",
    "KNOWN_FEATURES",
    "DEPENDENCIES",
    "OTHER_KNOWN_GATES",
    "ALL_ALPHA",
    "ALL_BETA",
    "aggregate_message",
    "GATE_POD_LEVEL_RESOURCES",
    "GATE_POD_LEVEL_RESOURCE_MANAGERS",
    "GATE_POD_LEVEL_RESOURCES_FIX_KUBELET_QOS_CLASS",
]

# The names of the gates the engine reads by name (``pkg/features``).
GATE_POD_LEVEL_RESOURCES: Final = "PodLevelResources"
GATE_POD_LEVEL_RESOURCE_MANAGERS: Final = "PodLevelResourceManagers"
GATE_POD_LEVEL_RESOURCES_FIX_KUBELET_QOS_CLASS: Final = "PodLevelResourcesFixKubeletQOSClass"


class Maturity(enum.Enum):
    """``featuregate.prerelease`` (GA is the empty string upstream)."""

    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = ""
    DEPRECATED = "DEPRECATED"


class FeatureSpec:
    """The effective ``FeatureSpec`` of a gate at v1.37."""

    default: bool
    maturity: Maturity
    locked: bool
    __slots__ = ('default', 'maturity', 'locked')

    def __init__(self, default: bool, maturity: Maturity, locked: bool = False) -> None:
        self.default = default
        self.maturity = maturity
        self.locked = locked

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(default={self.default!r}, maturity={self.maturity!r}, locked={self.locked!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FeatureSpec) or other.__class__ is not self.__class__:
            return False
        return (self.default, self.maturity, self.locked) == (other.default, other.maturity, other.locked)

    def __hash__(self) -> int:
        return hash((self.default, self.maturity, self.locked))


_A_OFF = FeatureSpec(False, Maturity.ALPHA)
_B_ON = FeatureSpec(True, Maturity.BETA)
_B_OFF = FeatureSpec(False, Maturity.BETA)
_GA_ON = FeatureSpec(True, Maturity.GA)
_GA_LOCKED = FeatureSpec(True, Maturity.GA, locked=True)

ALL_ALPHA: Final = "AllAlpha"
ALL_BETA: Final = "AllBeta"

_MATURITY: Final[Mapping[str, Maturity]] = {m.name: m for m in Maturity}

KNOWN_FEATURES: Final[Mapping[str, FeatureSpec]] = {
    # component-base specials
    ALL_ALPHA: _A_OFF,
    ALL_BETA: _B_OFF,
    **{
        name: FeatureSpec(default, _MATURITY[maturity], locked)
        for name, (default, maturity, locked) in _GATES.items()
    },
}

# defaultKubernetesFeatureGateDependencies: a gate may only be enabled when
# every gate it lists is enabled.
DEPENDENCIES: Final[Mapping[str, tuple[str, ...]]] = _DEPENDENCIES

# Every registered gate carries its spec now; kept for callers.
OTHER_KNOWN_GATES: Final[frozenset[str]] = frozenset()

# The gates the engine reads (what ``as_dict`` reports beside explicit ones).
INTERPRETED: Final[tuple[str, ...]] = (
    "CPUManagerPolicyAlphaOptions",
    "CPUManagerPolicyBetaOptions",
    "CPUManagerPolicyOptions",
    "TopologyManagerPolicyAlphaOptions",
    "TopologyManagerPolicyBetaOptions",
    "TopologyManagerPolicyOptions",
    GATE_POD_LEVEL_RESOURCES,
    GATE_POD_LEVEL_RESOURCE_MANAGERS,
    "PodLevelResourcesFixDefaulting",
    GATE_POD_LEVEL_RESOURCES_FIX_KUBELET_QOS_CLASS,
    "InPlacePodVerticalScaling",
    "InPlacePodVerticalScalingExclusiveCPUs",
    "InPlacePodVerticalScalingExclusiveMemory",
    "InPlacePodLevelResourcesVerticalScaling",
)


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def aggregate_message(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or a bracketed,
    de-duplicated, comma-separated list."""
    seen: list[str] = []
    for msg in errors:
        if msg not in seen:
            seen.append(msg)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


class FeatureGateReader(Protocol):
    """What the engine reads from the feature gates (``featuregate.FeatureGate``'s
    ``Enabled``); :class:`FeatureGates` is the implementation. Declared once:
    every manager takes this."""

    def enabled(self, name: str) -> bool: ...


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class FeatureGates:
    """An immutable, resolved kubelet feature gate set.

    ``enabled`` answers with the explicit setting or the gate's v1.37
    default; asking for a gate podnuma does not model is a programming
    error (upstream panics), raised as ``ValueError``.
    """

    __slots__ = ("_explicit", "_resolved")

    def __init__(self, explicit: Mapping[str, bool], resolved: Mapping[str, bool]) -> None:
        self._explicit: dict[str, bool] = dict(explicit)
        self._resolved: dict[str, bool] = dict(resolved)

    @classmethod
    def defaults(cls) -> FeatureGates:
        return cls({}, {})

    @classmethod
    def from_mapping(cls, settings: Mapping[str, bool]) -> FeatureGates:
        """``featureGate.SetFromMap`` on the kubelet's default gate.

        Raises ``KubeletStartupError`` carrying component-base's message
        (``unrecognized feature gate: X``, ``cannot set feature gate X to
        false, feature is locked to true``, ``X is enabled, but depends on
        features that are disabled: [Y]``). Gates are visited in the
        mapping's order (Go visits a map in random order); dependency
        violations are reported by gate name.
        """
        errors: list[str] = []
        resolved: dict[str, bool] = {}
        explicit: dict[str, bool] = {}
        for name, value in settings.items():
            spec = KNOWN_FEATURES.get(name)
            if spec is None and name not in OTHER_KNOWN_GATES:
                # Upstream returns at the first unknown gate.
                errors.append(f"unrecognized feature gate: {name}")
                raise KubeletStartupError(aggregate_message(errors))
            if spec is not None and spec.locked and spec.default != value:
                errors.append(
                    f"cannot set feature gate {name} to {_go_bool(value)}, "
                    f"feature is locked to {_go_bool(spec.default)}"
                )
                continue
            if name in (ALL_ALPHA, ALL_BETA):
                wanted = Maturity.ALPHA if name == ALL_ALPHA else Maturity.BETA
                for other, other_spec in KNOWN_FEATURES.items():
                    if other in (ALL_ALPHA, ALL_BETA) or other_spec.maturity is not wanted:
                        continue
                    resolved.setdefault(other, value)
            resolved[name] = value
            explicit[name] = value
        if errors:
            raise KubeletStartupError(aggregate_message(errors))

        def is_on(feature: str) -> bool:
            if feature in resolved:
                return resolved[feature]
            return KNOWN_FEATURES[feature].default

        for feature in sorted(DEPENDENCIES):
            if not is_on(feature):
                continue
            off = sorted(dep for dep in DEPENDENCIES[feature] if not is_on(dep))
            if off:
                errors.append(
                    f"{feature} is enabled, but depends on features that are disabled: "
                    f"[{' '.join(off)}]"
                )
        if errors:
            raise KubeletStartupError(aggregate_message(errors))
        return cls(explicit, resolved)

    def enabled(self, name: str) -> bool:
        if name in self._resolved:
            return self._resolved[name]
        spec = KNOWN_FEATURES.get(name)
        if spec is None:
            if name in OTHER_KNOWN_GATES:
                return False
            raise ValueError(f"feature {name!r} is not registered in the kubelet's FeatureGate")
        return spec.default

    def explicit(self) -> dict[str, bool]:
        """The gates set explicitly, as given."""
        return dict(self._explicit)

    def as_dict(self) -> dict[str, bool]:
        """Every gate the engine reads with its effective value, plus any
        other gate set explicitly; sorted by name."""
        names = set(INTERPRETED)
        names |= {n for n in self._explicit if n not in (ALL_ALPHA, ALL_BETA)}
        return {n: self.enabled(n) for n in sorted(names)}

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FeatureGates):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.as_dict().items()))

    def __repr__(self) -> str:
        return f"FeatureGates({self._explicit!r})"
