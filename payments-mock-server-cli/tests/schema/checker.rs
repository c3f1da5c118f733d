//! OpenAPI 3.0 response schemas checked as JSON Schema 2020-12: the
//! conversion, path matching, and the record of what was driven.

use std::collections::BTreeSet;

use axum::http::Method;
use serde_json::{Map, Value, json};

use crate::common::Reply;

/// OpenAPI 3.0 `nullable: true` as JSON Schema: `null` joins the `type`
/// and any `enum`; a schema without `type` (a `$ref`, an `allOf`) becomes
/// "null, or the schema". Everything else carries over unchanged.
pub fn to_json_schema(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(to_json_schema).collect()),
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| k.as_str() != "nullable" && k.as_str() != "example")
                .map(|(k, v)| (k.clone(), to_json_schema(v)))
                .collect();
            if map.get("nullable") != Some(&Value::Bool(true)) {
                return Value::Object(out);
            }
            if let Some(Value::Array(values)) = out.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
            match out.remove("type") {
                Some(Value::String(t)) => {
                    out.insert("type".to_owned(), json!([t, "null"]));
                    Value::Object(out)
                }
                Some(other) => {
                    out.insert("type".to_owned(), other);
                    Value::Object(out)
                }
                None if out.keys().any(|k| k == "$ref" || k.ends_with("Of")) => {
                    json!({ "anyOf": [{ "type": "null" }, Value::Object(out)] })
                }
                None => Value::Object(out),
            }
        }
        other => other.clone(),
    }
}

/// The documented paths as (template, segments) for matching.
fn template_for(doc: &Value, path: &str) -> Option<String> {
    let path = path.split('?').next().unwrap_or_default();
    let actual: Vec<&str> = path.split('/').collect();
    doc["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == actual.len()
                && parts.iter().zip(&actual).all(|(t, a)| {
                    t == a || (t.starts_with('{') && t.ends_with('}') && !a.is_empty())
                        // An empty segment is still that route (CONTRACT section 3).
                        || (t.starts_with('{') && a.is_empty())
                })
        })
        .cloned()
}

pub struct Checker {
    doc: Value,
    components: Value,
    /// (template, method, status) seen.
    seen: BTreeSet<(String, String, u16)>,
    pub checked: usize,
}

impl Checker {
    pub fn new(doc: Value) -> Self {
        let components = to_json_schema(&doc["components"]);
        Self {
            doc,
            components,
            seen: BTreeSet::new(),
            checked: 0,
        }
    }

    fn validate(&self, schema: &Value, body: &Value, what: &str) {
        let root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "components": self.components,
            "allOf": [to_json_schema(schema)],
        });
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("{what}: the schema does not compile: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(body)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{what}: the body does not match the documented schema:\n{}\nbody: {body}",
            errors.join("\n")
        );
    }

    /// Checks one exchange against the document.
    pub fn check(&mut self, method: &Method, path: &str, reply: &Reply) {
        let what = format!("{method} {path} -> {}", reply.status);
        assert!(reply.headers.contains_key("x-request-id"), "{what}");
        let status = reply.status.as_u16();
        let content_type = reply
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let template = template_for(&self.doc, path);
        // A redirect without a body (the console's /_mock/ui): documented
        // with its Location.
        if content_type.is_empty() && (300..400).contains(&status) {
            let template = template.unwrap_or_else(|| panic!("{what}: an undocumented redirect"));
            let method_key = method.as_str().to_ascii_lowercase();
            let documented =
                &self.doc["paths"][&template][&method_key]["responses"][status.to_string()];
            assert!(
                documented["headers"]["Location"].is_object(),
                "{what}: undocumented"
            );
            assert!(
                reply.headers.contains_key("location"),
                "{what}: no Location"
            );
            self.seen.insert((template, method_key, status));
            self.checked += 1;
            return;
        }
        // Pages (the payment page, the console) and their files: documented
        // with their media type.
        let media_type = content_type.split(';').next().unwrap_or_default();
        if matches!(
            media_type,
            "text/html"
                | "text/css"
                | "text/javascript"
                | "text/plain"
                | "application/openmetrics-text"
        ) {
            let media = content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .to_owned();
            let template = template.unwrap_or_else(|| panic!("{what}: an undocumented page"));
            let mut method_key = method.as_str().to_ascii_lowercase();
            if !self.doc["paths"][&template][&method_key].is_object() {
                // A wrong method on a page route: documented on its GET
                // (or, on a route that only posts, its POST).
                method_key = if self.doc["paths"][&template]["get"].is_object() {
                    "get".to_owned()
                } else {
                    "post".to_owned()
                };
            }
            let operation = &self.doc["paths"][&template][&method_key];
            let documented = &operation["responses"][status.to_string()]["content"][&media];
            assert!(
                documented.is_object(),
                "{what}: {media} {status} is not documented for {method_key} {template}"
            );
            self.seen.insert((template, method_key, status));
            self.checked += 1;
            return;
        }
        assert_eq!(content_type, "application/json", "{what}");
        assert!(!reply.body.is_null(), "{what}: not JSON");
        let Some(template) = template else {
            assert_eq!(status, 404, "{what}: undocumented path");
            let schema = json!({ "$ref": "#/components/schemas/ErrorEnvelope" });
            self.validate(&schema, &reply.body, &what);
            assert_eq!(reply.code(), "NOT_FOUND", "{what}");
            self.checked += 1;
            return;
        };
        let operations = &self.doc["paths"][&template];
        let method_key = method.as_str().to_ascii_lowercase();
        // A method the path lacks (405) is documented on its operations.
        let (op_method, operation) = operations
            .as_object()
            .and_then(|ops| {
                ops.get_key_value(&method_key)
                    .or_else(|| ops.iter().find(|(_, op)| op.get("responses").is_some()))
            })
            .unwrap_or_else(|| panic!("{what}: no operation"));
        let op_method = op_method.clone();
        let response = &operation["responses"][status.to_string()];
        assert!(
            response.is_object(),
            "{what}: status {status} is not documented for {method_key} {template}"
        );
        let media = &response["content"]["application/json"];
        self.validate(&media["schema"], &reply.body, &what);
        if let Some(examples) = media["examples"].as_object()
            && reply.body["isSuccess"] == false
        {
            assert!(
                examples.contains_key(reply.code()),
                "{what}: errorCode {} is not among the documented ones {:?}",
                reply.code(),
                examples.keys().collect::<Vec<_>>()
            );
        }
        self.seen.insert((template, op_method, status));
        self.checked += 1;
    }

    /// Counts what `other` (a checker of another server) drove as driven here.
    pub fn absorb(&mut self, other: Checker) {
        self.seen.extend(other.seen);
        self.checked += other.checked;
    }

    /// Every documented (path, method, status) that was not driven.
    pub fn missing(&self, unreachable: &[(&str, &str, u16)]) -> Vec<String> {
        let mut missing = Vec::new();
        for (template, ops) in self.doc["paths"].as_object().expect("paths") {
            for (method, op) in ops.as_object().expect("operations") {
                let Some(responses) = op["responses"].as_object() else {
                    continue;
                };
                for status in responses.keys() {
                    let status: u16 = status.parse().expect("numeric status");
                    let key = (template.clone(), method.clone(), status);
                    // "No such route" is documented on every operation, but a
                    // path without parameters always is a route.
                    let generic_404 = status == 404 && !template.contains('{');
                    // 405 belongs to the path: a wrong method is one request,
                    // recorded on one of the path's operations.
                    let path_405 = status == 405
                        && self.seen.iter().any(|(t, _, s)| t == template && *s == 405);
                    let excused = generic_404
                        || path_405
                        || unreachable
                            .iter()
                            .any(|(t, m, s)| t == template && m == method && *s == status);
                    if !self.seen.contains(&key) && !excused {
                        missing.push(format!("{method} {template} {status}"));
                    }
                }
            }
        }
        missing
    }
}

#[test]
fn the_nullable_conversion_admits_null_only_where_the_document_says() {
    let schema = to_json_schema(&json!({
        "type": "object",
        "properties": {
            "a": { "type": "string", "nullable": true },
            "b": { "type": "string" },
            "c": { "$ref": "#/x", "nullable": true },
        }
    }));
    assert_eq!(schema["properties"]["a"]["type"], json!(["string", "null"]));
    assert_eq!(schema["properties"]["b"]["type"], json!("string"));
    assert_eq!(schema["properties"]["c"]["anyOf"][0]["type"], "null");
}
