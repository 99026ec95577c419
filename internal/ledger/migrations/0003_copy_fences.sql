-- 0003: fences a run's writes need beyond its lease. Additive: older runs keep working.
--
-- One unfinished copy per transfer. Two applies of the same copy at the same moment each found
-- no unfinished copy and each created a run, so the target got every message twice. A copy run
-- created from now on claims its transfer (its fingerprint: source queue, target and
-- selection) while it is unfinished; a second claim fails on the unique index below, in the
-- database, where two processes cannot both pass. The oldest unfinished copy of each transfer
-- already recorded claims it too, so a ledger that holds older duplicates still migrates.
ALTER TABLE artemis_transfer.runs ADD COLUMN claims_transfer boolean NOT NULL DEFAULT false;

UPDATE artemis_transfer.runs SET claims_transfer = true
WHERE run_key IN (
    SELECT min(run_key) FROM artemis_transfer.runs
    WHERE mode = 'copy' AND status IN ('running', 'interrupted', 'failed')
    GROUP BY fingerprint);

CREATE UNIQUE INDEX runs_one_unfinished_copy_idx ON artemis_transfer.runs (fingerprint)
    WHERE mode = 'copy' AND claims_transfer AND status IN ('running', 'interrupted', 'failed');

-- Counter writes a retry cannot apply twice: the holder's last applied write, by a sequence
-- number the holder increments per write. A write retried after a timeout or a reset that had
-- in fact committed carries the same number and adds nothing.
ALTER TABLE artemis_transfer.runs ADD COLUMN counted_by text;
ALTER TABLE artemis_transfer.runs ADD COLUMN counted_seq bigint NOT NULL DEFAULT 0;

-- Whether a lease's holder still runs: the key of the advisory lock its process's session holds
-- while it lives (NULL: unknown, the lease lapses only by expiry). A host name and pid could not
-- tell: two containers with the same host name each saw the other's holders as gone.
ALTER TABLE artemis_transfer.runs ADD COLUMN lease_presence_key bigint;

-- The version of the message identity a copy records what it copied by. A newer provider may
-- identify messages otherwise (leaving out what the broker changes when it re-adds a message);
-- a run keeps the version it was created with, so a resumed run finds what it copied. Runs
-- recorded before versions used the first.
ALTER TABLE artemis_transfer.runs ADD COLUMN copy_identity smallint NOT NULL DEFAULT 1;
