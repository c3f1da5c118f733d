-- The journal lists requests in the order they were answered, whichever
-- replicas served them (CONTRACT section 15, issue 40). Released: never
-- edit; a change is a new V<n> file. Idempotent, so a database whose
-- history was rolled back by hand migrates again.

-- An entry is written unnumbered (seq NULL), stamped with its replica's
-- capture time (nanoseconds since the epoch, kept growing per replica),
-- and numbered later, in stamp order, once every live replica has written
-- everything it captured before that stamp. Reads see numbered entries
-- only. seq stays unique; the numbers still come from
-- mock_journal_counter.
ALTER TABLE mock_journal DROP CONSTRAINT IF EXISTS mock_journal_pkey;
ALTER TABLE mock_journal ALTER COLUMN seq DROP NOT NULL;
ALTER TABLE mock_journal ALTER COLUMN seq DROP DEFAULT;
CREATE UNIQUE INDEX IF NOT EXISTS mock_journal_by_seq ON mock_journal (seq);

-- The replica process that captured it (mock_journal_replicas.instance)
-- and its stamp: one capture, written once (a write retried after its
-- commit was cut off adds nothing), and the order entries are numbered
-- in. NULL for entries written before this version (all numbered).
ALTER TABLE mock_journal ADD COLUMN IF NOT EXISTS instance UUID;
ALTER TABLE mock_journal ADD COLUMN IF NOT EXISTS stamp BIGINT;
CREATE UNIQUE INDEX IF NOT EXISTS mock_journal_capture ON mock_journal (instance, stamp);
CREATE INDEX IF NOT EXISTS mock_journal_unnumbered ON mock_journal (stamp) WHERE seq IS NULL;

-- Each replica's watermark as a stamp: every entry it captured with an
-- earlier stamp is written. NULL for a replica that does not say (it
-- holds no numbering back).
ALTER TABLE mock_journal_replicas ADD COLUMN IF NOT EXISTS watermark_at BIGINT;
