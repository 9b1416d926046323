"""``podnuma agent``: a small node agent around the kubelet engine.

It admits the pods of a static-pod directory the way the kubelet's file
source and admission do (:mod:`.manifests`, :mod:`.core`), keeps the CPU and
memory managers' checkpoints in a state directory exactly like the kubelet's
and restores from them on start (:mod:`.state`), reports every decision in
structured logs (:mod:`.logs`) and a status file (written by :mod:`.core`), serves the
PodResources API (:mod:`podnuma.grpc`), exposes Prometheus metrics
(:mod:`.metrics`) and can hand each allocation to the cgroup code
(:mod:`.cgroups`). :mod:`.run` is the loop: watch, reconcile, stop on a
signal.
"""
