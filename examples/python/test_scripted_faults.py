"""A black-box test suite in Python, using nothing but the standard library
(urllib, http.client, unittest, concurrent.futures), against a running
payments-mock-server.

It is how a team whose tests are not written in Rust scripts the mock's
faults (POST /_mock/faults) and checks what its application sent (the
journal, GET /_mock/requests). Here the "application" is the few lines of
`Shop` in mock_client.py; in your suite it is your own service, pointed at
the mock.

Each test makes its own sandbox (POST /_mock/sandboxes; see
mock_client.SandboxTestCase) and talks to its baseUrl alone: the rules it
adds, the transactions it makes and the journal it reads are its own, so
no test resets the mock and the tests may run at once. test_sandboxes.py
shows that isolation itself.

    payments-mock-server --port 8080 &
    curl -sf --retry 30 --retry-connrefused --retry-delay 1 -o /dev/null \
        http://127.0.0.1:8080/_mock/health                       # ready
    export MOCK_BASE_URL=http://127.0.0.1:8080
    python3 examples/python/run_parallel.py                      # all at once
    python3 -m unittest discover -s examples/python -v           # one after another

scripts/python-examples.sh does the same against a mock it starts.
"""

import http.client
import json
import socket
import unittest
import urllib.error

from mock_client import SandboxTestCase


class ScriptedFaults(SandboxTestCase):
    def test_a_confirm_that_commits_then_hangs_is_found_by_its_reference(self):
        _, _, initiated = self.shop.initiate("PY-CTH-1")
        transaction = initiated["data"]["transactionId"]
        rule = self.sandbox.add_rule({"match": {"endpoint": "confirm", "referenceNo": "PY-CTH-1"},
                                      "fault": "commit-then-hang"})
        # The shop's client gives up: it does not know whether the payment was made.
        with self.assertRaises((socket.timeout, TimeoutError, urllib.error.URLError)):
            self.shop.confirm(transaction, "PY-CTH-1", timeout=1)
        # The mock made the change before it went silent: a look-up by reference finds it.
        status, _, found = self.shop.status("PY-CTH-1")
        self.assertEqual((status, found["data"]["transactionId"], found["data"]["status"]),
                         (200, transaction, "SUCCESSFUL"))
        # Confirming again is not how to find out: the payment is made once, and
        # the second confirm is refused rather than paid twice.
        self.assertError(self.shop.confirm(transaction, "PY-CTH-1"), 400, "TRANSACTION_ALREADY_CONFIRMED")
        self.assertEqual([(t["referenceNo"], t["status"]) for t in self.sandbox.transactions()],
                         [("PY-CTH-1", "SUCCESSFUL")])
        # The journal names the fault and the rule, and what the shop sent.
        first, second = self.sandbox.journal("/api/payments/confirm")
        self.assertEqual((first["fault"], first["faultRule"]), ("commit-then-hang", rule["id"]))
        self.assertIsNone(first["status"])  # never answered
        self.assertEqual(json.loads(first["body"])["transactionId"], transaction)
        self.assertEqual((second["fault"], second["status"], second["errorCode"]),
                         (None, 400, "TRANSACTION_ALREADY_CONFIRMED"))

    def test_an_answer_about_another_order_is_noticed(self):
        self.shop.initiate("PY-OTHER-A", amount=15000)
        self.sandbox.add_rule({"match": {"endpoint": "initiate"}, "fault": "answer-other"})
        status, _, answer = self.shop.initiate("PY-OTHER-B")
        # A 200 about order A: an application must check the answer against its question.
        # (A is the only other transaction this sandbox has, whatever other tests do at once.)
        self.assertEqual((status, answer["data"]["referenceNo"]), (200, "PY-OTHER-A"))
        self.assertNotEqual(answer["data"]["referenceNo"], "PY-OTHER-B")
        sent = [json.loads(e["body"])["referenceNo"] for e in self.sandbox.journal("/api/payments/initiate")]
        self.assertEqual(sent, ["PY-OTHER-A", "PY-OTHER-B"])
        # B was made all the same: the answer was lost, not the payment.
        status, _, found = self.shop.status("PY-OTHER-B")
        self.assertEqual((status, found["data"]["referenceNo"]), (200, "PY-OTHER-B"))
        self.assertEqual(sorted(t["referenceNo"] for t in self.sandbox.transactions()),
                         ["PY-OTHER-A", "PY-OTHER-B"])

    def test_a_gateway_page_changes_nothing(self):
        self.sandbox.add_rule({"match": {"endpoint": "any"}, "fault": "gateway=502", "times": 2})
        status, kind, page = self.shop.initiate("PY-GW-1")
        self.assertEqual((status, kind), (502, "text/html"))
        self.assertIn("502 Bad Gateway", page)
        self.assertEqual(self.shop.status("PY-GW-1")[0], 502)  # the second of two
        self.assertError(self.shop.status("PY-GW-1"), 404, "TRANSACTION_NOT_FOUND")  # nothing was made
        self.assertEqual(self.sandbox.transactions(), [])

    def test_a_truncated_answer_is_an_incomplete_read(self):
        self.sandbox.add_rule({"match": {"endpoint": "initiate"}, "fault": "truncate"})
        with self.assertRaises(http.client.IncompleteRead):
            self.shop.initiate("PY-TR-1")
        self.assertEqual(self.shop.status("PY-TR-1")[0], 200)

    def test_after_and_times_and_the_counts(self):
        rule = self.sandbox.add_rule({"match": {"referenceNo": "PY-COUNT"}, "fault": "internal-error",
                                      "after": 1, "times": 2})
        statuses = [self.shop.status("PY-COUNT")[0] for _ in range(4)]
        self.assertEqual(statuses, [404, 500, 500, 404])
        self.assertEqual([(r["id"], r["met"], r["fired"], r["remaining"]) for r in self.sandbox.rules()],
                         [(rule["id"], 3, 2, 0)])

    def test_a_bad_rule_is_refused_naming_its_field(self):
        for rule, field in [({"fault": "explode"}, "fault"),
                            ({"fault": "hang", "probability": 2}, "probability"),
                            ({"fault": "hang", "match": {"endpoint": "refund"}}, "match.endpoint")]:
            with self.subTest(field=field):
                answer = self.sandbox.call("POST", "/_mock/faults", rule)
                self.assertError(answer, 400, "VALIDATION_ERROR")
                self.assertTrue(answer[2]["message"].startswith(field + ": "), answer[2]["message"])
        self.assertEqual(self.sandbox.rules(), [])

    def test_removing_the_rules_and_a_reset_in_a_sandbox(self):
        self.sandbox.add_rule({"match": {"endpoint": "any"}, "fault": "internal-error", "times": 5})
        self.assertEqual(self.sandbox.data("DELETE", "/_mock/faults"), {"removed": 1})
        self.assertEqual(self.shop.initiate("PY-RESET-1")[0], 200)
        self.sandbox.add_rule({"match": {"endpoint": "any"}, "fault": "internal-error", "times": 5})
        # A reset under the sandbox's baseUrl forgets its rules and transactions, and
        # keeps the sandbox itself.
        self.assertEqual(self.sandbox.call("POST", "/_mock/reset")[0], 200)
        self.assertEqual((self.sandbox.rules(), self.sandbox.transactions()), ([], []))
        self.assertEqual(self.shop.initiate("PY-RESET-1")[0], 200)


if __name__ == "__main__":
    unittest.main()
