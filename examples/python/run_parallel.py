"""Run the examples' unittest tests at once, each in its own thread.

    MOCK_BASE_URL=http://127.0.0.1:8080 python3 examples/python/run_parallel.py [-j N] [PATTERN]

Because each test works in its own sandbox (mock_client.SandboxTestCase),
the tests need not wait for one another. This finds them as
`python3 -m unittest discover -s examples/python` does, runs every test
method in a thread of a pool (-j, default: all at once, at most 32), with
a TestResult of its own (unittest's results are not shared between
threads), prints each as it ends, then the failures, like unittest -v.

After the run, no sandbox the tests made may be left on the mock (every
test removes its own; its label says which test made it). The exit status
is 0 only when every test passed and none was left behind, 1 otherwise.
A test still running after --timeout seconds counts as failed, and the run
ends there.

Run test methods only from classes that need no setUpClass or
setUpModule: the runner calls the tests one by one, not as a suite.
"""

import argparse
import concurrent.futures
import os
import sys
import time
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from flatten(item)
        else:
            yield item


def refuse_class_fixtures(tests):
    """Names of the classes whose fixtures this runner would skip."""
    skipped = set()
    for test in tests:
        cls = type(test)
        if (cls.setUpClass.__func__ is not unittest.TestCase.setUpClass.__func__
                or cls.tearDownClass.__func__ is not unittest.TestCase.tearDownClass.__func__):
            skipped.add(cls.__qualname__)
        module = sys.modules.get(cls.__module__)
        if module is not None and (hasattr(module, "setUpModule") or hasattr(module, "tearDownModule")):
            skipped.add(cls.__module__)
    return sorted(skipped)


def run_one(test):
    result = unittest.TestResult()
    started = time.monotonic()
    test(result)
    return result, time.monotonic() - started


def verdict(result):
    if result.errors:
        return "ERROR"
    if result.failures:
        return "FAIL"
    if result.unexpectedSuccesses:
        return "unexpected success"
    if result.skipped:
        return "skipped %r" % result.skipped[0][1]
    if result.expectedFailures:
        return "expected failure"
    return "ok"


def leftover_sandboxes():
    """Sandboxes the tests made that are still live on the mock."""
    client = sys.modules.get("mock_client")  # as the tests imported it
    made = client.sandboxes_made() if client else set()
    return [s for s in client.Mock().sandboxes() if s["id"] in made] if made else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="test*.py", help="test files to run (default test*.py)")
    parser.add_argument("-j", "--jobs", type=int, default=0, help="threads (default: one per test, at most 32)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds the whole run may take")
    args = parser.parse_args()

    sys.path.insert(0, HERE)
    loader = unittest.TestLoader()
    tests = list(flatten(loader.discover(HERE, pattern=args.pattern, top_level_dir=HERE)))
    if loader.errors or not tests:
        for error in loader.errors:
            print(error, file=sys.stderr)
        print("run_parallel.py: %s" % ("could not load the tests" if loader.errors else "no tests found"),
              file=sys.stderr)
        return 1
    fixtures = refuse_class_fixtures(tests)
    if fixtures:
        print("run_parallel.py: these need setUpClass/setUpModule, which this runner does not run: "
              + ", ".join(fixtures), file=sys.stderr)
        return 1

    jobs = args.jobs or min(len(tests), 32)
    print("run_parallel.py: %d tests, %d at once" % (len(tests), jobs), file=sys.stderr)
    started = time.monotonic()
    results = {}
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="test")
    futures = {pool.submit(run_one, test): test for test in tests}
    try:
        for future in concurrent.futures.as_completed(futures, timeout=args.timeout):
            test = futures[future]
            result, seconds = future.result()
            results[test] = (result, seconds)
            print("%s ... %s (%.2f s)" % (test.id(), verdict(result), seconds), file=sys.stderr, flush=True)
    except concurrent.futures.TimeoutError:
        pass
    elapsed = time.monotonic() - started
    unfinished = [test for test in tests if test not in results]

    failed = 0
    for test in tests:
        if test not in results:
            continue
        result = results[test][0]
        for kind, problems in (("ERROR", result.errors), ("FAIL", result.failures)):
            for case, text in problems:
                failed += 1
                print("=" * 70, file=sys.stderr)
                print("%s: %s" % (kind, case.id()), file=sys.stderr)
                print("-" * 70, file=sys.stderr)
                print(text, file=sys.stderr)
        for case in result.unexpectedSuccesses:
            failed += 1
            print("unexpected success: %s" % case.id(), file=sys.stderr)
    for test in unfinished:
        failed += 1
        print("TIMEOUT: %s still running after %.0f s" % (test.id(), args.timeout), file=sys.stderr)

    left = []
    if not unfinished:
        try:
            left = leftover_sandboxes()
        except Exception:  # the mock is gone: say so, and fail
            print("run_parallel.py: could not list the sandboxes after the run:\n" + traceback.format_exc(),
                  file=sys.stderr)
            failed += 1
    for sandbox in left:
        failed += 1
        print("LEFT BEHIND: sandbox %s labelled %r" % (sandbox["id"], sandbox["label"]), file=sys.stderr)

    skipped = sum(len(r.skipped) for r, _ in results.values())
    serial = sum(seconds for _, seconds in results.values())
    print("-" * 70, file=sys.stderr)
    print("Ran %d tests in %.3fs (%d threads; their own times add up to %.3fs)"
          % (len(results), elapsed, jobs, serial), file=sys.stderr)
    print("", file=sys.stderr)
    if failed:
        print("FAILED (problems=%d%s)" % (failed, ", skipped=%d" % skipped if skipped else ""), file=sys.stderr)
    else:
        print("OK%s" % (" (skipped=%d)" % skipped if skipped else ""), file=sys.stderr)
    sys.stderr.flush()
    if unfinished:
        os._exit(1)  # a hung test's thread cannot be stopped; do not wait for it
    pool.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
