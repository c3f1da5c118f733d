//! A JSON body read once and borrowed, for the rules: an object's fields
//! as slices of the body's own text, each value read only as far as a
//! rule asks (a string decoded only when it has escapes, a number kept as
//! its literal text, so amounts stay exact and nothing goes through
//! `f64`).
//!
//! It reads what `serde_json::Value` reads (the same parser underneath)
//! and answers what the rules asked of a `Value` before, the same way: a
//! repeated key's last value counts (but an answer read as the envelope
//! that repeats one is refused: `unique`), numbers are equal when their
//! decimal values are, and [`Json`]'s `Display` writes what `Value`'s does
//! (the tests below hold the two together). Parsing a status answer this
//! way allocates once (the field list) instead of once per key and value.

use std::borrow::Cow;
use std::fmt;

use serde::Deserializer as _;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

mod escapes;
mod unique;
pub(crate) use escapes::{json_but_lone_surrogate, lone_surrogate};
use unique::{Names, Noted, check_fields, check_value, repeated};

/// The key serde_json hands a visitor for a number when its
/// `arbitrary_precision` feature is on (as it is in this workspace): such
/// a "map" is a number, not an object.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// One JSON value, as its text stands in a body (no whitespace around it).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Json<'a>(&'a str);

/// What a JSON value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl<'a> Json<'a> {
    /// The value whose text is `text`: text serde_json has read as one
    /// value (a field of a parsed [`Object`], or text kept from one).
    pub(crate) fn new(text: &'a str) -> Self {
        Self(text)
    }

    /// The value's text, as it came.
    pub fn text(self) -> &'a str {
        self.0
    }

    /// What it is, from its first character.
    pub fn shape(self) -> Shape {
        match self.0.as_bytes().first() {
            Some(b'n') => Shape::Null,
            Some(b't' | b'f') => Shape::Bool,
            Some(b'"') => Shape::String,
            Some(b'[') => Shape::Array,
            Some(b'{') => Shape::Object,
            _ => Shape::Number,
        }
    }

    /// Whether it is `null`.
    pub fn is_null(self) -> bool {
        self.shape() == Shape::Null
    }

    /// Whether it is a string.
    pub fn is_string(self) -> bool {
        self.shape() == Shape::String
    }

    /// The boolean, when it is one.
    pub fn as_bool(self) -> Option<bool> {
        match self.0 {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    /// The string, when it is one: borrowed from the body unless it has
    /// escapes.
    pub fn as_str(self) -> Option<Cow<'a, str>> {
        if self.shape() != Shape::String {
            return None;
        }
        let inner = self.0.get(1..self.0.len().saturating_sub(1))?;
        if inner.contains('\\') {
            serde_json::from_str::<String>(self.0).ok().map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(inner))
        }
    }

    /// The number's literal text, when it is a number.
    pub fn number(self) -> Option<&'a str> {
        (self.shape() == Shape::Number).then_some(self.0)
    }

    /// The number's text as `serde_json::Number` keeps it: the literal,
    /// but an exponent always as `e` and a sign (`1E2` is `1e+2`).
    pub fn number_text(self) -> Option<Cow<'a, str>> {
        let text = self.number()?;
        let Some(at) = text.find(['e', 'E']) else {
            return Some(Cow::Borrowed(text));
        };
        let (mantissa, exponent) = (&text[..at], &text[at + 1..]);
        let sign = if exponent.starts_with(['+', '-']) {
            ""
        } else {
            "+"
        };
        Some(Cow::Owned(format!("{mantissa}e{sign}{exponent}")))
    }

    /// The number as a `u64`, when its literal is one (`Value::as_u64`
    /// under `arbitrary_precision`: `1.0` and `1e2` are not).
    pub fn as_u64(self) -> Option<u64> {
        self.number()?.parse().ok()
    }

    /// Whether the number's literal is an integer, of any size (`-` and
    /// digits: no fraction, no exponent, as [`Json::as_u64`] reads one).
    pub fn is_integer(self) -> bool {
        self.number().is_some_and(|text| {
            let digits = text.strip_prefix('-').unwrap_or(text);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        })
    }

    /// Whether the number's literal is an integer greater than 0, of any
    /// size (`18446744073709551616` is one, though no `u64` holds it).
    pub fn is_positive_integer(self) -> bool {
        self.is_integer()
            && self
                .number()
                .is_some_and(|text| !text.starts_with('-') && text.bytes().any(|b| b != b'0'))
    }

    /// The number as an `i64`, when its literal is one.
    pub fn as_i64(self) -> Option<i64> {
        self.number()?.parse().ok()
    }

    /// The number's exact decimal value, when it has one that fits.
    pub fn decimal(self) -> Option<rust_decimal::Decimal> {
        let text = self.number()?;
        rust_decimal::Decimal::from_str_exact(text)
            .or_else(|_| rust_decimal::Decimal::from_scientific(text))
            .ok()
    }

    /// The value as a `serde_json::Value`: only for what the rules do not
    /// read field by field (objects and arrays compared or shown whole).
    fn value(self) -> Option<serde_json::Value> {
        serde_json::from_str(self.0).ok()
    }
}

impl fmt::Debug for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Json({})", self.0)
    }
}

/// As `serde_json::Value` writes itself: compact, a string with JSON's
/// escapes, a number as its literal.
impl fmt::Display for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shape() {
            Shape::String => match self.as_str() {
                Some(text) => match serde_json::to_string(text.as_ref()) {
                    Ok(quoted) => f.write_str(&quoted),
                    Err(_) => f.write_str(self.0),
                },
                None => f.write_str(self.0),
            },
            Shape::Array | Shape::Object => match self.value() {
                Some(value) => write!(f, "{value}"),
                None => f.write_str(self.0),
            },
            Shape::Number => f.write_str(&self.number_text().unwrap_or(Cow::Borrowed(self.0))),
            Shape::Null | Shape::Bool => f.write_str(self.0),
        }
    }
}

/// Equal JSON values, as `serde_json::Value`'s `==`, but numbers by their
/// exact value (`150` and `150.0`).
pub fn same(a: Json<'_>, b: Json<'_>) -> bool {
    match (a.shape(), b.shape()) {
        (Shape::Number, Shape::Number) => match (a.decimal(), b.decimal()) {
            (Some(x), Some(y)) => x == y,
            _ => a.number_text() == b.number_text(),
        },
        (Shape::String, Shape::String) => a.0 == b.0 || a.as_str() == b.as_str(),
        (Shape::Array, Shape::Array) | (Shape::Object, Shape::Object) => {
            a.0 == b.0 || a.value() == b.value()
        }
        (x, y) => x == y && a.0 == b.0,
    }
}

/// A JSON object's fields in the order they came, each value's text
/// borrowed from the body.
#[derive(Debug, Clone, Default)]
pub struct Object<'a> {
    fields: Vec<(Cow<'a, str>, Json<'a>)>,
}

impl<'a> Object<'a> {
    /// The value of `name` (the last one, when the key is repeated).
    pub fn get(&self, name: &str) -> Option<Json<'a>> {
        self.fields
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| *value)
    }

    /// The string value of `name`.
    pub fn text(&self, name: &str) -> Option<Cow<'a, str>> {
        self.get(name)?.as_str()
    }

    /// Every field, in the order they came (a repeated key each time).
    pub fn fields(&self) -> &[(Cow<'a, str>, Json<'a>)] {
        &self.fields
    }

    /// Every key, sorted and each once (as `serde_json::Map` lists them).
    pub fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self.fields.iter().map(|(k, _)| k.as_ref()).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

/// What a body is, read as JSON.
#[derive(Debug, Clone)]
pub enum Body<'a> {
    /// Not JSON at all (or empty).
    NotJson,
    /// JSON, but not an object.
    NotObject,
    /// A JSON object.
    Object(Object<'a>),
}

impl<'a> Body<'a> {
    /// Reads `text`: one JSON value and nothing after it but whitespace,
    /// and no lone surrogate escape ([`lone_surrogate`]).
    pub fn of(text: &'a str) -> Self {
        let mut de = serde_json::Deserializer::from_str(text);
        let read = de.deserialize_any(ObjectVisitor).and_then(|read| {
            de.end()?;
            Ok(read)
        });
        match read {
            Ok(_) if lone_surrogate(text) => Body::NotJson,
            Ok(Some(fields)) => Body::Object(Object { fields }),
            Ok(None) => Body::NotObject,
            Err(_) => Body::NotJson,
        }
    }

    /// The object, when it is one.
    #[cfg(test)]
    pub fn object(&self) -> Option<&Object<'a>> {
        match self {
            Body::Object(object) => Some(object),
            _ => None,
        }
    }

    /// Whether it is JSON.
    #[cfg(test)]
    pub fn is_json(&self) -> bool {
        !matches!(self, Body::NotJson)
    }
}

/// An object of a value that is one (an object's text, as the parse of
/// its body left it).
#[cfg(test)]
pub fn object_of<'a>(value: Json<'a>) -> Option<Object<'a>> {
    if value.shape() != Shape::Object {
        return None;
    }
    match Body::of(value.0) {
        Body::Object(object) => Some(object),
        _ => None,
    }
}

/// An answer read as the envelope (interface section 2.1) in one pass:
/// `isSuccess`, `errorCode` and `message` as their text, and `data` read
/// into its fields when it is an object (its own text is not kept: the
/// rules ask only what it is).
#[derive(Debug, Clone, Default)]
pub struct EnvelopeRead<'a> {
    /// `isSuccess`, `errorCode`, `message`, each when present.
    pub is_success: Option<Json<'a>>,
    /// `errorCode`.
    pub error_code: Option<Json<'a>>,
    /// `message`.
    pub message: Option<Json<'a>>,
    /// What `data` is, when present.
    pub data: Option<Shape>,
    /// `data`'s fields, when it is an object.
    pub data_object: Option<Object<'a>>,
}

/// Reads an answer's body: `NotJson` (`Err`), `NotObject` (`None`), or
/// the envelope's fields. A body that repeats a member name in one of its
/// objects is not JSON a client reads ([`unique`]).
pub fn envelope_of(text: &str) -> Result<Option<EnvelopeRead<'_>>, ()> {
    read_envelope(text, None)
}

/// The member name an answer repeats in one object, when that is why
/// [`envelope_of`] refused it: for the finding's message.
pub(crate) fn json_but_repeated_name(text: &str) -> Option<String> {
    let noted = std::cell::RefCell::new(None);
    let _ = read_envelope(text, Some(&noted));
    noted.into_inner()
}

fn read_envelope<'a>(text: &'a str, noted: Noted<'_>) -> Result<Option<EnvelopeRead<'a>>, ()> {
    let mut de = serde_json::Deserializer::from_str(text);
    let read = de
        .deserialize_any(EnvelopeVisitor { noted })
        .and_then(|read| {
            de.end()?;
            Ok(read)
        });
    match read {
        Ok(read) if !lone_surrogate(text) => Ok(read),
        _ => Err(()),
    }
}

/// The top level of an answer.
struct EnvelopeVisitor<'n> {
    noted: Noted<'n>,
}

impl<'de> Visitor<'de> for EnvelopeVisitor<'_> {
    type Value = Option<EnvelopeRead<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut read = EnvelopeRead::default();
        let mut first = true;
        let mut others = Names::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if first && key == NUMBER_TOKEN {
                let Key(number) = map.next_value::<Key<'de>>()?;
                return match number.parse::<serde_json::Number>() {
                    Ok(_) => Ok(None),
                    Err(e) => Err(de::Error::custom(e)),
                };
            }
            first = false;
            let slot = match key.as_ref() {
                "isSuccess" => &mut read.is_success,
                "errorCode" => &mut read.error_code,
                "message" => &mut read.message,
                "data" if read.data.is_some() => return Err(repeated(&key, self.noted)),
                "data" => {
                    let (shape, fields) = map.next_value_seed(Nested)?;
                    if let Some(fields) = &fields {
                        check_fields(fields, self.noted)?;
                    }
                    read.data = Some(shape);
                    read.data_object = fields.map(|fields| Object { fields });
                    continue;
                }
                _ if !others.add(key.clone()) => return Err(repeated(&key, self.noted)),
                _ => {
                    let value: &'de RawValue = map.next_value()?;
                    check_value(Json(value.get()), self.noted)?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(repeated(&key, self.noted));
            }
            let value: &'de RawValue = map.next_value()?;
            check_value(Json(value.get()), self.noted)?;
            *slot = Some(Json(value.get()));
        }
        Ok(Some(read))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        ObjectVisitor.visit_seq(seq).map(|_| None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A nested value: what it is, and its fields when it is an object.
struct Nested;

impl<'de> de::DeserializeSeed<'de> for Nested {
    type Value = (Shape, Option<Fields<'de>>);

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(NestedVisitor)
    }
}

struct NestedVisitor;

impl<'de> Visitor<'de> for NestedVisitor {
    type Value = (Shape, Option<Fields<'de>>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(match ObjectVisitor.visit_map(map)? {
            Some(fields) => (Shape::Object, Some(fields)),
            None => (Shape::Number, None),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        ObjectVisitor.visit_seq(seq).map(|_| (Shape::Array, None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok((Shape::Bool, None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok((Shape::Number, None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok((Shape::Number, None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok((Shape::Number, None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok((Shape::String, None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((Shape::Null, None))
    }
}

/// A key, borrowed unless it has escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Reads one value: an object's fields, or `None` for any other value
/// (read through and dropped).
struct ObjectVisitor;

type Fields<'a> = Vec<(Cow<'a, str>, Json<'a>)>;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Option<Fields<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Vec::with_capacity(12);
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if fields.is_empty() && key == NUMBER_TOKEN {
                // As `Value` reads it: a number, when the text is one.
                let Key(number) = map.next_value::<Key<'de>>()?;
                return match number.parse::<serde_json::Number>() {
                    Ok(_) => Ok(None),
                    Err(e) => Err(de::Error::custom(e)),
                };
            }
            let value: &'de RawValue = map.next_value()?;
            fields.push((key, Json(value.get())));
        }
        Ok(Some(fields))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests;
