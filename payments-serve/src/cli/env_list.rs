//! A list of secrets in one environment variable (the mock's
//! `PAYMENTS_MOCK_API_KEYS`): a flag's value is in the process list for
//! every user of the machine (`ps`, `/proc/PID/cmdline`), the environment
//! only for the process's own user.

use std::ffi::OsStr;
use std::str::FromStr;

/// The values the environment variable `variable` lists, separated by
/// whitespace (spaces, tabs, new lines: a key file read with `$(cat
/// keys)` works), each parsed as a flag's value would be (`T`'s
/// `FromStr`, whose error never repeats the value). Unset, empty or only
/// whitespace: none.
///
/// ```
/// let keys: Vec<u16> = payments_serve::cli::env_list("PAYMENTS_DOC_NO_SUCH", "a number")
///     .expect("none");
/// assert!(keys.is_empty());
/// ```
///
/// # Errors
///
/// A value `T` refuses, or a variable that is not UTF-8: one line naming
/// the variable and the entry's position, never a value.
pub fn env_list<T>(variable: &str, what: &str) -> Result<Vec<T>, String>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    match std::env::var_os(variable) {
        Some(value) => parse_list(variable, &value, what),
        None => Ok(Vec::new()),
    }
}

/// [`env_list`] of the variable's `value`.
fn parse_list<T>(variable: &str, value: &OsStr, what: &str) -> Result<Vec<T>, String>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let Some(text) = value.to_str() else {
        return Err(format!(
            "the environment variable {variable} is not valid UTF-8 (its value is not shown: it holds secrets)"
        ));
    };
    let entries: Vec<&str> = text.split_whitespace().collect();
    let count = entries.len();
    entries
        .into_iter()
        .enumerate()
        .map(|(at, entry)| {
            entry.parse::<T>().map_err(|reason| {
                format!(
                    "the environment variable {variable}: entry {} of {count} is not {what}: {reason}",
                    at + 1
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Key(String);

    impl FromStr for Key {
        type Err = &'static str;

        fn from_str(s: &str) -> Result<Self, Self::Err> {
            if s.starts_with("sk_") {
                Ok(Self(s.to_owned()))
            } else {
                Err("a key starts with sk_ (value not shown)")
            }
        }
    }

    fn list(value: &str) -> Result<Vec<Key>, String> {
        parse_list("KEYS", OsStr::new(value), "an API key")
    }

    #[test]
    fn entries_are_separated_by_any_whitespace() {
        assert_eq!(
            list(" sk_a=1,2\tsk_b\n\nsk_c \n").expect("three"),
            [
                Key("sk_a=1,2".into()),
                Key("sk_b".into()),
                Key("sk_c".into())
            ]
        );
        assert_eq!(list("").expect("none"), []);
        assert_eq!(list(" \n\t").expect("none"), []);
    }

    #[test]
    fn a_bad_entry_names_the_variable_and_its_position_never_the_value() {
        let err = list("sk_a secret-value sk_c").expect_err("refused");
        assert_eq!(
            err,
            "the environment variable KEYS: entry 2 of 3 is not an API key: a key starts with sk_ (value not shown)"
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt as _;
            let err = parse_list::<Key>("KEYS", OsStr::from_bytes(b"sk_\xff"), "an API key")
                .expect_err("not UTF-8");
            assert!(err.contains("KEYS is not valid UTF-8"), "{err}");
        }
    }
}
