//! Member names repeated in one object: JSON (RFC 8259, section 4) leaves
//! what they mean to the reader, I-JSON (RFC 7493, section 2.3) forbids
//! them, and `serde_json` reading this project's client's types refuses
//! the whole answer (`duplicate field`). An answer is read with these
//! checks ([`super::envelope_of`]), so that one which repeats a name is
//! not taken for the envelope whose last values it gives.
//!
//! The envelope's and `data`'s own members are checked as they are read;
//! a value that is an object or an array is read again for its own
//! objects (only then: the usual answer's values are strings, numbers
//! and `null`), as deep as `serde_json` reads.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::Deserializer as _;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::{Json, Key, NUMBER_TOKEN, Shape};

/// What the error of a repeated name starts with.
const REPEATED: &str = "repeated member name";

/// Where the first repeated name is noted, when the caller wants it (the
/// finding's message).
pub(super) type Noted<'n> = Option<&'n RefCell<Option<String>>>;

/// The error of `name` repeated in one object, noted in `noted`.
pub(super) fn repeated<E: de::Error>(name: &str, noted: Noted<'_>) -> E {
    if let Some(noted) = noted {
        noted.borrow_mut().get_or_insert_with(|| name.to_owned());
    }
    E::custom(format_args!("{REPEATED} {name:?}"))
}

/// Names as an object's members come, each once: a list while few, a
/// set when many (an object of 100,000 members is not read in
/// quadratic time).
#[derive(Default)]
pub(super) struct Names<'a> {
    few: Vec<Cow<'a, str>>,
    many: HashSet<Cow<'a, str>>,
}

impl<'a> Names<'a> {
    /// Adds `name`; `false` when it came before.
    pub(super) fn add(&mut self, name: Cow<'a, str>) -> bool {
        if !self.many.is_empty() {
            return self.many.insert(name);
        }
        if self.few.contains(&name) {
            return false;
        }
        self.few.push(name);
        if self.few.len() > 32 {
            self.many.extend(self.few.drain(..));
        }
        true
    }
}

/// The error when `value` (an object's or an array's text, read already)
/// repeats a name in one of its objects.
pub(super) fn check_value<E: de::Error>(value: Json<'_>, noted: Noted<'_>) -> Result<(), E> {
    if !matches!(value.shape(), Shape::Object | Shape::Array) {
        return Ok(());
    }
    let mut de = serde_json::Deserializer::from_str(value.text());
    match de.deserialize_any(Unique(noted)) {
        // Deeper than serde_json reads: not read, as the client's reader
        // of such a value (raw) does not.
        Err(e) if e.to_string().starts_with(REPEATED) => Err(E::custom(e)),
        _ => Ok(()),
    }
}

/// The error when the fields of an object read already (`data`'s) repeat
/// a name, or a value of theirs does.
pub(super) fn check_fields<E: de::Error>(
    fields: &[(Cow<'_, str>, Json<'_>)],
    noted: Noted<'_>,
) -> Result<(), E> {
    let mut names = Names::default();
    for (name, value) in fields {
        if !names.add(Cow::Borrowed(name.as_ref())) {
            return Err(repeated(name, noted));
        }
        check_value(*value, noted)?;
    }
    Ok(())
}

/// A value read through (and dropped) whose objects name each member
/// once, at any depth.
#[derive(Clone, Copy)]
struct Unique<'n>(Noted<'n>);

impl<'de> DeserializeSeed<'de> for Unique<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut names = Names::default();
        let mut first = true;
        while let Some(Key(name)) = map.next_key::<Key<'de>>()? {
            if first && name == NUMBER_TOKEN {
                // A number (serde_json's `arbitrary_precision`).
                let Key(_) = map.next_value::<Key<'de>>()?;
                return Ok(());
            }
            first = false;
            if !names.add(name.clone()) {
                return Err(repeated(&name, self.0));
            }
            map.next_value_seed(self)?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}
