-- Sandboxes shared by the replicas (CONTRACT section 19). Released: never
-- edit; a change is a new V<n> file. Idempotent, so a database whose
-- history was rolled back by hand migrates again.

-- One row per live sandbox, and one for the root (the nil id), which every
-- transaction belongs to unless it is a sandbox's. Times are wall-clock
-- milliseconds since the epoch (a sandbox's time to live is real time);
-- offset_nanos is the sandbox's virtual clock (the root's stays in
-- mock_clock); reset_stamp is the capture stamp of its last reset: a
-- journal entry stamped before it was answered before that reset and is
-- not written.
CREATE TABLE IF NOT EXISTS mock_sandboxes (
    id UUID PRIMARY KEY,
    owner UUID,
    label TEXT,
    created_at BIGINT NOT NULL,
    ttl_ms BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    offset_nanos BIGINT NOT NULL DEFAULT 0,
    reset_stamp BIGINT NOT NULL DEFAULT 0
);
INSERT INTO mock_sandboxes (id, created_at, ttl_ms, expires_at)
VALUES ('00000000-0000-0000-0000-000000000000', 0, 0, 9223372036854775807)
ON CONFLICT (id) DO NOTHING;

-- Each transaction's sandbox; removing a sandbox removes its transactions,
-- and a transaction cannot be made in a sandbox another replica removed.
ALTER TABLE mock_transactions ADD COLUMN IF NOT EXISTS sandbox UUID NOT NULL
    DEFAULT '00000000-0000-0000-0000-000000000000'
    REFERENCES mock_sandboxes (id) ON DELETE CASCADE;
-- A reference is unique per merchant within a sandbox.
ALTER TABLE mock_transactions DROP CONSTRAINT IF EXISTS mock_transactions_merchant_id_reference_no_key;
CREATE UNIQUE INDEX IF NOT EXISTS mock_transactions_sandbox_reference
    ON mock_transactions (sandbox, merchant_id, reference_no);
DROP INDEX IF EXISTS mock_transactions_reference;
CREATE INDEX IF NOT EXISTS mock_transactions_sandbox_reference_only
    ON mock_transactions (sandbox, reference_no);

-- Each journal entry's sandbox: numbers are given across the sandboxes
-- (one counter), each sandbox reads and keeps its own entries.
ALTER TABLE mock_journal ADD COLUMN IF NOT EXISTS sandbox UUID NOT NULL
    DEFAULT '00000000-0000-0000-0000-000000000000';
CREATE INDEX IF NOT EXISTS mock_journal_sandbox_seq ON mock_journal (sandbox, seq);
