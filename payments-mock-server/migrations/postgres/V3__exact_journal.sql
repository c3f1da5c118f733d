-- The journal is exact across replicas (CONTRACT section 15). Released:
-- never edit; a change is a new V<n> file. Idempotent, so a database whose
-- history was rolled back by hand migrates again.

-- Moved on by every reset: a replica drops the entries it captured under
-- an older epoch (served before that reset) instead of writing them after
-- it.
ALTER TABLE mock_journal_counter ADD COLUMN IF NOT EXISTS epoch BIGINT NOT NULL DEFAULT 0;

-- Ticks that order journal reads against journal writes: a read takes one
-- when it starts, and a replica's write takes one before it takes the
-- entries it has not written yet.
CREATE SEQUENCE IF NOT EXISTS mock_journal_tick;

-- One row per running replica process: the tick of its last journal write
-- (every request it answered before that tick is written), and when it
-- last wrote (a heartbeat; a replica silent for 2 s is taken as gone).
CREATE TABLE IF NOT EXISTS mock_journal_replicas (
    instance UUID PRIMARY KEY,
    replica TEXT NOT NULL,
    watermark BIGINT NOT NULL,
    seen_at TIMESTAMPTZ NOT NULL
);
