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
  the schema cannot say "not used before", so the run makes it true. In
  the stateful phase the reference is made new instead: a reset there
  would also remove the fault rules a scenario installed (CONTRACT section
  19), unseen by schemathesis, which would then find a rule it made gone
  (ST302 on DELETE /_mock/faults/{ruleId}).
- No link reaches the core logic of some operations with generated
  values: a generated transactionId names no transaction, and the page
  token sits inside confirm's extraProperties string. So every other case
  of these gets real values: confirm (the transactionId and referenceNo of
  a new transaction of each product in turn; the rest of the body stays
  generated), the payment page and the admin payer control (a payment
  waiting for its payer), a transaction's console page (a stored id) and a
  journal entry's page (the newest seq). The stateful phase is left alone:
  its links carry real values from one call to the next.
"""

import json
import os
import urllib.request

import schemathesis
from hypothesis import strategies as st

MOCK = os.environ["MOCK_BASE_URL"]
KEY = os.environ["MOCK_API_KEY"]

_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12))
schemathesis.openapi.format(
    "json-object",
    st.dictionaries(st.text(max_size=12), _leaf, max_size=4).map(json.dumps),
)


def _call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{MOCK}{path}", data=data, method=method)
    request.add_header("Authorization", f"Bearer {KEY}")
    # As every generated request: a header fault wins over the fault rules
    # the run installs (POST /_mock/faults), so none of them hangs a hook.
    request.add_header("X-Mock-Fault", "delay=0")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.read(), answer.headers


_made = {"n": 0}


def _initiated(product, fields):
    """A new transaction of `product`: (transactionId, referenceNo)."""
    _made["n"] += 1
    reference = f"schemathesis-hook-{_made['n']}"
    initiated, _ = _call("POST", "/api/payments/initiate", {
        "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
        "referenceNo": reference,
        "amount": 15000,
        "productCode": product,
        "storeId": "S1",
        **fields,
    })
    return json.loads(initiated)["data"]["transactionId"], reference


def _payment_waiting_for_payer():
    """A confirmed ONLINEBANKING payment nobody has decided: (transactionId, token)."""
    transaction, reference = _initiated("ONLINEBANKING", {"returnUrl": "https://shop.example/back"})
    confirmed, _ = _call("POST", "/api/payments/confirm", {
        "transactionId": transaction,
        "referenceNo": reference,
    })
    extra = json.loads(json.loads(confirmed)["data"]["extraProperties"])
    return transaction, extra["paymentUrl"].rsplit("/", 1)[1]


_turn = {}

_PAYER = {"payerId": "60123456789"}
_CONFIRMABLE = [
    ("TOPUP", _PAYER),
    ("BILLPAY", _PAYER),
    ("GIFTCARD", {}),
    ("EWALLET", {}),
    ("DECLINED", {}),
    ("ONLINEBANKING", {"returnUrl": "https://shop.example/back"}),
]


def _every_other(case, operation):
    """True for every other case of `operation` outside the stateful phase
    (whose links already carry real values from one call to the next)."""
    phase = getattr(getattr(case, "meta", None), "phase", None)
    if phase is not None and phase.name.value == "stateful":
        return False
    _turn[operation] = _turn.get(operation, 0) + 1
    return _turn[operation] % 2 == 0


def _stateful(case):
    phase = getattr(getattr(case, "meta", None), "phase", None)
    return phase is not None and phase.name.value == "stateful"


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    method, path = case.operation.method.upper(), case.operation.path
    if method == "POST" and path == "/api/payments/initiate":
        if not _stateful(case):
            _call("POST", "/_mock/reset")
        elif isinstance(case.body, dict) and isinstance(case.body.get("referenceNo"), str):
            _made["n"] += 1
            case.body = {**case.body, "referenceNo": f"st-{_made['n']}"}
    elif method == "POST" and path == "/api/payments/confirm" and _every_other(case, path):
        if isinstance(case.body, dict):
            product = _CONFIRMABLE[_turn[path] // 2 % len(_CONFIRMABLE)]
            transaction, reference = _initiated(*product)
            case.body = {**case.body, "transactionId": transaction, "referenceNo": reference}
    elif path == "/pay/{token}" and _every_other(case, method + path):
        case.path_parameters = {**(case.path_parameters or {}), "token": _payment_waiting_for_payer()[1]}
    elif path == "/_mock/transactions/{transactionId}/payer" and _every_other(case, path):
        transaction = _payment_waiting_for_payer()[0]
        case.path_parameters = {**(case.path_parameters or {}), "transactionId": transaction}
    elif path == "/_mock/ui/requests/{seq}" and _every_other(case, path):
        _, headers = _call("GET", "/_mock/ui/requests/feed")
        seq = headers.get("X-Journal-Seq", "0")
        if seq != "0":
            case.path_parameters = {**(case.path_parameters or {}), "seq": seq}
    elif path == "/_mock/ui/transactions/{transactionId}" and _every_other(case, path):
        transaction, _ = _initiated("TOPUP", _PAYER)
        case.path_parameters = {**(case.path_parameters or {}), "transactionId": transaction}


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
