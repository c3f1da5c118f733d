#!/usr/bin/env python3
"""Prints every import of a higher layer: nothing, when every dependency of
the workspace's library crates points one way (issue 35).

Each crate's modules are listed below from the bottom up. A file belongs to
the layer of its module path (the longest prefix listed); every `crate::`
path it names (outside comments and its unit tests: a test may assemble
the layers above the code it tests) must belong to its own layer or one
below. A module that is not listed at all is reported too, so a new module
must take its place in the list.

    python3 scripts/layers.py        # exit 1 and one line per import that points up
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first. Entries of one inner list are one layer (they may import
# each other); "a::b" is a submodule with its own place.
LAYERS = {
    "payments-interface": [
        ["code", "status"],
        ["fields", "rules"],
        ["money", "envelope"],
        ["endpoint"],
        ["lib"],
    ],
    "payments-serve": [
        ["answer", "admin"],
        ["tls"],
        ["server", "pages", "logging", "metrics"],
        ["lib"],
    ],
    "payments-contract-proxy": [
        ["error", "json", "config"],
        ["upstream_tls"],
        ["exchange"],
        ["memory"],
        ["rules"],
        ["redact", "record", "metrics"],
        ["report"],
        ["check"],
        ["forward", "console", "access"],
        ["lib"],
    ],
    "payments-mock-server": [
        ["error", "metrics"],
        ["domain::scan", "domain::rules", "domain::clock"],
        ["domain::extra", "domain::fields", "domain::catalog", "domain::access"],
        ["domain::transaction", "domain::journal", "domain::settings"],
        ["domain::redirect", "domain::port"],
        ["domain::validate", "domain::lifecycle"],
        ["domain::payer"],
        ["domain"],
        ["store"],
        ["config", "faults"],
        ["state"],
        ["web"],
        ["http::schema", "http::extract", "http::json"],
        ["http::handlers"],
        ["http::openapi"],
        ["http::guard", "http::route", "http::middleware"],
        ["http::app"],
        ["http::server", "http"],
        ["mock_server"],
        ["seed"],
        ["lib"],
        # The binary's own files, beside main.rs (which is not checked).
        ["tls_args", "proxy_command"],
    ],
}

PATH = re.compile(r"\bcrate::((?:[a-z_][a-z0-9_]*)(?:::[a-z_][a-z0-9_]*)*)")


def module_of(crate_src, path):
    rel = os.path.relpath(path, crate_src)[:-3]
    parts = rel.split(os.sep)
    if parts[-1] == "mod":
        parts = parts[:-1]
    return "::".join(parts) or "lib"


def layer_of(layers, module):
    best, best_len = None, -1
    for index, layer in enumerate(layers):
        for entry in layer:
            if module == entry or module.startswith(entry + "::"):
                if len(entry) > best_len:
                    best, best_len = index, len(entry)
    return best


def strip_comments(line):
    cut = line.find("//")
    return line if cut < 0 else line[:cut]


TEST_MODULE = re.compile(r"^\s*(pub(\([a-z]+\))? )?mod [a-z_0-9]+ \{")


def test_module_lines(lines):
    """The line numbers of inline `#[cfg(test)] mod name { ... }` modules."""
    skip = set()
    index = 0
    while index < len(lines):
        if lines[index].strip() == "#[cfg(test)]":
            start = index + 1
            while start < len(lines) and lines[start].strip().startswith("#["):
                start += 1
            if start < len(lines) and TEST_MODULE.match(lines[start]):
                depth = 0
                end = start
                while end < len(lines):
                    depth += lines[end].count("{") - lines[end].count("}")
                    if depth <= 0 and end > start - 1 and "{" in "".join(lines[start:end + 1]):
                        break
                    end += 1
                skip.update(range(index + 1, end + 2))
                index = end
        index += 1
    return skip


def main():
    found = 0
    for crate, layers in LAYERS.items():
        src = os.path.join(ROOT, crate, "src")
        for dirpath, _, files in os.walk(src):
            for name in sorted(files):
                if not name.endswith(".rs") or name == "main.rs":
                    continue
                path = os.path.join(dirpath, name)
                module = module_of(src, path)
                here = layer_of(layers, module)
                shown = os.path.relpath(path, ROOT)
                if here is None:
                    print(f"{shown}: module {module} has no layer in scripts/layers.py")
                    found += 1
                    continue
                with open(path, encoding="utf-8") as f:
                    lines = f.readlines()
                skip = test_module_lines(lines)
                for number, line in enumerate(lines, 1):
                    if number in skip:
                        continue
                    for target in PATH.findall(strip_comments(line)):
                        there = layer_of(layers, target)
                        if there is None:
                            # An item of the crate root (`crate::Error`).
                            continue
                        if there > here:
                            print(f"{shown}:{number}: {module} imports crate::{target}, a higher layer")
                            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
