#!/usr/bin/env bash
# `make test-versions`: transfers across Artemis versions. For each version in TEST_VERSIONS, an
# environment of its own (scripts/testenv.sh run) whose legacy broker runs that version beside the
# Artemis 2.40 source and target, and the tests that need the legacy broker:
#   internal/provider  a move with a filter and a copy, legacy -> newest and newest -> legacy, in
#                      one plan and apply each (TestAccVersions_*); a refusal at plan that reads
#                      the legacy broker's address settings; the data sources on the legacy broker
#   internal/artemis   the client's management and AMQP operations on the legacy broker
#   internal/transfer  moves and copies of each kind of message into and out of ANYCAST and
#                      MULTICAST queues on the legacy broker, and the routing canary there
# The default versions are the oldest supported (preflight.MinimumArtemisVersion) and 2.31.2, the
# last of the pre-2.32 management forms; the newest served, 2.40.0, is the source and the target.
# docs/guides/supported-versions.md lists what differs.
#
# Environment:
#   TEST_VERSIONS   the legacy broker's versions, run one after the other (default "2.18.0 2.31.2")
#   and everything scripts/testenv.sh reads (ARTEMIS_CACHE_DIR, TESTENV_PORT_SHIFT, ...).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSIONS=${TEST_VERSIONS:-2.18.0 2.31.2}
PROVIDER_TESTS='TestAccVersions_.*|TestAccBrokerDataSource_ReadsVersionNameAndDuplicateCache|TestAccQueueDataSource_ReadsQueueDepthAndEffectiveSettings'
ARTEMIS_TESTS='TestBrokerInfo_ReportsVersionNameAndNodeID|TestAddressSettings_ExactMatchAddedReadAndRemoved|TestMoveMessages_MovesAFilteredBoundedChunk|TestCountMatches_CountsPastTheBrokersBrowsePageCap|TestConnect_WrongPasswordNamesBrokerAndUser|TestReceiver_BeyondMaxConsumersIsErrMaxConsumers|TestInvalidFilter_IsAFilterErrorFromManagementAndAttach|TestSender_PipelinedSendsAllAccepted|TestBrowser_SeesAllWithoutConsuming'
TRANSFER_TESTS='TestMove_DeliversIntoQueuesOfEitherRoutingType|TestCopy_DeliversIntoQueuesOfEitherRoutingType'
CORE_TESTS='TestCanary_ProvesDeliveryIntoAQueueOfTheTargetsRoutingType'
TERRAFORM=$(command -v terraform) || { echo "test-versions: terraform is not on PATH" >&2; exit 1; }
export TF_ACC_TERRAFORM_PATH=$TERRAFORM

summary=()
start=$SECONDS
for v in $VERSIONS; do
  echo "test-versions: legacy broker on Artemis $v, source and target on the default version"
  t0=$SECONDS
  # The test names are anchored: each -run matches exactly the tests listed above.
  TESTENV_LEGACY_VERSION=$v bash scripts/testenv.sh run -- bash -c '
    export ARTEMIS_TESTENV_REQUIRED=1 TF_ACC=1 CHECKPOINT_DISABLE=1
    go test ./internal/provider -p 1 -count=1 -timeout 20m -run "^('"$PROVIDER_TESTS"')$" &&
    go test ./internal/artemis -p 1 -count=1 -timeout 20m -run "^('"$ARTEMIS_TESTS"')$" &&
    go test ./internal/transfer -p 1 -count=1 -timeout 20m -run "^('"$TRANSFER_TESTS"')$" &&
    go test ./internal/transfer/core -p 1 -count=1 -timeout 20m -run "^('"$CORE_TESTS"')$"' \
    || { echo "test-versions: FAILED with the legacy broker on Artemis $v" >&2; exit 1; }
  summary+=("Artemis $v: passed in $((SECONDS - t0)) s")
done
printf 'test-versions: %s\n' "${summary[@]}"
echo "test-versions: all versions passed in $((SECONDS - start)) s"
