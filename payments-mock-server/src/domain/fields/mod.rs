//! A request body's fields, as the validators read them ([`Fields`]): from
//! a `serde_json` map (the public `validate_*` functions, the tests), or
//! from a body read once into its known fields ([`KnownFields`]), strings
//! borrowed from the request's bytes where they have no escapes.
//!
//! Reading into a `Map<String, Value>` allocated a `String` per key and
//! per value and a tree node per entry, only to look each field up by name
//! and drop the lot (about a fifth of an initiate's instructions,
//! BENCHMARKS.md). [`KnownFields::parse`] reads a flat object the quick
//! way (`quick.rs`) where that is certain to read what `serde_json` reads,
//! and walks any other body with the same `serde_json` deserializer as
//! the map, so what it refuses, and the message it
//! refuses it with, are the map's own: a body that does not start with `{`
//! goes through [`parse_object`] itself, values of fields the validators do
//! not read are still parsed as `Value`s (so a lone surrogate or nesting
//! past the recursion limit is refused wherever it stands), and the two
//! keys `serde_json` reads as a number or raw value in first place are
//! left to the map too. A test compares both on every byte string
//! proptest makes and on mutated bodies.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::Deserializer as _;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, Deserialize, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::domain::invalid::Invalid;

mod quick;

/// The fields of the initiate and confirm bodies (CONTRACT section 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Name {
    MerchantId,
    ReferenceNo,
    Description,
    Amount,
    CurrencyCode,
    ProductCode,
    Quantity,
    CountryCode,
    StoreId,
    DeviceId,
    PayerId,
    ReturnUrl,
    ExtraProperties,
    TransactionId,
    ConfirmationCode,
}

impl Name {
    const COUNT: usize = 15;

    /// The field's JSON name.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::MerchantId => "merchantId",
            Self::ReferenceNo => "referenceNo",
            Self::Description => "description",
            Self::Amount => "amount",
            Self::CurrencyCode => "currencyCode",
            Self::ProductCode => "productCode",
            Self::Quantity => "quantity",
            Self::CountryCode => "countryCode",
            Self::StoreId => "storeId",
            Self::DeviceId => "deviceId",
            Self::PayerId => "payerId",
            Self::ReturnUrl => "returnUrl",
            Self::ExtraProperties => "extraProperties",
            Self::TransactionId => "transactionId",
            Self::ConfirmationCode => "confirmationCode",
        }
    }

    fn of(key: &str) -> Option<Self> {
        Some(match key {
            "merchantId" => Self::MerchantId,
            "referenceNo" => Self::ReferenceNo,
            "description" => Self::Description,
            "amount" => Self::Amount,
            "currencyCode" => Self::CurrencyCode,
            "productCode" => Self::ProductCode,
            "quantity" => Self::Quantity,
            "countryCode" => Self::CountryCode,
            "storeId" => Self::StoreId,
            "deviceId" => Self::DeviceId,
            "payerId" => Self::PayerId,
            "returnUrl" => Self::ReturnUrl,
            "extraProperties" => Self::ExtraProperties,
            "transactionId" => Self::TransactionId,
            "confirmationCode" => Self::ConfirmationCode,
            _ => return None,
        })
    }
}

/// A field that is present and not `null`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Field<'b> {
    /// A JSON string.
    Str(&'b str),
    /// A JSON number, as its literal text (`arbitrary_precision`).
    Number(&'b str),
    /// Any other JSON value (never `null`, a string or a number).
    Value(&'b Value),
}

/// A body whose fields the validators read.
pub(crate) trait Fields {
    /// The field `name`; `None` when absent or `null` (both mean absent).
    fn field(&self, name: Name) -> Option<Field<'_>>;
}

impl Fields for Map<String, Value> {
    fn field(&self, name: Name) -> Option<Field<'_>> {
        match self.get(name.as_str())? {
            Value::Null => None,
            Value::String(s) => Some(Field::Str(s)),
            Value::Number(n) => Some(Field::Number(n.as_str())),
            other => Some(Field::Value(other)),
        }
    }
}

/// One field as read.
#[derive(Debug, Default)]
enum Slot<'a> {
    #[default]
    Absent,
    Str(Cow<'a, str>),
    /// A number's literal text.
    Number(Cow<'a, str>),
    /// Anything else; `null` included.
    Value(Value),
}

/// A JSON object body read once into the fields the validators know.
#[derive(Debug, Default)]
pub(crate) struct KnownFields<'a> {
    slots: [Slot<'a>; Name::COUNT],
}

impl Fields for KnownFields<'_> {
    fn field(&self, name: Name) -> Option<Field<'_>> {
        match &self.slots[name as usize] {
            Slot::Absent | Slot::Value(Value::Null) => None,
            Slot::Str(s) => Some(Field::Str(s)),
            Slot::Number(n) => Some(Field::Number(n)),
            Slot::Value(v) => Some(Field::Value(v)),
        }
    }
}

impl<'a> KnownFields<'a> {
    /// Reads `bytes` as a JSON object body: exactly what [`parse_object`]
    /// accepts, refused with exactly its message.
    ///
    /// # Errors
    ///
    /// `VALIDATION_ERROR` `request body is not valid JSON: <detail>`.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, Invalid> {
        // Nearly every body is a flat object that the quick way reads
        // exactly as the full way does (`quick.rs`); any other is the
        // full way's.
        if let Ok(text) = std::str::from_utf8(bytes)
            && let Some(body) = quick::read(text)
        {
            return Ok(body);
        }
        Self::parse_fully(bytes)
    }

    /// [`KnownFields::parse`] through `serde_json`'s own deserializer.
    fn parse_fully(bytes: &'a [u8]) -> Result<Self, Invalid> {
        let starts_an_object = bytes
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            == Some(&b'{');
        if !starts_an_object {
            return Err(not_an_object(bytes));
        }
        let left_to_the_map = Cell::new(false);
        let visitor = BodyVisitor {
            left_to_the_map: &left_to_the_map,
        };
        // A body that is UTF-8 as a whole (nearly all) is read as text:
        // one check of the whole, instead of one per string, which was a
        // tenth of an initiate's parse. Any other goes byte-wise, and gets
        // the byte reader's own message for the bad sequence.
        let read = match std::str::from_utf8(bytes) {
            Ok(text) => {
                let mut de = serde_json::Deserializer::from_str(text);
                de.deserialize_map(visitor)
                    .and_then(|body| de.end().map(|()| body))
            }
            Err(_) => {
                let mut de = serde_json::Deserializer::from_slice(bytes);
                de.deserialize_map(visitor)
                    .and_then(|body| de.end().map(|()| body))
            }
        };
        match read {
            Ok(body) if !left_to_the_map.get() => Ok(body),
            Err(e) if !left_to_the_map.get() => Err(Invalid::not_json(e)),
            _ => match parse_object(bytes) {
                Ok(map) => Ok(Self::of_map(map)),
                Err(e) => Err(e),
            },
        }
    }

    /// The known fields of `map` (the rare body left to the map).
    fn of_map(map: Map<String, Value>) -> Self {
        let mut body = Self::default();
        for (key, value) in map {
            if let Some(name) = Name::of(&key) {
                body.slots[name as usize] = match value {
                    Value::String(s) => Slot::Str(Cow::Owned(s)),
                    Value::Number(n) => Slot::Number(Cow::Owned(n.as_str().to_owned())),
                    other => Slot::Value(other),
                };
            }
        }
        body
    }
}

/// [`parse_object`]'s refusal of a body that does not start with `{`.
fn not_an_object(bytes: &[u8]) -> Invalid {
    match parse_object(bytes) {
        Err(e) => e,
        // Unreachable: only an object parses as one, and it starts with `{`.
        Ok(_) => Invalid::not_json("expected a JSON object"),
    }
}

/// `serde_json`'s keys that make `Value` read `{"key": …}` as a number or
/// a raw value instead of an object, when they come first.
const VALUE_MAGIC_KEYS: [&str; 2] = [
    "$serde_json::private::Number",
    "$serde_json::private::RawValue",
];

struct BodyVisitor<'f> {
    left_to_the_map: &'f Cell<bool>,
}

impl<'de> Visitor<'de> for BodyVisitor<'_> {
    type Value = KnownFields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KnownFields<'de>, A::Error> {
        let mut body = KnownFields::default();
        let mut first = true;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                Key::Known(name) => {
                    body.slots[name as usize] = map.next_value_seed(SlotSeed {
                        left_to_the_map: self.left_to_the_map,
                    })?;
                }
                Key::Magic if first => {
                    self.left_to_the_map.set(true);
                    return Err(de::Error::custom("left to the map"));
                }
                Key::Magic | Key::Other => {
                    // Read whole, as the map would, and dropped.
                    map.next_value::<Value>()?;
                }
            }
            first = false;
        }
        Ok(body)
    }
}

enum Key {
    Known(Name),
    Magic,
    Other,
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(match Name::of(key) {
            Some(name) => Key::Known(name),
            None if VALUE_MAGIC_KEYS.contains(&key) => Key::Magic,
            None => Key::Other,
        })
    }
}

struct SlotSeed<'f> {
    left_to_the_map: &'f Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for SlotSeed<'_> {
    type Value = Slot<'de>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Slot<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SlotSeed<'_> {
    type Value = Slot<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Slot<'de>, E> {
        Ok(Slot::Str(Cow::Borrowed(s)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Slot<'de>, E> {
        Ok(Slot::Str(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Slot<'de>, E> {
        Ok(Slot::Str(Cow::Owned(s)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Slot<'de>, E> {
        Ok(Slot::Value(Value::Null))
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Slot<'de>, E> {
        Ok(Slot::Value(Value::Bool(b)))
    }

    // Numbers as `Value` keeps them: its `Number`'s text.
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Slot<'de>, E> {
        Ok(Slot::Number(Cow::Owned(
            serde_json::Number::from(n).as_str().to_owned(),
        )))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Slot<'de>, E> {
        Ok(Slot::Number(Cow::Owned(
            serde_json::Number::from(n).as_str().to_owned(),
        )))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Slot<'de>, E> {
        Ok(match serde_json::Number::from_f64(n) {
            Some(number) => Slot::Number(Cow::Owned(number.as_str().to_owned())),
            None => Slot::Value(Value::Null),
        })
    }

    // An object arrives as a map, read as `Value` reads one (first key,
    // then every entry; the last of a repeated key wins). A first key that
    // makes `Value` read a number or a raw value instead (serde_json's
    // private keys, which only a hostile body sends) leaves the whole body
    // to the map, so its refusal and message are the map's own.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Slot<'de>, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Slot::Value(Value::Object(Map::new())));
        };
        if VALUE_MAGIC_KEYS.contains(&first.as_str()) {
            self.left_to_the_map.set(true);
            return Err(de::Error::custom("left to the map"));
        }
        let mut object = Map::new();
        object.insert(first, map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        Ok(Slot::Value(Value::Object(object)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Slot<'de>, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Slot::Value)
    }
}

/// Parses bytes as a JSON object body.
///
/// # Errors
///
/// `VALIDATION_ERROR` `request body is not valid JSON: <detail>`.
pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, Invalid> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Invalid::not_json("the body is empty"));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Invalid::not_json("expected a JSON object")),
        Err(e) => Err(Invalid::not_json(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every known field of `f` as text.
    pub(super) fn shown(f: &dyn Fields) -> Vec<String> {
        ALL.iter()
            .map(|n| match f.field(*n) {
                None => "-".to_owned(),
                Some(Field::Str(s)) => format!("s:{s}"),
                Some(Field::Number(n)) => format!("n:{n}"),
                Some(Field::Value(v)) => format!("v:{v}"),
            })
            .collect()
    }

    /// What both readers make of `bytes`: the error message, or every
    /// known field as JSON text.
    fn both(bytes: &[u8]) -> (Result<Vec<String>, String>, Result<Vec<String>, String>) {
        let by_map = parse_object(bytes)
            .map(|m| shown(&m))
            .map_err(|e| e.to_string());
        let by_body = KnownFields::parse(bytes)
            .map(|b| shown(&b))
            .map_err(|e| e.to_string());
        (by_map, by_body)
    }

    pub(super) const ALL: [Name; Name::COUNT] = [
        Name::MerchantId,
        Name::ReferenceNo,
        Name::Description,
        Name::Amount,
        Name::CurrencyCode,
        Name::ProductCode,
        Name::Quantity,
        Name::CountryCode,
        Name::StoreId,
        Name::DeviceId,
        Name::PayerId,
        Name::ReturnUrl,
        Name::ExtraProperties,
        Name::TransactionId,
        Name::ConfirmationCode,
    ];

    #[test]
    fn names_round_trip() {
        for (i, name) in ALL.iter().enumerate() {
            assert_eq!(*name as usize, i);
            assert_eq!(Name::of(name.as_str()), Some(*name));
        }
    }

    #[test]
    fn the_same_as_the_map_on_hostile_bodies() {
        let deep = format!("{{\"x\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        let deep_known = format!("{{\"amount\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        let cases: Vec<&[u8]> = vec![
            b"",
            b"   ",
            b"\x0c{}",
            b"[1]",
            b"5",
            b"\"x\"",
            b"null",
            b"{}",
            b"{} ",
            b"{}x",
            b"{\"amount\":01}",
            b"{\"amount\":1e999999,\"quantity\":-0}",
            b"{\"referenceNo\":\"a\\u00e9\\\"b\",\"storeId\":\"\xc3\xa9\"}",
            b"{\"referenceNo\":\"\\ud800\"}",
            b"{\"other\":\"\\ud800\"}",
            b"{\"other\":\"\xff\"}",
            b"{\"referenceNo\":\"\xff\"}",
            b"{\"referenceNo\":\"a\",\"referenceNo\":7}",
            b"{\"$serde_json::private::Number\":\"12\"}",
            b"{\"$serde_json::private::Number\":\"x\"}",
            b"{\"a\":1,\"$serde_json::private::Number\":\"12\"}",
            b"{\"$serde_json::private::RawValue\":\"{}\"}",
            b"{\"amount\":{\"$serde_json::private::Number\":12}}",
            b"{\"amount\":{\"$serde_json::private::Number\":null}}",
            b"{\"amount\":{\"$serde_json::private::Number\":[\"1\"]}}",
            b"{\"amount\":{\"$serde_json::private::Number\":\"1\",\"x\":2}}",
            b"{\"referenceNo\":{\"$serde_json::private::RawValue\":true}}",
            b"{\"extraProperties\":{\"b\":1,\"a\":[true,null]},\"amount\":1.50}",
            b"{\"extraProperties\":{\"b\":1,\"b\":2,\"a\":{\"$serde_json::private::Number\":\"7\"}},\"quantity\":-3e2}",
            b"{\"extraProperties\":{\"$serde_json::private::Number\":\"7\"}}",
            b"{\"extraProperties\":{\"$serde_json::private::Number\":\"x\"}}",
            b"{\"extraProperties\":{\"$serde_json::private::RawValue\":\"[1]\"}}",
            b"{\"extraProperties\":{}}",
            b"{\"amount\":",
            b"{\"amount\" 1}",
            b"{\"amount\":1,}",
            b"{\"ref\\u0065renceNo\":\"escaped key\"}",
            b"{\"merchantId\":null,\"description\":false}",
            deep.as_bytes(),
            deep_known.as_bytes(),
        ];
        for bytes in cases {
            let (by_map, by_body) = both(bytes);
            assert_eq!(by_body, by_map, "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let bytes = br#"{"referenceNo":"ORDER-1","description":"a\"b"}"#;
        let body = KnownFields::parse(bytes).expect("an object");
        assert!(matches!(
            &body.slots[Name::ReferenceNo as usize],
            Slot::Str(Cow::Borrowed("ORDER-1"))
        ));
        assert!(matches!(
            &body.slots[Name::Description as usize],
            Slot::Str(Cow::Owned(s)) if s == "a\"b"
        ));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        #[test]
        fn the_same_as_the_map_on_any_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..96)) {
            let (by_map, by_body) = both(&bytes);
            proptest::prop_assert_eq!(by_body, by_map);
        }

        #[test]
        fn the_same_as_the_map_on_mutated_bodies(
            at in 0usize..400,
            byte in proptest::prelude::any::<u8>(),
            cut in 0usize..600,
        ) {
            let body = br#"{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"ORDER-\u00e9","amount":1050,"currencyCode":"MYR","productCode":"TOPUP","quantity":2,"storeId":"S1","description":"x\ty","extraProperties":{"k":[1,2.5,"v"]},"other":{"deep":[null,true]}}"#;
            let mut bytes = body.to_vec();
            let at = at % bytes.len();
            bytes[at] = byte;
            bytes.truncate(cut);
            let (by_map, by_body) = both(&bytes);
            proptest::prop_assert_eq!(by_body, by_map);
        }
    }
}
