"""A black-box test suite in Python, using nothing but the standard library
(urllib, http.client, unittest), against a running payments-mock-server.

It is how a team whose tests are not written in Rust scripts the mock's
faults (POST /_mock/faults) and checks what its application sent (the
journal, GET /_mock/requests). Here the "application" is the few lines of
`Shop` below; in your suite it is your own service, pointed at the mock.

    payments-mock-server --port 8080 &
    MOCK_BASE_URL=http://127.0.0.1:8080 python3 -m unittest discover -s examples/python -v

Each test resets the mock first, so the tests run one after another (the
mock's sandboxes, which will give each test its own, are not built yet).
"""

import http.client
import json
import os
import socket
import unittest
import urllib.error
import urllib.parse
import urllib.request

MOCK = os.environ.get("MOCK_BASE_URL", "http://127.0.0.1:8080").rstrip("/")
MERCHANT = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60"


def call(method, path, body=None, timeout=10):
    """(status, content type, parsed JSON or text) of one request."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(MOCK + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            status, kind, raw = answer.status, answer.headers.get("Content-Type", ""), answer.read()
    except urllib.error.HTTPError as error:
        status, kind, raw = error.code, error.headers.get("Content-Type", ""), error.read()
    text = raw.decode("utf-8")
    return status, kind, json.loads(text) if kind.startswith("application/json") else text


def add_rule(test, rule):
    status, _, answer = call("POST", "/_mock/faults", rule)
    test.assertEqual(status, 201, answer)
    return answer["data"]


class Shop:
    """What an application does: initiate a payment for an order, confirm it."""

    def initiate(self, reference, amount=1050):
        return call("POST", "/api/payments/initiate", {
            "merchantId": MERCHANT, "referenceNo": reference, "amount": amount,
            "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        })

    def confirm(self, transaction_id, reference, timeout=10):
        return call("POST", "/api/payments/confirm",
                    {"transactionId": transaction_id, "referenceNo": reference}, timeout=timeout)

    def status(self, reference):
        path = "/api/payments/reference/%s/status?merchantId=%s" % (urllib.parse.quote(reference, safe=""), MERCHANT)
        return call("GET", path)


class ScriptedFaults(unittest.TestCase):
    def setUp(self):
        status, _, _ = call("POST", "/_mock/reset")
        self.assertEqual(status, 200)
        self.shop = Shop()

    def journal(self):
        return call("GET", "/_mock/requests")[2]["data"]["items"]

    def test_a_confirm_that_commits_then_hangs_is_found_by_its_reference(self):
        _, _, initiated = self.shop.initiate("PY-CTH-1")
        transaction = initiated["data"]["transactionId"]
        rule = add_rule(self, {"match": {"endpoint": "confirm", "referenceNo": "PY-CTH-1"},
                               "fault": "commit-then-hang"})
        # The shop's client gives up: it does not know whether the payment was made.
        with self.assertRaises((socket.timeout, TimeoutError, urllib.error.URLError)):
            self.shop.confirm(transaction, "PY-CTH-1", timeout=1)
        # The mock made the change before it went silent: a look-up by reference finds it.
        status, _, found = self.shop.status("PY-CTH-1")
        self.assertEqual((status, found["data"]["status"]), (200, "SUCCESSFUL"))
        # The journal names the fault and the rule, and what the shop sent.
        confirm = [e for e in self.journal() if e["path"] == "/api/payments/confirm"][0]
        self.assertEqual((confirm["fault"], confirm["faultRule"]), ("commit-then-hang", rule["id"]))
        self.assertIsNone(confirm["status"])
        self.assertEqual(json.loads(confirm["body"])["transactionId"], transaction)

    def test_an_answer_about_another_order_is_noticed(self):
        self.shop.initiate("PY-OTHER-A", amount=15000)
        add_rule(self, {"match": {"endpoint": "initiate"}, "fault": "answer-other"})
        status, _, answer = self.shop.initiate("PY-OTHER-B")
        # A 200 about order A: an application must check the answer against its question.
        self.assertEqual((status, answer["data"]["referenceNo"]), (200, "PY-OTHER-A"))
        sent = [json.loads(e["body"])["referenceNo"] for e in self.journal()
                if e["path"] == "/api/payments/initiate"]
        self.assertEqual(sent, ["PY-OTHER-A", "PY-OTHER-B"])
        # B was made all the same: the answer was lost, not the payment.
        self.assertEqual(self.shop.status("PY-OTHER-B")[0], 200)

    def test_a_gateway_page_changes_nothing(self):
        add_rule(self, {"match": {"endpoint": "any"}, "fault": "gateway=502", "times": 2})
        status, kind, page = self.shop.initiate("PY-GW-1")
        self.assertEqual((status, kind), (502, "text/html"))
        self.assertIn("502 Bad Gateway", page)
        self.assertEqual(self.shop.status("PY-GW-1")[0], 502)  # the second of two
        self.assertEqual(self.shop.status("PY-GW-1")[0], 404)  # nothing was made

    def test_a_truncated_answer_is_an_incomplete_read(self):
        add_rule(self, {"match": {"endpoint": "initiate"}, "fault": "truncate"})
        with self.assertRaises(http.client.IncompleteRead):
            self.shop.initiate("PY-TR-1")
        self.assertEqual(self.shop.status("PY-TR-1")[0], 200)

    def test_after_and_times_and_the_counts(self):
        rule = add_rule(self, {"match": {"referenceNo": "PY-COUNT"}, "fault": "internal-error",
                               "after": 1, "times": 2})
        statuses = [self.shop.status("PY-COUNT")[0] for _ in range(4)]
        self.assertEqual(statuses, [404, 500, 500, 404])
        listed = call("GET", "/_mock/faults")[2]["data"]["items"]
        self.assertEqual([(r["id"], r["met"], r["fired"], r["remaining"]) for r in listed],
                         [(rule["id"], 3, 2, 0)])

    def test_a_bad_rule_is_refused_naming_its_field(self):
        for rule, field in [({"fault": "explode"}, "fault"),
                            ({"fault": "hang", "probability": 2}, "probability"),
                            ({"fault": "hang", "match": {"endpoint": "refund"}}, "match.endpoint")]:
            status, _, answer = call("POST", "/_mock/faults", rule)
            self.assertEqual((status, answer["errorCode"]), (400, "VALIDATION_ERROR"))
            self.assertTrue(answer["message"].startswith(field + ": "), answer["message"])


if __name__ == "__main__":
    unittest.main()
