-- 0001: runs, the copied source ids of a copy, and the append-only event log.
-- Every object lives in the ledger's own schema; the migration runner creates the schema.

-- A run of a transfer, written before anything moves. run_key is an internal surrogate so
-- that each copied id costs 16 bytes of key instead of the run id's text.
CREATE TABLE artemis_transfer.runs (
    run_key            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    run_id             text PRIMARY KEY,
    fingerprint        text NOT NULL,
    mode               text NOT NULL CHECK (mode IN ('move', 'copy')),
    source_broker      text NOT NULL,
    source_queue       text NOT NULL,
    target_broker      text NOT NULL,
    target_queue       text NOT NULL,
    selection_filter   text NOT NULL DEFAULT '',
    selection_ids      integer NOT NULL DEFAULT 0 CHECK (selection_ids >= 0),
    t0                 timestamptz NOT NULL,
    status             text NOT NULL
        CHECK (status IN ('running', 'interrupted', 'completed', 'returned', 'failed')),
    staged             bigint NOT NULL DEFAULT 0,
    relayed            bigint NOT NULL DEFAULT 0,
    resent             bigint NOT NULL DEFAULT 0,
    returned           bigint NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    created_by_user    text NOT NULL DEFAULT '',
    created_by_host    text NOT NULL DEFAULT '',
    terraform_workspace text NOT NULL DEFAULT '',
    -- The lease fences a run: only its holder relays it. NULL holder: free.
    lease_holder       text,
    lease_taken_at     timestamptz,
    lease_heartbeat_at timestamptz,
    lease_expires_at   timestamptz
);

-- The audit reads runs by queue and by status, newest first; retention by status and age.
CREATE INDEX runs_source_queue_idx ON artemis_transfer.runs (source_queue, created_at DESC);
CREATE INDEX runs_target_queue_idx ON artemis_transfer.runs (target_queue, created_at DESC);
CREATE INDEX runs_status_idx ON artemis_transfer.runs (status, updated_at);

-- The source broker message ids a copy has put on the target; the primary key is the only
-- index, and it answers "which of this batch are already copied".
CREATE TABLE artemis_transfer.copied (
    run_key   bigint NOT NULL REFERENCES artemis_transfer.runs (run_key) ON DELETE CASCADE,
    source_id bigint NOT NULL,
    PRIMARY KEY (run_key, source_id)
);

-- What happened to a run, in order. Rows are only ever added (an UPDATE is refused below);
-- they go only with their run, by retention.
CREATE TABLE artemis_transfer.events (
    id     bigserial PRIMARY KEY,
    run_id text NOT NULL REFERENCES artemis_transfer.runs (run_id) ON DELETE CASCADE,
    at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    kind   text NOT NULL CHECK (kind IN ('created', 'staged', 'relayed', 'interrupted', 'resumed',
        'completed', 'returned', 'failed', 'lease-taken', 'lease-lost')),
    detail jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE INDEX events_run_idx ON artemis_transfer.events (run_id, id);

CREATE FUNCTION artemis_transfer.events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'artemis_transfer.events is append-only: event % may not be changed', OLD.id
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER events_append_only BEFORE UPDATE ON artemis_transfer.events
    FOR EACH ROW EXECUTE FUNCTION artemis_transfer.events_append_only();
