//! The settings a store keeps (CONTRACT section 15): the catalogue and the
//! expiry, the two options that decide behaviour, so that every replica of
//! one database and every restart on one file behave alike.
//!
//! The first start on an empty store writes its settings; a later start
//! without `--catalog` / `--expiry` takes the store's; one that gives
//! different ones is refused (exit 2), naming each difference. `--fresh`
//! empties the store and writes this start's.

use std::time::Duration;

use crate::domain::catalog::Catalog;
use crate::error::Error;

/// What a store keeps besides its transactions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The products offered.
    pub catalog: Catalog,
    /// Unconfirmed transactions expire after this.
    pub expiry: Duration,
}

/// Which settings this start chose itself; the rest default to what the
/// store holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Given {
    /// `--catalog` was given.
    pub catalog: bool,
    /// `--expiry` was given.
    pub expiry: bool,
}

impl Settings {
    /// The settings to serve with: `start`'s, where nothing is stored or
    /// where they agree with `stored`; the stored ones where this start
    /// gave none.
    ///
    /// # Errors
    ///
    /// [`Error::SettingsDiffer`] naming every difference of what was given.
    pub(crate) fn reconcile(
        start: Settings,
        given: Given,
        stored: Option<Settings>,
        store: &str,
    ) -> Result<Settings, Error> {
        let Some(stored) = stored else {
            return Ok(start);
        };
        let mut differences = Vec::new();
        if given.catalog {
            differences.extend(start.catalog.differences(&stored.catalog));
        }
        if given.expiry && start.expiry != stored.expiry {
            differences.push(format!(
                "expiry: {} in the store, {} given",
                humantime::format_duration(stored.expiry),
                humantime::format_duration(start.expiry)
            ));
        }
        if differences.is_empty() {
            Ok(stored)
        } else {
            Err(Error::SettingsDiffer {
                store: store.to_owned(),
                difference: differences.join("; "),
            })
        }
    }
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
    fn nothing_given_takes_the_stores_and_agreeing_values_pass() {
        let stored = settings(60);
        let taken = Settings::reconcile(settings(900), Given::default(), Some(stored.clone()), "s");
        assert_eq!(taken.expect("no conflict"), stored);
        let given = Given {
            catalog: true,
            expiry: true,
        };
        assert_eq!(
            Settings::reconcile(settings(60), given, Some(stored.clone()), "s").expect("same"),
            stored
        );
        assert_eq!(
            Settings::reconcile(settings(5), given, None, "s").expect("empty store"),
            settings(5)
        );
    }

    #[test]
    fn a_different_expiry_is_refused_naming_both() {
        let given = Given {
            catalog: false,
            expiry: true,
        };
        let e = Settings::reconcile(settings(30), given, Some(settings(900)), "sqlite:x.db")
            .expect_err("differs");
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(
            text.contains("expiry: 15m in the store, 30s given"),
            "{text}"
        );
        assert!(text.contains("sqlite:x.db"), "{text}");
    }
}
