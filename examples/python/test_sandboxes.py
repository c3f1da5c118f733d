"""The mock's sandboxes themselves, black-box over HTTP with Python's
standard library: what a suite relies on when its tests run at once.

- A sandbox is listed with its label and counts, and removed on request.
- Two sandboxes used at the same moment with the same referenceNo both
  succeed: references, transactions, journals, rules and clocks are each
  sandbox's own.
- Advancing one sandbox's clock expires its transactions, not another's.
- Threads racing one confirm in a sandbox: exactly one payment.
- A removed, expired, unknown or malformed sandbox id is 404
  SANDBOX_NOT_FOUND on every route under it.
- With MOCK_BINARY set, a mock of its own shows 429 TOO_MANY_SANDBOXES.

See test_scripted_faults.py for how to run them; mock_client.py for the
calls.
"""

import concurrent.futures
import os
import selectors
import subprocess
import threading
import time
import unittest
import uuid

from mock_client import MERCHANT, Mock, SandboxTestCase, Shop, call

EXPIRY_SECONDS = 900  # the mock's default --expiry (15m)


def at_once(functions):
    """Call each function in its own thread, released together; their results in order."""
    barrier = threading.Barrier(len(functions))

    def released(function):
        barrier.wait(timeout=10)
        return function()

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(functions)) as pool:
        return [f.result() for f in [pool.submit(released, function) for function in functions]]


def poll(condition, deadline_seconds, interval=0.05):
    """Ask `condition` until it is true; False if the deadline passes first."""
    deadline = time.monotonic() + deadline_seconds
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


class Sandboxes(SandboxTestCase):
    def test_a_sandbox_is_listed_with_its_label_and_transactions(self):
        self.assertEqual(self.sandbox.label, self.id())
        self.assertEqual(self.sandbox.base_url, self.mock.base_url + "/sandboxes/" + self.sandbox.id)
        self.assertEqual(self.shop.initiate("PY-LIST-1")[0], 200)
        mine = [s for s in self.mock.sandboxes() if s["id"] == self.sandbox.id]
        self.assertEqual([(s["label"], s["baseUrl"], s["transactions"]) for s in mine],
                         [(self.id(), self.sandbox.base_url, 1)])

    def test_a_time_to_live_is_given_and_checked(self):
        status, _, answer = self.mock.create_sandbox(label=self.id() + " ttl", ttl_seconds=90)
        self.assertEqual(status, 201, answer)
        self.addCleanup(self.mock.remove_sandbox, answer["data"]["id"])
        self.assertEqual(answer["data"]["ttlSeconds"], 90)
        for ttl in (0, 604801, 1.5, "10"):
            with self.subTest(ttl=ttl):
                self.assertError(self.mock.create_sandbox(label=self.id(), ttl_seconds=ttl),
                                 400, "VALIDATION_ERROR")

    def test_the_same_reference_in_two_sandboxes_at_once(self):
        other = self.new_sandbox(self.id() + " (other)")
        shops = [self.shop, Shop(other.base_url)]

        def pay(shop):
            status, _, initiated = shop.initiate("PY-SAME-1")
            if status != 200:
                return status, initiated
            transaction = initiated["data"]["transactionId"]
            status, _, confirmed = shop.confirm(transaction, "PY-SAME-1")
            return status, confirmed["data"]

        results = at_once([lambda s=shop: pay(s) for shop in shops])
        self.assertEqual([r[0] for r in results], [200, 200], results)
        ids = [r[1]["transactionId"] for r in results]
        self.assertNotEqual(ids[0], ids[1])
        # Each sandbox knows its own transaction under that reference, and only it.
        for shop, sandbox, transaction in zip(shops, [self.sandbox, other], ids):
            status, _, found = shop.status("PY-SAME-1")
            self.assertEqual((status, found["data"]["transactionId"], found["data"]["status"]),
                             (200, transaction, "SUCCESSFUL"))
            self.assertEqual([t["transactionId"] for t in sandbox.transactions()], [transaction])
            self.assertEqual([e["path"] for e in sandbox.journal()],
                             ["/api/payments/initiate", "/api/payments/confirm",
                              "/api/payments/reference/PY-SAME-1/status"])
            self.assertError(shop.status_by_id(ids[1] if transaction == ids[0] else ids[0]),
                             404, "TRANSACTION_NOT_FOUND")
        # Within one sandbox a reference is used once.
        self.assertError(self.shop.initiate("PY-SAME-1"), 400, "DUPLICATE_REFERENCE_NO")

    def test_a_clock_advanced_in_one_sandbox_expires_only_its_transactions(self):
        other = self.new_sandbox(self.id() + " (other)")
        other_shop = Shop(other.base_url)
        mine = self.shop.initiate("PY-EXP-1")[2]["data"]["transactionId"]
        theirs = other_shop.initiate("PY-EXP-1")[2]["data"]["transactionId"]
        self.assertEqual(self.sandbox.advance_clock(EXPIRY_SECONDS + 1)["offsetSeconds"], EXPIRY_SECONDS + 1)
        self.assertEqual(other.clock()["offsetSeconds"], 0)
        self.assertError(self.shop.confirm(mine, "PY-EXP-1"), 400, "TRANSACTION_EXPIRED")
        self.assertEqual(self.shop.status_by_id(mine)[2]["data"]["status"], "EXPIRED")
        status, _, confirmed = other_shop.confirm(theirs, "PY-EXP-1")
        self.assertEqual((status, confirmed["data"]["status"]), (200, "SUCCESSFUL"), confirmed)

    def test_a_fault_rule_and_a_reset_stay_in_their_sandbox(self):
        other = self.new_sandbox(self.id() + " (other)")
        other_shop = Shop(other.base_url)
        self.assertEqual(other_shop.initiate("PY-KEEP-1")[0], 200)
        self.sandbox.add_rule({"match": {"endpoint": "any"}, "fault": "internal-error", "times": 10})
        self.assertError(self.shop.initiate("PY-FAULTY-1"), 500, "INTERNAL_ERROR")
        self.assertEqual(other_shop.initiate("PY-FAULTY-1")[0], 200)
        self.assertEqual(other.rules(), [])
        self.assertEqual(self.sandbox.call("POST", "/_mock/reset")[0], 200)
        self.assertEqual(sorted(t["referenceNo"] for t in other.transactions()), ["PY-FAULTY-1", "PY-KEEP-1"])
        # Coverage counts each sandbox's own answers.
        counts = {a["name"]: a["count"] for a in other.coverage()["answers"]}
        self.assertEqual(counts["initiate 200"], 2)

    def test_racing_confirms_in_one_sandbox_pay_once(self):
        transaction = self.shop.initiate("PY-RACE-1")[2]["data"]["transactionId"]
        racers = 8
        results = at_once([lambda: self.shop.confirm(transaction, "PY-RACE-1")] * racers)
        statuses = sorted(r[0] for r in results)
        self.assertEqual(statuses, [200] + [400] * (racers - 1), results)
        self.assertEqual({r[2]["errorCode"] for r in results if r[0] == 400}, {"TRANSACTION_ALREADY_CONFIRMED"})
        self.assertEqual([t["status"] for t in self.sandbox.transactions()], ["SUCCESSFUL"])
        self.assertEqual(sorted(e["status"] for e in self.sandbox.journal("/api/payments/confirm")),
                         statuses)

    def test_racing_initiates_with_one_reference_make_one_transaction(self):
        racers = 8
        results = at_once([lambda: self.shop.initiate("PY-RACE-2")] * racers)
        self.assertEqual(sorted(r[0] for r in results), [200] + [400] * (racers - 1), results)
        self.assertEqual({r[2]["errorCode"] for r in results if r[0] == 400}, {"DUPLICATE_REFERENCE_NO"})
        self.assertEqual(len(self.sandbox.transactions()), 1)

    def test_a_removed_sandbox_is_not_found_on_every_route(self):
        doomed = self.new_sandbox(self.id() + " (removed)")
        transaction = Shop(doomed.base_url).initiate("PY-GONE-1")[2]["data"]["transactionId"]
        self.remove_sandbox(doomed)
        self.assertNotIn(doomed.id, [s["id"] for s in self.mock.sandboxes()])
        self.assertEveryRouteIsNotFound(doomed.base_url, transaction)
        self.assertError(self.mock.remove_sandbox(doomed.id), 404, "SANDBOX_NOT_FOUND")
        # This test's own sandbox is untouched.
        self.assertEqual(self.shop.initiate("PY-GONE-1")[0], 200)

    def test_an_unknown_or_malformed_sandbox_is_not_found(self):
        base = self.mock.base_url + "/sandboxes/"
        for sandbox_id in ["not-a-uuid", str(uuid.uuid4()), self.sandbox.id.upper() + "0"]:
            with self.subTest(sandbox_id=sandbox_id):
                self.assertEveryRouteIsNotFound(base + sandbox_id, str(uuid.uuid4()))
        self.assertError(self.mock.remove_sandbox("not-a-uuid"), 404, "SANDBOX_NOT_FOUND")

    def test_an_unused_sandbox_expires(self):
        status, _, answer = self.mock.create_sandbox(label=self.id() + " (1 s)", ttl_seconds=1)
        self.assertEqual(status, 201, answer)
        short = answer["data"]
        self.addCleanup(self.mock.remove_sandbox, short["id"])  # 404 once it has expired
        # Watch the list, not the sandbox: a request to the sandbox would renew it.
        gone = poll(lambda: short["id"] not in [s["id"] for s in self.mock.sandboxes()], deadline_seconds=10)
        self.assertTrue(gone, "sandbox %s still listed 10 s after its 1 s time to live" % short["id"])
        self.assertError(call("GET", short["baseUrl"] + "/_mock/clock"), 404, "SANDBOX_NOT_FOUND")

    @unittest.skipUnless(os.environ.get("MOCK_BINARY"), "MOCK_BINARY (the mock's binary) not set")
    def test_too_many_sandboxes_is_429(self):
        # A mock of its own, so that its limit does not stop the other tests.
        mock = Mock(self.start_mock("--max-sandboxes", "2"))
        made = [mock.create_sandbox(label="%s %d" % (self.id(), n)) for n in range(2)]
        self.assertEqual([m[0] for m in made], [201, 201], made)
        self.assertError(mock.create_sandbox(label=self.id()), 429, "TOO_MANY_SANDBOXES")
        self.assertEqual(mock.remove_sandbox(made[0][2]["data"]["id"])[0], 200)
        self.assertEqual(mock.create_sandbox(label=self.id())[0], 201)

    def start_mock(self, *flags):
        """Start MOCK_BINARY on a free loopback port; its base URL. Stopped when the test ends."""
        process = subprocess.Popen([os.environ["MOCK_BINARY"], "--host", "127.0.0.1", "--port", "0", *flags],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

        def stop():
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()

        self.addCleanup(stop)
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=30)
        banner = process.stdout.readline() if ready else ""
        self.assertTrue(banner.startswith("listening on http://"), "the mock printed %r" % banner)
        return banner[len("listening on "):].strip()

    def assertEveryRouteIsNotFound(self, base_url, transaction_id):
        payment = {"transactionId": transaction_id, "referenceNo": "PY-GONE-1"}
        initiate = {"merchantId": MERCHANT, "referenceNo": "PY-GONE-2", "amount": 1050,
                    "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789"}
        routes = [("POST", "/api/payments/initiate", initiate),
                  ("POST", "/api/payments/confirm", payment),
                  ("GET", "/api/payments/%s/status" % transaction_id, None),
                  ("GET", "/api/payments/reference/PY-GONE-1/status?merchantId=" + MERCHANT, None),
                  ("GET", "/_mock/clock", None),
                  ("POST", "/_mock/clock/advance", {"seconds": 1}),
                  ("POST", "/_mock/reset", None),
                  ("GET", "/_mock/transactions", None),
                  ("GET", "/_mock/requests", None),
                  ("GET", "/_mock/faults", None),
                  ("POST", "/_mock/faults", {"fault": "hang"}),
                  ("DELETE", "/_mock/faults", None),
                  ("GET", "/_mock/coverage", None)]
        for method, path, body in routes:
            with self.subTest(method=method, path=path):
                self.assertError(call(method, base_url + path, body), 404, "SANDBOX_NOT_FOUND")


if __name__ == "__main__":
    unittest.main()
