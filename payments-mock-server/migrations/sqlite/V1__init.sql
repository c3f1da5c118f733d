-- The mock's state in SQLite (CONTRACT section 15): transactions with every
-- field, their confirmation and payment page, the journal, the clock offset
-- and the settings. Released: never edit; a change is a new V<n> file.
-- Times are milliseconds since the epoch; ids are 16-byte UUIDs.

CREATE TABLE mock_transactions (
    id BLOB PRIMARY KEY NOT NULL,
    merchant_id BLOB NOT NULL,
    reference_no TEXT NOT NULL,
    description TEXT,
    amount_minor INTEGER NOT NULL,
    currency_code TEXT NOT NULL,
    currency_exponent INTEGER NOT NULL,
    product_code TEXT NOT NULL,
    quantity INTEGER,
    country_code TEXT,
    store_id TEXT NOT NULL,
    device_id TEXT,
    payer_id TEXT,
    return_url TEXT,
    extra_properties TEXT,
    initial TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    confirmed_at INTEGER,
    result TEXT,
    settles_at INTEGER,
    error_message TEXT,
    provider_reference TEXT,
    confirm_extra TEXT,
    page_token TEXT,
    page_deadline INTEGER,
    decision TEXT,
    decided_at INTEGER,
    later_submits INTEGER NOT NULL DEFAULT 0,
    UNIQUE (merchant_id, reference_no)
) WITHOUT ROWID;

-- Status by reference without a merchant scope.
CREATE INDEX mock_transactions_reference ON mock_transactions (reference_no);
-- Payment pages by token.
CREATE UNIQUE INDEX mock_transactions_page ON mock_transactions (page_token)
    WHERE page_token IS NOT NULL;

CREATE TABLE mock_journal (
    seq INTEGER PRIMARY KEY NOT NULL,
    at INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT,
    headers TEXT NOT NULL,
    body TEXT NOT NULL,
    status INTEGER,
    error_code TEXT,
    request_id TEXT NOT NULL,
    fault TEXT,
    replica TEXT NOT NULL
);

CREATE TABLE mock_clock (
    id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    offset_nanos INTEGER NOT NULL
);
INSERT INTO mock_clock (id, offset_nanos) VALUES (1, 0);

-- catalog (TOML), expiry_ms, journal_last_seq.
CREATE TABLE mock_settings (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
