#!/usr/bin/env bash
# Adds @huggingface/transformers beside this checkout's node_modules, for the local embedding model's
# tests (test/llm/local-embeddings.test.ts, test/e2e/local-embeddings.test.ts). It is an optional peer
# dependency of live-mem, not a devDependency: npm will not install a package the project declares as
# its own peer, and onnxruntime-node, which it brings, fetches CUDA libraries from outside the npm
# registry on Linux x64 unless told not to (ONNXRUNTIME_NODE_INSTALL=skip: live-mem runs models on the
# CPU, whose library the package ships). So it is installed into a folder of its own and linked in.
#
#   bash scripts/add-transformers.sh            # PEERS_DIR (default /tmp/live-mem-peers) holds it
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=4.3.2
PEERS_DIR=${PEERS_DIR:-/tmp/live-mem-peers}
if [ ! -f "$PEERS_DIR/node_modules/@huggingface/transformers/package.json" ]; then
  mkdir -p "$PEERS_DIR"
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$PEERS_DIR" --no-audit --no-fund --loglevel=error "@huggingface/transformers@$VERSION" >/dev/null
fi
mkdir -p node_modules/@huggingface
ln -sfn "$PEERS_DIR/node_modules/@huggingface/transformers" node_modules/@huggingface/transformers
echo "@huggingface/transformers $VERSION linked into node_modules (from $PEERS_DIR)"
