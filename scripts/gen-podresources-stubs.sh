#!/bin/sh
# Regenerate the PodResources Python modules (messages, gRPC stubs and their
# type stubs) from src/podnuma/grpc/podresources/{v1,v1alpha1}/api.proto.
# Needs: pip install grpcio-tools mypy-protobuf   (the `grpc-dev` extra)
set -eu
cd "$(dirname "$0")/../src"
python -m grpc_tools.protoc -I . \
  --python_out=. --grpc_python_out=. \
  --mypy_out=. --mypy_grpc_out=. \
  podnuma/grpc/podresources/v1/api.proto \
  podnuma/grpc/podresources/v1alpha1/api.proto
