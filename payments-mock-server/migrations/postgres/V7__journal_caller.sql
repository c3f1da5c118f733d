-- The merchant of the API key that sent a journaled request, which decides
-- whose view of the journal it is in (CONTRACT section 18), whichever
-- replica reads it. NULL: no bound key sent it (open mode, an admin or
-- unbound key), or written before this version. Released: never edit; a
-- change is a new V<n> file. Idempotent, as V4.
ALTER TABLE mock_journal ADD COLUMN IF NOT EXISTS caller UUID;
