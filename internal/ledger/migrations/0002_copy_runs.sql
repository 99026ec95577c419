-- 0002: what a copy needs beyond 0001: the "abandoned" status (a copy ended without finishing,
-- terraform destroy), and the broker node each side of a run is pinned to (a copy keeps no
-- manifest on the source broker, so the ledger is where a resumed copy finds the target node
-- whose duplicate-id cache holds the ids of its last unrecorded batches).

ALTER TABLE artemis_transfer.runs DROP CONSTRAINT runs_status_check;
ALTER TABLE artemis_transfer.runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('running', 'interrupted', 'completed', 'returned', 'failed', 'abandoned'));

ALTER TABLE artemis_transfer.events DROP CONSTRAINT events_kind_check;
ALTER TABLE artemis_transfer.events ADD CONSTRAINT events_kind_check
    CHECK (kind IN ('created', 'staged', 'relayed', 'interrupted', 'resumed', 'completed', 'returned',
        'failed', 'lease-taken', 'lease-lost', 'abandoned'));

ALTER TABLE artemis_transfer.runs ADD COLUMN source_node_id text NOT NULL DEFAULT '';
ALTER TABLE artemis_transfer.runs ADD COLUMN target_node_id text NOT NULL DEFAULT '';

-- A copy finds its unfinished run by the transfer's fingerprint.
CREATE INDEX runs_fingerprint_idx ON artemis_transfer.runs (fingerprint, created_at);
