"""gRPC edges of podnuma: the kubelet's PodResources v1 API.

``podresources/v1`` holds the API's ``.proto`` (declared from the published
definition) and the modules generated from it (``scripts/gen-podresources-stubs.sh``);
``convert`` maps podnuma's :mod:`podnuma.cm.podresources_view` view to the messages
and back to plain data; ``server`` serves it on a unix socket with the
kubelet's rate limit; ``client`` calls it.

Needs the ``agent`` extra (grpcio, protobuf).
"""
