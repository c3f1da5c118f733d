use serde_json::Value;

use super::*;

/// Bodies of every kind: the parse agrees with `Value`'s about what
/// each is, and each field's reading agrees with the `Value`'s.
const BODIES: &[&str] = &[
    r#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"amount":10.50,"n":-0,"e":1E2,"e2":-1.5e-3,"e3":2E+7,"s":"a\"b\\c\u00e9\n","u":"\u0041","t":true,"o":{"b":[1, 2.0],"a":"x"},"arr":[ {"k" : 1} ]}}"#,
    r#"  {"a":1,"a":"second"}  "#,
    r#"{"p\u0061yerId":"x","":0}"#,
    "5",
    "-1.5e3",
    "\"text\"",
    "[1,2]",
    "null",
    "true",
    "",
    "{",
    "{} x",
    "<html>",
    r#"{"$serde_json::private::Number":"5"}"#,
    r#"{"$serde_json::private::Number":"abc"}"#,
    r#"{"big":90071992547409.91,"huge":123456789012345678901234567890}"#,
];

#[test]
fn a_body_is_read_as_value_reads_it() {
    for body in BODIES {
        let value = serde_json::from_str::<Value>(body).ok();
        let parsed = Body::of(body);
        assert_eq!(parsed.is_json(), value.is_some(), "{body}");
        assert_eq!(
            parsed.object().is_some(),
            value.as_ref().is_some_and(Value::is_object),
            "{body}"
        );
        let (Some(object), Some(Value::Object(map))) = (parsed.object(), value) else {
            continue;
        };
        assert_eq!(
            object.keys(),
            map.keys().map(String::as_str).collect::<Vec<_>>()
        );
        for (key, expected) in &map {
            agrees(object.get(key).expect("every key"), expected);
        }
    }
}

/// `json` answers what `value` answers.
fn agrees(json: Json<'_>, value: &Value) {
    assert_eq!(json.to_string(), value.to_string(), "{json:?}");
    if let Some(number) = value.as_number() {
        assert_eq!(
            json.number_text().as_deref(),
            Some(number.as_str()),
            "{json:?}"
        );
    }
    assert_eq!(json.is_null(), value.is_null(), "{json:?}");
    assert_eq!(json.as_bool(), value.as_bool(), "{json:?}");
    assert_eq!(json.is_string(), value.is_string(), "{json:?}");
    assert_eq!(json.as_str().as_deref(), value.as_str(), "{json:?}");
    assert_eq!(json.as_u64(), value.as_u64(), "{json:?}");
    assert_eq!(json.as_i64(), value.as_i64(), "{json:?}");
    assert_eq!(json.shape() == Shape::Object, value.is_object(), "{json:?}");
    if let Some(inner) = value.as_object() {
        let object = object_of(json).expect("an object");
        for (key, expected) in inner {
            agrees(object.get(key).expect("every key"), expected);
        }
    }
}

#[test]
fn an_answer_is_read_as_its_envelope_in_one_pass_as_in_two() {
    let answers = [
        r#"{"isSuccess":true,"errorCode":null,"message":"m","data":{"a":1,"b":"x","c":2},"extra":[1]}"#,
        r#"{"data":null,"isSuccess":false,"errorCode":"X","message":null}"#,
        r#"{"data":5,"isSuccess":"yes"}"#,
        r#"{"data":[1],"x":"s"}"#,
        r#"{"data":{"x":1},"x":{"x":{"x":2}}}"#,
        r#"{"data":true,"message":1.5}"#,
        "[1]",
        "5",
        "",
        "<html>",
        r#"{"$serde_json::private::Number":"abc"}"#,
    ];
    for answer in answers {
        let body = Body::of(answer);
        let read = envelope_of(answer);
        assert_eq!(read.is_ok(), body.is_json(), "{answer}");
        let (Ok(Some(read)), Some(object)) = (read, body.object()) else {
            assert!(body.object().is_none(), "{answer}");
            continue;
        };
        for (got, name) in [
            (read.is_success, "isSuccess"),
            (read.error_code, "errorCode"),
            (read.message, "message"),
        ] {
            assert_eq!(got, object.get(name), "{answer}: {name}");
        }
        let data = object.get("data");
        assert_eq!(read.data, data.map(Json::shape), "{answer}");
        let fields = |o: Option<Object<'_>>| {
            o.map(|o| {
                o.keys()
                    .iter()
                    .map(|k| (k.to_string(), o.get(k).map(|v| v.text().to_owned())))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            fields(read.data_object),
            fields(data.and_then(object_of)),
            "{answer}"
        );
    }
}

/// A member name repeated in one object, wherever in the answer: I-JSON
/// (RFC 7493) forbids it and serde_json refuses a field given twice, so
/// the answer is no envelope (where a reader keeping the last value saw
/// the later one), and the name is told; the same name in two objects is
/// fine.
#[test]
fn an_answer_that_repeats_a_member_name_is_no_envelope() {
    for (answer, name) in [
        (
            r#"{"isSuccess":false,"errorCode":"INTERNAL_ERROR","message":"x","data":null,"isSuccess":true,"errorCode":null,"message":null,"data":{"transactionId":"t1"}}"#,
            "isSuccess",
        ),
        (
            r#"{"isSuccess":true,"errorCode":null,"message":"m","data":{"a":1,"b":"x","a":2}}"#,
            "a",
        ),
        (r#"{"data":[1],"data":"s"}"#, "data"),
        (r#"{"data":null,"data":null}"#, "data"),
        (r#"{"x":1,"isSuccess":true,"x":2}"#, "x"),
        (r#"{"data":{"extraProperties":{"k":1,"k":{}}}}"#, "k"),
        (
            r#"{"data":null,"extra":[{"k":[1]},{"n":{"k":1,"k":2}}]}"#,
            "k",
        ),
        (r#"{"message":{"m":1,"m":1}}"#, "m"),
        (r#"{"p\u0061yer":1,"payer":2}"#, "payer"),
    ] {
        assert!(Body::of(answer).is_json(), "{answer}");
        assert!(envelope_of(answer).is_err(), "{answer}");
        assert_eq!(
            json_but_repeated_name(answer).as_deref(),
            Some(name),
            "{answer}"
        );
    }
    let many: String = (0..1000).map(|n| format!(r#""k{n}":{n},"#)).collect();
    let answer = format!(r#"{{"data":{{{many}"k7":0}}}}"#);
    assert_eq!(json_but_repeated_name(&answer).as_deref(), Some("k7"));
    for answer in [
        r#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}}"#,
        r#"{"data":{"amount":1.00,"n":1e2},"x":2.50,"y":{"z":1.0}}"#,
        &format!(r#"{{"data":{{{many}"end":0}}}}"#),
    ] {
        assert!(envelope_of(answer).is_ok(), "{answer}");
        assert_eq!(json_but_repeated_name(answer), None, "{answer}");
    }
}

/// A `\u` escape of a lone surrogate is no text: `Value` refuses the
/// body (as every typed read does) wherever the string stands, and so do
/// both readers; a pair, or an escaped backslash before `u`, is text.
#[test]
fn a_lone_surrogate_escape_is_not_json_as_value_reads_it() {
    let bodies = [
        (
            r#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"referenceNo":"R\ud800"}}"#,
            false,
        ),
        (
            r#"{"isSuccess":true,"message":"\udc00","data":null}"#,
            false,
        ),
        (r#"{"data":null,"extra":[{"x":"x\uDBFF"}]}"#, false),
        (r#"{"a":"\ud800\u0041"}"#, false),
        (r#"{"a":"\ud800\ud800"}"#, false),
        (r#"{"a":"\ud800\n"}"#, false),
        (r#"{"a":"\ud800"}"#, false),
        (r#"["\ud800"]"#, false),
        (r#""\udfff""#, false),
        (r#"{"\ud800":1}"#, false),
        (r#"{"a":"\ud83d\ude00","b":"\uD83D\uDE00"}"#, true),
        (r#"{"a":"\\ud800","b":"\\\ud83d\ude00"}"#, true),
        (r#"{"a":"\u0041\"\\ud800"}"#, true),
    ];
    for (body, text) in bodies {
        let value = serde_json::from_str::<Value>(body);
        assert_eq!(value.is_ok(), text, "Value: {body}");
        assert_eq!(Body::of(body).is_json(), text, "{body}");
        assert_eq!(envelope_of(body).is_ok(), text, "{body}");
        assert_eq!(lone_surrogate(body), !text, "{body}");
    }
}

#[test]
fn numbers_are_the_same_by_value_and_everything_else_as_value_compares() {
    let same_text = |a: &str, b: &str| same(Json::new(a), Json::new(b));
    assert!(same_text("150", "150.0"));
    assert!(same_text("1.5e2", "150"));
    assert!(same_text("90071992547409.91", "90071992547409.910"));
    assert!(!same_text("10.50", "105.0"));
    assert!(!same_text("150", "\"150\""));
    assert!(same_text("\"A\"", "\"\\u0041\""));
    assert!(!same_text("\"a\"", "\"b\""));
    assert!(same_text("{\"a\":1,\"b\":2}", "{\"b\":2, \"a\":1}"));
    assert!(!same_text("[1]", "[2]"));
    assert!(same_text("null", "null"));
    assert!(!same_text("null", "false"));
    assert!(same_text("true", "true"));
}
