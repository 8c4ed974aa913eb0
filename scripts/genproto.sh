#!/usr/bin/env bash
# genproto.sh regenerates the Go code of proto/sqpredict/v1 from its .proto files.
#
# usage: scripts/genproto.sh [OUTDIR]
#
# OUTDIR is the module root to write into (default: the repository). It needs protoc
# (Debian: protobuf-compiler and libprotobuf-dev) and the plugins pinned below on PATH;
# scripts/checkproto.sh installs whatever is missing.
set -euo pipefail

# Pinned plugin versions: the generated code depends on them.
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.5.1
MODULE=github.com/sqpredict/sqpredict

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(cd "${1:-$root}" && pwd)
PATH="$(go env GOPATH)/bin:$PATH"

have=$(protoc-gen-go --version 2>/dev/null | awk '{print $2}')
if [[ "$have" != "$PROTOC_GEN_GO_VERSION" ]]; then
	echo "genproto: protoc-gen-go ${have:-missing}, want $PROTOC_GEN_GO_VERSION (run scripts/checkproto.sh)" >&2
	exit 1
fi
have=$(protoc-gen-go-grpc --version 2>/dev/null | awk '{print $2}')
if [[ "$have" != "${PROTOC_GEN_GO_GRPC_VERSION#v}" ]]; then
	echo "genproto: protoc-gen-go-grpc ${have:-missing}, want $PROTOC_GEN_GO_GRPC_VERSION (run scripts/checkproto.sh)" >&2
	exit 1
fi

cd "$root/proto"
protoc -I . -I /usr/include \
	--go_out="$out" --go_opt=module="$MODULE" \
	--go-grpc_out="$out" --go-grpc_opt=module="$MODULE" \
	sqpredict/v1/*.proto
