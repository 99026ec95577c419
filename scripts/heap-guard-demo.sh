#!/usr/bin/env bash
# The heap guard on a target with a really small heap: starts brokers of its own with a heap of
# HEAPDEMO_JAVA_MEMORY (default 256M) in a state folder of their own on shifted ports, runs the
# heapdemo test (internal/transfer/copying/heap_demo_test.go, built with -tags heapdemo) against
# them, and stops them whatever happened. The test copies into a paging target address until the
# relay pauses for the target's heap (its default 90%), starts a consumer there, and checks that
# the copy then finishes with every message once and that the target never logged
# OutOfMemoryError. A consumer that holds one message is attached from the start, as a slow one
# would be: with no consumer at all, the preflight refuses a selection whose records could fill
# the target's whole heap, and the copy never starts. About 5 minutes on a 2-core machine (the
# test took 254 s, 26 s of it filling the source).
#
# Environment:
#   HEAPDEMO_JAVA_MEMORY  the brokers' heap (default 256M)
#   HEAPDEMO_MESSAGES     the messages copied (default: sized from the target's heap)
#   ARTEMIS_HOME, ARTEMIS_CACHE_DIR  as for scripts/testenv.sh
#   ARTEMIS_TESTENV_DIR   default ${TMPDIR:-/tmp}/terraform-provider-artemis-heapdemo
#   TESTENV_PORT_SHIFT    default 2300
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export ARTEMIS_TESTENV_DIR=${ARTEMIS_TESTENV_DIR:-${TMPDIR:-/tmp}/terraform-provider-artemis-heapdemo}
export TESTENV_PORT_SHIFT=${TESTENV_PORT_SHIFT:-2300}
export ARTEMIS_TESTENV_FILE=$ARTEMIS_TESTENV_DIR/testenv.json
unset ARTEMIS_TESTENV_OWNER
trap 'bash scripts/testenv.sh down || true' EXIT
TESTENV_JAVA_MEMORY=${HEAPDEMO_JAVA_MEMORY:-256M} TESTENV_GLOBAL_MAX_SIZE=16M bash scripts/testenv.sh up
ARTEMIS_TESTENV_REQUIRED=1 go test -tags heapdemo -count=1 -timeout 45m -v -run '^TestHeapDemo_' ./internal/transfer/copying
