//! The settings as the SQLite and PostgreSQL stores keep them: two text
//! values, `catalog` (the catalogue as TOML) and `expiry_ms`, read the
//! same way from both.

use std::time::Duration;

use crate::domain::catalog::Catalog;
use crate::domain::settings::Settings;

/// The expiry as the stores keep it, in milliseconds.
pub(crate) fn expiry_millis(settings: &Settings) -> i64 {
    i64::try_from(settings.expiry.as_millis()).unwrap_or(i64::MAX)
}

/// The settings a store holds as its two text values (`catalog` and
/// `expiry_ms`, read the same way from SQLite and PostgreSQL): none
/// unless it holds both.
///
/// # Errors
///
/// What does not read back (the store reports it as its failure).
pub(crate) fn from_texts(
    catalog: Option<String>,
    expiry_millis: Option<String>,
) -> Result<Option<Settings>, String> {
    let (Some(catalog), Some(expiry)) = (catalog, expiry_millis) else {
        return Ok(None);
    };
    let expiry = expiry
        .parse::<i64>()
        .map_err(|_| "the stored expiry is not a number".to_owned())?;
    from_stored(&catalog, expiry).map(Some)
}

/// Settings from their stored form: the catalogue as TOML and the
/// expiry in milliseconds.
fn from_stored(catalog: &str, expiry_millis: i64) -> Result<Settings, String> {
    let catalog = Catalog::from_toml_str(catalog)
        .map_err(|e| format!("the stored catalogue does not read back: {e}"))?;
    let expiry = u64::try_from(expiry_millis)
        .ok()
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .ok_or_else(|| format!("the stored expiry {expiry_millis} ms is not positive"))?;
    Ok(Settings { catalog, expiry })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(expiry_secs: u64) -> Settings {
        Settings {
            catalog: Catalog::default(),
            expiry: Duration::from_secs(expiry_secs),
        }
    }

    #[test]
    fn stored_settings_read_back() {
        let s = settings(42);
        let back = from_stored(&s.catalog.to_toml(), expiry_millis(&s)).expect("reads");
        assert_eq!(back, s);
        assert!(from_stored("nonsense", 1).is_err());
        assert!(from_stored(&s.catalog.to_toml(), 0).is_err());
    }
}
