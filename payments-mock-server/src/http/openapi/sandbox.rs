//! A sandbox's document: the root's, less what a sandbox does not serve.
//!
//! Sandboxes do not nest: under `/sandboxes/{id}` the routes of
//! `/_mock/sandboxes` answer 404 `NOT_FOUND` ("no such route"), which no
//! operation of theirs documents, so a strict generated client pointed at
//! the sandbox's base URL would raise on them. Everything else the root
//! serves a sandbox serves too (the test below asks each operation).

use std::collections::BTreeSet;

use serde_json::Value;

/// The paths the root serves and a sandbox does not.
const ROOT_ONLY: [&str; 2] = ["/_mock/sandboxes", "/_mock/sandboxes/{sandboxId}"];

/// Makes `doc`, the root's document, a sandbox's: the root's own paths
/// left out, with the links that led to their operations and the schemas
/// only they named. (`servers` is the caller's: the sandbox's base URL.)
pub(crate) fn for_sandbox(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    let mut gone_operations = BTreeSet::new();
    let mut named = BTreeSet::new();
    for path in ROOT_ONLY {
        let Some(item) = paths.remove(path) else {
            continue;
        };
        refs(&item, &mut named);
        for operation in item.as_object().into_iter().flat_map(|ops| ops.values()) {
            if let Some(id) = operation["operationId"].as_str() {
                gone_operations.insert(id.to_owned());
            }
        }
    }
    // Links from the operations left to those gone.
    for operation in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|ops| ops.values_mut())
    {
        for answer in operation
            .get_mut("responses")
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(|answers| answers.values_mut())
        {
            let Some(links) = answer.get_mut("links").and_then(Value::as_object_mut) else {
                continue;
            };
            links.retain(|_, link| {
                link["operationId"]
                    .as_str()
                    .is_none_or(|id| !gone_operations.contains(id))
            });
            if links.is_empty()
                && let Some(answer) = answer.as_object_mut()
            {
                answer.remove("links");
            }
        }
    }
    // The schemas only the gone operations named (and those only such a
    // schema names), until none is left unnamed.
    loop {
        let mut still = BTreeSet::new();
        refs(doc, &mut still);
        let Some(schemas) = doc
            .pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut)
        else {
            return;
        };
        let unnamed: Vec<String> = named
            .iter()
            .filter(|name| !still.contains(*name) && schemas.contains_key(*name))
            .cloned()
            .collect();
        if unnamed.is_empty() {
            return;
        }
        for name in unnamed {
            if let Some(schema) = schemas.remove(&name) {
                refs(&schema, &mut named);
            }
        }
    }
}

/// Adds the names of the component schemas `value` refers to to `names`.
fn refs(value: &Value, names: &mut BTreeSet<String>) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object {
                if key == "$ref"
                    && let Some(name) = inner
                        .as_str()
                        .and_then(|r| r.strip_prefix("#/components/schemas/"))
                {
                    names.insert(name.to_owned());
                } else {
                    refs(inner, names);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|inner| refs(inner, names)),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
