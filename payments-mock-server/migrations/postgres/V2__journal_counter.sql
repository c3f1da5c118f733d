-- Journal numbers taken by the writing transaction itself: one row, updated
-- under its row lock. A write that rolls back gives its numbers back (a
-- sequence would not), writers number in commit order, and a reader that
-- sees `last` sees every entry up to it. Starts where the sequence was.
CREATE TABLE mock_journal_counter (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last BIGINT NOT NULL
);
INSERT INTO mock_journal_counter (id, last)
SELECT 1, CASE WHEN is_called THEN last_value ELSE 0 END FROM mock_journal_seq_seq;
