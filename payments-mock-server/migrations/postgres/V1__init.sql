-- The mock's state in PostgreSQL (CONTRACT section 15), shared by every
-- replica: transactions with every field, their confirmation and payment
-- page, the journal of all replicas, one clock offset and the settings.
-- Released: never edit; a change is a new V<n> file.
-- Times are milliseconds since the epoch.

CREATE TABLE mock_transactions (
    id UUID PRIMARY KEY,
    merchant_id UUID NOT NULL,
    reference_no TEXT NOT NULL,
    description TEXT,
    amount_minor BIGINT NOT NULL,
    currency_code TEXT NOT NULL,
    currency_exponent INTEGER NOT NULL,
    product_code TEXT NOT NULL,
    quantity BIGINT,
    country_code TEXT,
    store_id TEXT NOT NULL,
    device_id TEXT,
    payer_id TEXT,
    return_url TEXT,
    extra_properties TEXT,
    initial TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    confirmed_at BIGINT,
    result TEXT,
    settles_at BIGINT,
    error_message TEXT,
    provider_reference TEXT,
    confirm_extra TEXT,
    page_token TEXT UNIQUE,
    page_deadline BIGINT,
    decision TEXT,
    decided_at BIGINT,
    later_submits BIGINT NOT NULL DEFAULT 0,
    -- Exactly one initiate per merchant and reference, across replicas.
    UNIQUE (merchant_id, reference_no)
);

-- Status by reference without a merchant scope.
CREATE INDEX mock_transactions_reference ON mock_transactions (reference_no);

-- The journal of every replica; seq numbers go on across resets.
CREATE TABLE mock_journal (
    seq BIGSERIAL PRIMARY KEY,
    at BIGINT NOT NULL,
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
    id INTEGER PRIMARY KEY CHECK (id = 1),
    offset_nanos BIGINT NOT NULL
);
INSERT INTO mock_clock (id, offset_nanos) VALUES (1, 0);

-- catalog (TOML), expiry_ms.
CREATE TABLE mock_settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
