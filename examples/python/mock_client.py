"""Talking to payments-mock-server with nothing but Python's standard library.

This is the part of the examples a team copies into its own suite: a
sandbox per test, and the few calls a test makes in it. The tests are
test_scripted_faults.py and test_sandboxes.py; run_parallel.py runs them
all at once.

A sandbox is the mock's state for one test alone: POST /_mock/sandboxes
answers 201 with a `baseUrl` (the mock's base URL, then /sandboxes/{id}),
and every route works under it unchanged: /api/payments/initiate,
/api/payments/confirm, the status reads, /_mock/clock, /_mock/reset,
/_mock/transactions, /_mock/requests (the journal), /_mock/faults (the
scripted fault rules), /_mock/coverage. Each acts on that sandbox only:
its own transactions (so its own referenceNo space), clock, journal,
rules and coverage. DELETE /_mock/sandboxes/{id} removes it; from then on
every route under it is 404 SANDBOX_NOT_FOUND. A sandbox nobody uses
expires by itself (ttlSeconds, default the mock's --sandbox-ttl; each
request renews it), and at most --max-sandboxes live at once (one more is
429 TOO_MANY_SANDBOXES).

Give your application the sandbox's baseUrl where it would take the
payment service's base URL, and tests no longer need to run one after
another or reset the mock: SandboxTestCase below does that for each test.
"""

import json
import os
import threading
import unittest
import urllib.error
import urllib.parse
import urllib.request

MOCK_BASE_URL = os.environ.get("MOCK_BASE_URL", "http://127.0.0.1:8080").rstrip("/")
MERCHANT = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60"

# No proxy, whatever http_proxy says: the mock is on this machine.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# (mock base URL, sandbox id) of every sandbox this process made, so that a
# runner can tell its own leftovers from another suite's on a shared mock.
_MADE = set()
_MADE_LOCK = threading.Lock()


def sandboxes_made(base_url=MOCK_BASE_URL):
    with _MADE_LOCK:
        return {sandbox_id for base, sandbox_id in _MADE if base == base_url}


def call(method, url, body=None, timeout=10):
    """(status, content type, parsed JSON or text) of one request.

    An HTTP error status is an answer like any other here, not an
    exception; a timeout or a broken connection is an exception.
    """
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with _OPENER.open(request, timeout=timeout) as answer:
            status, kind, raw = answer.status, answer.headers.get("Content-Type", ""), answer.read()
    except urllib.error.HTTPError as error:
        with error:
            status, kind, raw = error.code, error.headers.get("Content-Type", ""), error.read()
    text = raw.decode("utf-8")
    return status, kind, json.loads(text) if kind.startswith("application/json") else text


class Mock:
    """The mock as a whole: where sandboxes are made, listed and removed."""

    def __init__(self, base_url=MOCK_BASE_URL):
        self.base_url = base_url

    def create_sandbox(self, label=None, ttl_seconds=None):
        body = {}
        if label is not None:
            body["label"] = label
        if ttl_seconds is not None:
            body["ttlSeconds"] = ttl_seconds
        answer = call("POST", self.base_url + "/_mock/sandboxes", body)
        if answer[0] == 201:
            with _MADE_LOCK:
                _MADE.add((self.base_url, answer[2]["data"]["id"]))
        return answer

    def sandboxes(self):
        status, _, answer = call("GET", self.base_url + "/_mock/sandboxes")
        if status != 200:
            raise AssertionError("GET /_mock/sandboxes: %s %s" % (status, answer))
        return answer["data"]["items"]

    def remove_sandbox(self, sandbox_id):
        return call("DELETE", self.base_url + "/_mock/sandboxes/" + urllib.parse.quote(sandbox_id, safe=""))


class Sandbox:
    """One sandbox: every call goes to its baseUrl, never to the mock's root."""

    def __init__(self, data):
        self.id = data["id"]
        self.label = data["label"]
        self.base_url = data["baseUrl"]
        self.removed = False

    def call(self, method, path, body=None, timeout=10):
        return call(method, self.base_url + path, body, timeout=timeout)

    def data(self, method, path, body=None):
        """The `data` of a call that must succeed."""
        status, _, answer = self.call(method, path, body)
        if not 200 <= status < 300:
            raise AssertionError("%s %s in sandbox %s: %s %s" % (method, path, self.id, status, answer))
        return answer["data"]

    def add_rule(self, rule):
        return self.data("POST", "/_mock/faults", rule)

    def rules(self):
        return self.data("GET", "/_mock/faults")["items"]

    def journal(self, path=None):
        """What this sandbox was sent (and answered), oldest first; paths
        are as the application wrote them, without /sandboxes/{id}."""
        items = self.data("GET", "/_mock/requests")["items"]
        return [e for e in items if path is None or e["path"] == path]

    def transactions(self):
        return self.data("GET", "/_mock/transactions")["items"]

    def clock(self):
        return self.data("GET", "/_mock/clock")

    def advance_clock(self, seconds):
        return self.data("POST", "/_mock/clock/advance", {"seconds": seconds})

    def coverage(self):
        return self.data("GET", "/_mock/coverage")


class Shop:
    """What an application does: initiate a payment for an order, confirm
    it, read its status. It knows only a base URL: a sandbox's, in tests."""

    def __init__(self, base_url):
        self.base_url = base_url

    def initiate(self, reference, amount=1050):
        return call("POST", self.base_url + "/api/payments/initiate", {
            "merchantId": MERCHANT, "referenceNo": reference, "amount": amount,
            "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        })

    def confirm(self, transaction_id, reference, timeout=10):
        return call("POST", self.base_url + "/api/payments/confirm",
                    {"transactionId": transaction_id, "referenceNo": reference}, timeout=timeout)

    def status(self, reference):
        return call("GET", "%s/api/payments/reference/%s/status?merchantId=%s" % (
            self.base_url, urllib.parse.quote(reference, safe=""), MERCHANT))

    def status_by_id(self, transaction_id):
        return call("GET", "%s/api/payments/%s/status" % (self.base_url, urllib.parse.quote(transaction_id, safe="")))


class SandboxTestCase(unittest.TestCase):
    """Each test gets its own sandbox, labelled with the test's id, and its
    shop talks to that sandbox alone; the sandbox is removed afterwards,
    pass or fail. No test touches the mock's root, so tests may run at
    once (run_parallel.py). Keep per-test fixtures in setUp: the parallel
    runner runs test methods one by one, without setUpClass."""

    mock = Mock()

    def setUp(self):
        self.sandbox = self.new_sandbox(self.id())
        self.shop = Shop(self.sandbox.base_url)

    def new_sandbox(self, label, ttl_seconds=None):
        """One more sandbox for this test, removed when the test ends."""
        status, _, answer = self.mock.create_sandbox(label=label, ttl_seconds=ttl_seconds)
        self.assertEqual(status, 201, answer)
        sandbox = Sandbox(answer["data"])
        self.addCleanup(self._remove_at_the_end, sandbox)
        return sandbox

    def remove_sandbox(self, sandbox):
        status, _, answer = self.mock.remove_sandbox(sandbox.id)
        self.assertEqual(status, 200, answer)
        sandbox.removed = True

    def _remove_at_the_end(self, sandbox):
        if not sandbox.removed:
            self.remove_sandbox(sandbox)

    def assertError(self, answer, status, code):
        """`answer` is the (status, content type, body) of an error envelope
        with this status and errorCode."""
        got_status, kind, body = answer
        self.assertTrue(kind.startswith("application/json"), answer)
        self.assertEqual((got_status, body["isSuccess"], body["errorCode"]), (status, False, code), body)
