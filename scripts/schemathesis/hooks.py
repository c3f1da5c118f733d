"""Schemathesis hooks for the mock's document (scripts/schemathesis.sh).

- The format `json-object` (extraProperties' string form: a string holding
  a JSON object) gets a strategy: JSON Schema has no keyword for it.
- An integral float (`100.0`) at `amount` or `quantity` is written back as
  the integer it is. JSON Schema 2020-12 counts `100.0` as an integer;
  the mock follows the service's contract, where only an integer literal
  is one (`1.0` and `1e2` are type errors). The document says so in those
  fields' descriptions, and tests/doc_rules.rs pins this one difference;
  the run would otherwise report it on every seed.
- Every generated initiate starts from an empty store. referenceNo is unique
  per merchant (CONTRACT section 4), so the second initiate of a generated
  reference ("0", say) is refused, 400 DUPLICATE_REFERENCE_NO, by design;
  the schema cannot say "not used before", so the run makes it true.
"""

import json
import os
import urllib.request

import schemathesis
from hypothesis import strategies as st

MOCK = os.environ["MOCK_BASE_URL"]

_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12))
schemathesis.openapi.format(
    "json-object",
    st.dictionaries(st.text(max_size=12), _leaf, max_size=4).map(json.dumps),
)


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if case.operation.method.upper() == "POST" and case.operation.path == "/api/payments/initiate":
        request = urllib.request.Request(f"{MOCK}/_mock/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()


_INTEGER_LITERALS = ("amount", "quantity")


@schemathesis.hook
def map_body(ctx, body):
    operation = ctx.operation
    if operation is None or operation.path != "/api/payments/initiate" or not isinstance(body, dict):
        return body
    for name in _INTEGER_LITERALS:
        value = body.get(name)
        if isinstance(value, float) and value.is_integer():
            body[name] = int(value)
    return body
