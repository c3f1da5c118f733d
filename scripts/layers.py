#!/usr/bin/env python3
"""Prints every import that breaks the workspace's layers, every circle
between modules, and every outside crate a layer may not use: nothing, when
dependencies point one way (issues 35 and 41).

Every package of the workspace (the members of the root Cargo.toml) has a
table below listing its modules from the bottom up; a member without one
is reported. A file belongs to the layer of its module path (the longest
prefix listed), and every path of the crate it names must belong to its
own layer or one below:

- `crate::a::b`, `super::x` and `super::super::x` (resolved from the
  file's module: in `calls/confirm.rs`, `super::Foo` is `calls::Foo`),
  `self::x`, a child module's name, and the brace groups of `use`
  (`use crate::{a::X, b}`, `use super::{a, b::c}`);
- names taken through a module's imports: `crate::Error`, where lib.rs
  (or main.rs) says `pub use error::Error`, is `error`'s; `crate::m::Name`,
  where `m` re-exports it from `m::inner`, is `m::inner`'s. Globs
  (`use super::*`) are followed too.

A path counts wherever it is written outside comments and unit tests (an
item under `#[cfg(test)]`, an inline `mod tests { ... }` or a `mod tests;`
file: a test may assemble the layers above the code it tests), in code or
in an attribute's string (`deserialize_with = "crate::model::wire::x"`).

A name a module imports counts once, at its `use`; what the module then
writes with it (`Error::Api`) is the same import.

Circles: modules (one node per file: `client.rs` and `client/builder.rs`
are two) importing each other in a ring are reported, whatever their
layers: one line per circle a depth-first search meets, and for any
import of a ring that none of those goes through, the shortest circle
that does (close them, and run again: another may show). A module and its
own submodules are one module split across files (`client.rs` builds
`client/builder.rs`'s builder, which builds a `Client`), so an import
between a module and its ancestor makes no circle; the layers still apply
to it. The tables' own entries are nodes too: `a` and `b` of one layer
whose files import each other's (not in one ring of files) are a circle
as well.

Outside crates: FORBIDDEN lists, per module prefix, crates it may not name
(`use axum::Router`, `axum::Json`, `#[axum::debug_handler]`, `::axum::x`,
`extern crate axum`, or a name the crate root re-exports from it).

A module that is not listed is reported too, so a new module must take
its place. A package's src/lib.rs and src/main.rs are each a crate root
whose modules are found through their `mod` declarations (a package may
have only main.rs). lib.rs is the module `lib`; main.rs is `main`, and is
checked only when its table lists `main` (otherwise it is the binary's
entry and imports anything). src/bin/*.rs are not checked.

    python3 scripts/layers.py              # exit 1 and one line per finding
    python3 scripts/layers.py CRATE...     # only these packages (directories)
    python3 scripts/layers.py --self-test  # the checker's own tests
"""

import os
import re
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first. Entries of one inner list are one layer (they may import
# each other, but not in a circle); "a::b" is a submodule with its own
# place. A package is listed by its directory; "main" is main.rs.
LAYERS = {
    "payments-interface": [
        # A request's target decoded for reading: std only, nothing of the
        # crate.
        ["readable"],
        ["code", "status"],
        ["fields", "rules"],
        ["money", "envelope"],
        ["endpoint"],
        # The answers and transitions as a matrix (issue 43).
        ["coverage"],
        ["lib"],
    ],
    "payments-serve": [
        # Files still being written, removed at an abrupt stop: the
        # lowest, it uses nothing of the crate.
        ["unfinished"],
        # Which headers carry credentials: names only, nothing of the
        # crate.
        ["credentials"],
        ["answer", "admin", "request_log"],
        ["tls"],
        ["server", "pages", "logging", "metrics", "trace"],
        # The consoles' sign-in (admin and pages): drawn with the pages'
        # chrome.
        ["admin::sign_in"],
        # The span export (feature `otlp`, issue 44): the flag's URL, the
        # span around each request (reads `trace` and the answer's tags),
        # the export that makes them.
        ["otlp::endpoint"],
        ["otlp::spans"],
        ["otlp"],
        # What the two binaries' command lines share (feature `cli`).
        ["cli"],
        ["lib"],
    ],
    "payments-contract-proxy": [
        ["error", "json", "config"],
        ["upstream_tls"],
        ["exchange"],
        ["memory"],
        ["rules"],
        ["redact", "record", "metrics"],
        # What each judged exchange leaves for interface coverage, and for
        # the JUnit and SARIF files (issue 43); the last exchanges, short,
        # for `GET /_proxy/exchanges` (issue 44).
        ["coverage", "trail", "listing"],
        ["report", "junit", "sarif"],
        ["check"],
        # One proxy's state and its judge; then what serves it.
        ["state"],
        ["forward", "console", "access"],
        ["router"],
        ["server"],
        # The binary's flags and runs (feature `cli`).
        ["cli"],
        ["lib"],
    ],
    "payments-mock-server": [
        ["error", "metrics"],
        # What the rules refuse with: the bottom of the domain.
        ["domain::invalid"],
        ["domain::scan", "domain::rules", "domain::clock"],
        ["domain::extra", "domain::fields", "domain::catalog", "domain::access"],
        ["domain::transaction", "domain::journal", "domain::settings"],
        ["domain::redirect", "domain::port"],
        ["domain::validate", "domain::lifecycle"],
        ["domain::payer"],
        ["domain"],
        ["store"],
        # The admin side's keys and sessions; the HTML forms' bounds.
        ["admin", "forms"],
        # The live sandboxes (issue 42): whose, and until when.
        ["sandboxes"],
        ["config", "faults"],
        # Scripted faults (issue 42): rules that choose a fault.
        ["fault_rules"],
        # What the application under test met (issue 43): counts the
        # answers, transitions and faults; the interface's cells sort them.
        ["coverage"],
        ["seed"],
        ["state"],
        ["web"],
        # Where the domain's refusals become answers, and what the journal
        # reads off a request.
        ["http::answers", "http::access", "http::journal"],
        ["http::schema", "http::extract", "http::json"],
        ["http::handlers"],
        ["http::openapi"],
        # The coverage's recovered cells: what a committed fault was about.
        ["http::recovery"],
        # Scripted faults: what a request is about, and how a faulted
        # answer is delivered (issue 42).
        ["http::rule_facts", "http::delivery"],
        # How a request's path is logged (the request line's, and an
        # unanswered request's).
        ["http::log_path"],
        ["http::guard", "http::route", "http::middleware"],
        ["http::app"],
        ["http::server", "http"],
        ["service"],
        ["mock_server"],
        ["lib"],
    ],
    # The binaries (issue 41): a proxy recording read into sightings.
    "payments-mock-server-cli": [["recording", "listen"], ["main"]],
    "payments-contract-proxy-cli": [["main"]],
    "payments-client": [
        # The vocabulary: the service's data, typed, and exact money.
        ["model::money_error", "model::ids", "model::status", "model::envelope"],
        ["model::currency"],
        ["model::wire"],
        ["money"],
        ["model::transaction"],
        # The one error type (and what an answer mismatch carries).
        ["error"],
        ["secret", "retry", "calls"],
        ["decode", "guard"],
        # OpenTelemetry (feature `opentelemetry`): the trace context and
        # the instruments an attempt uses.
        ["otel"],
        ["transport"],
        ["reconcile"],
        ["client", "redirect"],
        # The public faces: `model` (model/mod.rs, which also names the
        # requests of calls/), `wire` and the crate root.
        ["model", "wire", "lib"],
    ],
    "payments-cli": [
        # The vocabulary: exit codes, printable text and tables, amounts,
        # the secrets a run sends (hidden from what it shows).
        ["exit", "output", "amount", "text", "secrets"],
        # The errors (the CLI's and the config file's), and usage errors.
        ["error", "usage"],
        # The command line, the settings it resolves to, the commands.
        ["cli"],
        ["config"],
        ["commands"],
        ["main"],
    ],
    "examples": [["lib"]],
    "perf": [["lib"]],
}

# Outside crates a module may not name, by module prefix ("domain" is
# `domain` and every `domain::...`). Crate names as Rust spells them.
FORBIDDEN = {
    "payments-mock-server": {
        # The domain speaks no protocol (STYLE.md): no server, router,
        # shell, template, database or document crate. The `http` crate is
        # a vocabulary of types (a `Method` and a header value in the
        # request journal, a `Uri` parsed in a return address), which
        # hyper's server and client both read: it may stay.
        "domain": [
            "axum", "hyper", "tower", "tower_http", "payments_serve",
            "askama", "rusqlite", "tokio_postgres", "deadpool_postgres", "utoipa",
        ],
    },
}

# ---------------------------------------------------------------- reading

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RAW_STRING = re.compile(r"(?:b|c)?r(#*)\"")
PATH_TEXT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+$")
ITEM_KEYWORDS = {"fn", "struct", "enum", "union", "trait", "type", "const", "static"}
NOT_NAMES = {"fn", "mut", "impl", "dyn", "unsafe", "extern", "async"}


def tokenize(text):
    """Rust tokens without comments: (kind, value, line); kind is `id`,
    `str` (the literal's content), `::`, `chr`, `life`, `num` or `p` (one
    punctuation character)."""
    tokens = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += text[i] == "\n"
                    i += 1
        elif (c in "rbc") and RAW_STRING.match(text, i):
            m = RAW_STRING.match(text, i)
            close = '"' + m.group(1)
            end = text.find(close, m.end())
            end = n if end < 0 else end
            content = text[m.end():end]
            tokens.append(("str", content, line))
            line += content.count("\n")
            i = end + len(close)
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1)):
            start = i + 1 if c == '"' else i + 2
            j = start
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            content = text[start:j]
            tokens.append(("str", content, line))
            line += content.count("\n")
            i = j + 1
        elif c == "'" or (c == "b" and text.startswith("'", i + 1)):
            q = i if c == "'" else i + 1
            if text.startswith("\\", q + 1):
                end = text.find("'", q + 3)
                end = n - 1 if end < 0 else end
                tokens.append(("chr", text[q:end + 1], line))
                i = end + 1
            elif q + 2 < n and text[q + 2] == "'":
                tokens.append(("chr", text[q:q + 3], line))
                i = q + 3
            else:
                m = IDENT.match(text, q + 1)
                end = m.end() if m else q + 1
                tokens.append(("life", text[q:end], line))
                i = end
        elif c.isdigit():
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_" or
                             (text[j] == "." and j + 1 < n and text[j + 1].isdigit())):
                j += 1
            tokens.append(("num", text[i:j], line))
            i = j
        elif c.isascii() and (c.isalpha() or c == "_"):
            if text.startswith("r#", i) and IDENT.match(text, i + 2):
                m = IDENT.match(text, i + 2)
            else:
                m = IDENT.match(text, i)
            tokens.append(("id", m.group(0), line))
            i = m.end()
        elif text.startswith("::", i):
            tokens.append(("::", "::", line))
            i += 2
        else:
            tokens.append(("p", c, line))
            i += 1
    return tokens


class Module:
    """One module: a file, or an inline `mod x { ... }` within one."""

    def __init__(self, path, file, directory, owner):
        self.path = path            # tuple of names from the crate root
        self.file = file            # the file it is written in
        self.directory = directory  # where its `mod x;` files are
        self.owner = owner          # the path of the file's own module
        self.children = set()
        self.defined = set()
        self.imports = {}           # name -> path as written, in this module
        self.globs = []             # paths as written (`use x::*`)


class Ref:
    """A path as written, where it is written."""

    def __init__(self, file, line, scope, segments):
        self.file, self.line, self.scope, self.segments = file, line, scope, segments

    def text(self):
        if self.segments[0] == "::":
            return "::" + "::".join(self.segments[1:])
        return "::".join(self.segments)


class Crate:
    """One crate root (lib.rs or main.rs) and every module under it."""

    def __init__(self, root_file):
        self.root_name = os.path.basename(root_file)[:-3]
        self.modules = {}
        self.files = {}   # file path -> the module path of the file
        self.refs = []
        self.test_files = set()  # `#[cfg(test)] mod x;` files and directories
        self.read(root_file, ())

    def adopt(self, file, src):
        """A file no `mod x;` reached (a macro declared it): its module by
        its place under src/, under the module of its directory."""
        rel = os.path.relpath(file, src)[:-3].split(os.sep)
        if rel[-1] == "mod":
            rel = rel[:-1]
        path = tuple(rel)
        parent = self.modules.get(path[:-1])
        if parent is None or path in self.modules:
            return
        parent.children.add(path[-1])
        self.read(file, path)

    def is_test_file(self, file):
        return any(file == t or file.startswith(t + os.sep) for t in self.test_files)

    def name(self, path):
        return "::".join(path) if path else self.root_name

    def read(self, file, path):
        base = os.path.basename(file)
        if base in ("lib.rs", "main.rs", "mod.rs"):
            directory = os.path.dirname(file)
        else:
            directory = file[:-3]
        module = Module(path, file, directory, path)
        self.modules[path] = module
        self.files[file] = path
        with open(file, encoding="utf-8") as f:
            tokens = tokenize(f.read())
        self.parse(tokens, module)

    def parse(self, tokens, file_module):
        scopes = [(file_module, 0)]  # (module, the depth inside its braces)
        depth = 0
        pending_test = False
        pending_path = None
        i, n = 0, len(tokens)

        def at(k, value):
            return k < n and tokens[k][1] == value and tokens[k][0] != "str"

        while i < n:
            kind, value, line = tokens[i]
            module, level = scopes[-1]
            top = depth == level
            if value == "#" and kind == "p" and (at(i + 1, "[") or (at(i + 1, "!") and at(i + 2, "["))):
                inner = at(i + 1, "!")
                start = i + (3 if inner else 2)
                end, nest = start, 1
                while end < n and nest:
                    if tokens[end][0] == "p" and tokens[end][1] == "[":
                        nest += 1
                    elif tokens[end][0] == "p" and tokens[end][1] == "]":
                        nest -= 1
                    end += 1
                body = [t[1] for t in tokens[start:end - 1] if t[0] != "str"]
                if body == ["cfg", "(", "test", ")"]:
                    if inner and module.path == file_module.path and depth == 0:
                        return  # `#![cfg(test)]`: the whole file is a test
                    if not inner:
                        pending_test = True
                if body[:2] == ["path", "="]:
                    strings = [t[1] for t in tokens[start:end - 1] if t[0] == "str"]
                    pending_path = strings[0] if strings else None
                k = start
                while not pending_test and k < end - 1:
                    t = tokens[k]
                    if t[0] == "str" and PATH_TEXT.match(t[1]):
                        # `deserialize_with = "crate::model::wire::decimal"`
                        self.refs.append(Ref(file_module.file, t[2], module.path, t[1].split("::")))
                    elif t[0] == "id" and at(k + 1, "::") and k + 2 < n and tokens[k + 2][0] == "id" \
                            and tokens[k - 1][0] != "::":
                        # `value_parser = crate::usage::parse_merchant_id`
                        segments, after = read_path(tokens, k)
                        self.refs.append(Ref(file_module.file, t[2], module.path, segments))
                        k = after
                        continue
                    k += 1
                i = end
                continue
            if pending_test:
                pending_test = False
                pending_path = None
                k = i + 1 if value == "pub" else i
                if at(k, "("):  # pub(crate)
                    while k < n and not at(k, ")"):
                        k += 1
                    k += 1
                if at(k, "mod") and k + 2 < n and tokens[k + 1][0] == "id" and at(k + 2, ";"):
                    name = tokens[k + 1][1]
                    self.test_files.update([os.path.join(module.directory, name + ".rs"),
                                            os.path.join(module.directory, name)])
                i = skip_item(tokens, i)
                continue
            if kind == "p" and value == "{":
                depth += 1
            elif kind == "p" and value == "}":
                depth -= 1
                while len(scopes) > 1 and depth < scopes[-1][1]:
                    scopes.pop()
            elif kind == "id" and value == "mod" and i + 1 < n and tokens[i + 1][0] == "id" and top:
                name = tokens[i + 1][1]
                module.children.add(name)
                if at(i + 2, ";"):
                    self.declare(module, name, pending_path)
                    i += 3
                elif at(i + 2, "{"):
                    child = Module(module.path + (name,), module.file,
                                   os.path.join(module.directory, name), file_module.path)
                    self.modules[child.path] = child
                    depth += 1
                    scopes.append((child, depth))
                    i += 3
                else:
                    i += 2
                pending_path = None
                continue
            elif kind == "id" and value == "use" and not at(i + 1, "<"):
                leaves, globs, i = parse_use(tokens, i + 1)
                for segments, alias, leaf_line in leaves:
                    self.refs.append(Ref(file_module.file, leaf_line, module.path, segments))
                    if top and alias != "_":
                        module.imports[alias] = segments
                for segments, leaf_line in globs:
                    self.refs.append(Ref(file_module.file, leaf_line, module.path, segments))
                    if top:
                        module.globs.append(segments)
                continue
            elif kind == "id" and top and value in ITEM_KEYWORDS and i + 1 < n \
                    and tokens[i + 1][0] == "id" and tokens[i + 1][1] not in NOT_NAMES:
                module.defined.add(tokens[i + 1][1])
            elif kind == "id" and value == "extern" and at(i + 1, "crate") and i + 2 < n \
                    and tokens[i + 2][0] == "id":
                self.refs.append(Ref(file_module.file, line, module.path, ["::", tokens[i + 2][1]]))
                i += 3
                continue
            elif kind == "id" and top and value == "macro_rules" and at(i + 1, "!") \
                    and i + 2 < n and tokens[i + 2][0] == "id":
                module.defined.add(tokens[i + 2][1])
            elif kind == "id" and at(i + 1, "::") and i + 2 < n and tokens[i + 2][0] == "id":
                before = tokens[i - 1] if i else ("p", "", 0)
                after_in = before[1] == "in" and i >= 2 and tokens[i - 2][1] == "("
                if before[0] != "::" and before[1] != "." and not after_in:
                    segments, i = read_path(tokens, i)
                    self.refs.append(Ref(file_module.file, line, module.path, segments))
                    continue
            elif kind == "::" and i + 1 < n and tokens[i + 1][0] == "id":
                before = tokens[i - 1] if i else ("p", "", 0)
                if before[0] not in ("id", "::") and before[1] not in (">", ")", "]"):
                    segments, i = read_path(tokens, i + 1)
                    self.refs.append(Ref(file_module.file, line, module.path, ["::"] + segments))
                    continue
            i += 1

    def declare(self, module, name, explicit):
        if explicit:
            candidates = [os.path.join(os.path.dirname(module.file), explicit)]
        else:
            candidates = [os.path.join(module.directory, name + ".rs"),
                          os.path.join(module.directory, name, "mod.rs")]
        for file in candidates:
            if os.path.isfile(file):
                self.read(file, module.path + (name,))
                return

    # ------------------------------------------------------------ resolving

    def resolve(self, scope, segments, guard=frozenset()):
        """Where a path written in `scope` leads: ("local", module path,
        the rest of the path) or ("extern", crate name); None when unknown."""
        if segments[0] == "::":
            return ("extern", segments[1])
        first = segments[0]
        if first == "crate":
            return self.walk((), segments[1:], guard)
        if first in ("super", "self"):
            base = list(scope)
            k = 0
            while k < len(segments) and segments[k] in ("super", "self"):
                if segments[k] == "super":
                    if not base:
                        return None
                    base.pop()
                k += 1
            return self.walk(tuple(base), segments[k:], guard)
        if first == "Self":
            return None
        return self.walk(scope, segments, guard, first_in_scope=True)

    def walk(self, start, segments, guard, first_in_scope=False):
        current = start
        for k, segment in enumerate(segments):
            module = self.modules.get(current)
            if module is None:
                return ("local", current, segments[k:])
            if segment in module.children and current + (segment,) in self.modules:
                current = current + (segment,)
                continue
            if segment in module.defined:
                return ("local", current, segments[k:])
            hit = self.lookup(current, segment, guard)
            if hit is not None:
                if hit[0] == "extern":
                    # A module's re-export of an outside crate's item is
                    # that module's (`crate::console::page`, where console
                    # says `pub(crate) use payments_serve::... as page`);
                    # the crate root's and the scope's own are the outside
                    # crate's.
                    if current and not (first_in_scope and k == 0):
                        return ("local", current, segments[k:])
                    return hit
                _, where, rest = hit
                return self.walk((), list(where) + list(rest) + list(segments[k + 1:]), guard)
            if first_in_scope and k == 0:
                return ("extern", segment)
            return ("local", current, segments[k:])
        return ("local", current, [])

    def lookup(self, module_path, name, guard):
        """`name` as imported into `module_path` (by name or by a glob):
        where it leads, or None."""
        key = (module_path, name)
        if key in guard:
            return None
        guard = guard | {key}
        module = self.modules[module_path]
        if name in module.imports:
            target = self.resolve(module_path, module.imports[name], guard)
            if target is None or target[0] == "extern":
                return target
            _, where, rest = target
            return ("local", where, rest)
        for glob in module.globs:
            target = self.resolve(module_path, glob, guard)
            if target is None or target[0] != "local" or target[2]:
                continue
            source = self.modules.get(target[1])
            if source is None:
                continue
            if name in source.children:
                return ("local", target[1] + (name,), [])
            if name in source.defined:
                return ("local", target[1], [name])
            deeper = self.lookup(target[1], name, guard)
            if deeper is not None:
                return deeper
        return None


def read_path(tokens, i):
    """`a::b::c` from tokens[i] (an identifier): the names and the index after."""
    segments = [tokens[i][1]]
    i += 1
    while i + 1 < len(tokens) and tokens[i][0] == "::" and tokens[i + 1][0] == "id":
        segments.append(tokens[i + 1][1])
        i += 2
    return segments, i


def parse_use(tokens, i):
    """A `use` tree from tokens[i] to its `;`: (leaves, globs, index after).
    A leaf is (path, name it is known by, line); a glob (path, line)."""
    leaves, globs = [], []

    def tree(i, prefix):
        segments = list(prefix)
        if i < len(tokens) and tokens[i][0] == "::":
            segments = ["::"]
            i += 1
        while i < len(tokens):
            kind, value, line = tokens[i]
            if kind == "id":
                segments.append(value)
                i += 1
                if i < len(tokens) and tokens[i][0] == "::":
                    i += 1
                    continue
                alias = value
                if i + 1 < len(tokens) and tokens[i][1] == "as":
                    alias = tokens[i + 1][1]
                    i += 2
                if segments[-1] == "self" and len(segments) > 1:
                    segments.pop()
                    if alias == "self":
                        alias = segments[-1]
                leaves.append((segments, alias, line))
                return i
            if value == "*":
                globs.append((segments, line))
                return i + 1
            if value == "{":
                i += 1
                while i < len(tokens) and tokens[i][1] != "}":
                    if tokens[i][1] == ",":
                        i += 1
                        continue
                    i = tree(i, segments)
                return i + 1
            return i + 1
        return i

    i = tree(i, [])
    while i < len(tokens) and tokens[i][1] != ";":
        i += 1
    return leaves, globs, i + 1


def skip_item(tokens, i):
    """The index after the item starting at tokens[i]: its `;`, or the end
    of its first brace block, at the item's own nesting."""
    nest = 0
    while i < len(tokens):
        kind, value, _ = tokens[i]
        if kind == "p" and value in "([{":
            nest += 1
        elif kind == "p" and value in ")]}":
            nest -= 1
            if nest == 0 and value == "}":
                return i + 1
            if nest < 0:
                return i
        elif kind == "p" and value == ";" and nest == 0:
            return i + 1
        i += 1
    return i


# ---------------------------------------------------------------- checking

def layer_of(layers, name):
    best, best_len = None, -1
    for index, layer in enumerate(layers):
        for entry in layer:
            if name == entry or name.startswith(entry + "::"):
                if len(entry) > best_len:
                    best, best_len = index, len(entry)
    return best


def entry_of(layers, name):
    best = None
    for layer in layers:
        for entry in layer:
            if (name == entry or name.startswith(entry + "::")) and \
                    (best is None or len(entry) > len(best)):
                best = entry
    return best


def related(a, b):
    """Whether one module is the other or contains it."""
    return a == b or a.startswith(b + "::") or b.startswith(a + "::") or \
        a in ("lib", "main") or b in ("lib", "main")


def circles(edges):
    """One cycle for each back edge a depth-first search meets, within each
    strongly connected component of more than one node; each as a list of
    nodes, the first repeated at the end, starting at its smallest node."""
    nodes = sorted(set(edges) | {b for targets in edges.values() for b in targets})
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def strong(v):  # Tarjan, recursive: module graphs are small
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in nodes:
        if v not in index:
            strong(v)
    found = []
    for component in components:
        path, on_path, done = [], set(), set()

        def search(v):
            path.append(v)
            on_path.add(v)
            for w in sorted(edges.get(v, ())):
                if w not in component:
                    continue
                if w in on_path:
                    found.append(rotate(path[path.index(w):]))
                elif w not in done:
                    search(w)
            path.pop()
            on_path.discard(v)
            done.add(v)

        search(min(component))
        # An import of the component that no cycle above goes through
        # gets the shortest one that does: every import in a circle is
        # shown in one.
        covered = {(c[k], c[k + 1]) for c in found for k in range(len(c) - 1)}
        for v in sorted(component):
            for w in sorted(edges.get(v, ())):
                if w in component and (v, w) not in covered:
                    back = shortest(edges, component, w, v)
                    cycle = rotate([v] + back[:-1])
                    found.append(cycle)
                    covered.update((cycle[k], cycle[k + 1]) for k in range(len(cycle) - 1))
    unique = []
    for cycle in found:
        if cycle not in unique:
            unique.append(cycle)
    return sorted(unique, key=lambda c: (len(c), c))


def shortest(edges, component, start, goal):
    """The shortest path from start to goal within component, both included."""
    previous, queue = {start: None}, [start]
    for v in queue:
        if v == goal:
            break
        for w in sorted(edges.get(v, ())):
            if w in component and w not in previous:
                previous[w] = v
                queue.append(w)
    path, v = [], goal
    while v is not None:
        path.append(v)
        v = previous[v]
    return path[::-1]


def rotate(cycle):
    k = cycle.index(min(cycle))
    cycle = cycle[k:] + cycle[:k]
    return cycle + [cycle[0]]


def roots_of(src):
    return [os.path.join(src, name) for name in ("lib.rs", "main.rs")
            if os.path.isfile(os.path.join(src, name))]


def check_package(key, package_dir, layers, forbidden, shown_from):
    """Every finding of one package, one line each."""
    findings = []
    src = os.path.join(package_dir, "src")
    roots = roots_of(src)
    if not roots:
        return [f"{key}: no src/lib.rs or src/main.rs"]
    listed = {entry for layer in layers for entry in layer}
    for crate in load_package(src):
        findings.extend(check_crate(key, crate, layers, forbidden, listed, shown_from))
    return findings


def load_package(src):
    """The crates of a package's src/: its library, then its binary."""
    crates = [Crate(root_file) for root_file in roots_of(src)]
    reached = {file for crate in crates for file in crate.files}
    tests = [crate.is_test_file for crate in crates]
    # Files no declaration reached (e.g. `internal!(domain, http)`, a macro
    # that declares modules) belong to the library, by their place.
    loose = []
    for dirpath, dirnames, names in os.walk(src):
        if dirpath == src and "bin" in dirnames:
            dirnames.remove("bin")
        for name in names:
            file = os.path.join(dirpath, name)
            if name.endswith(".rs") and file not in reached and not any(t(file) for t in tests):
                loose.append(file)
    loose.sort(key=lambda f: (f.count(os.sep), f))
    for file in loose:
        # A loose file adopted before may declare this one its unit tests
        # (`#[cfg(test)] mod tests;`), shallower files first.
        if any(t(file) for t in tests):
            continue
        if os.path.basename(file) not in ("lib.rs", "main.rs") or os.path.dirname(file) != src:
            crates[0].adopt(file, src)
    return crates


def check_crate(key, crate, layers, forbidden, listed, shown_from):
    """Every finding of one crate: modules without a layer, imports that
    point up or name a forbidden crate (by file and line), then circles."""

    def shown(file):
        return os.path.relpath(file, shown_from)

    unlisted, findings, circle_lines = [], [], []
    checked = {}
    for file in sorted(crate.files):
        name = crate.name(crate.files[file])
        if name == "main" and "main" not in listed:
            continue  # the binary's entry, unless the table gives it a place
        here = layer_of(layers, name)
        if here is None:
            unlisted.append(f"{shown(file)}: module {name} has no layer in scripts/layers.py")
        else:
            checked[file] = (name, here)
    edges, entry_edges, evidence, entry_evidence = {}, {}, {}, {}
    reported = set()
    for ref in sorted(crate.refs, key=lambda r: (r.file, r.line)):
        if ref.file not in checked:
            continue
        name, here = checked[ref.file]
        first = ref.segments[0]
        if first not in ("crate", "super", "self", "::") and first in crate.modules[ref.scope].imports:
            continue  # a name this module imports: its `use` is the import
        target = crate.resolve(ref.scope, ref.segments)
        if target is None:
            continue
        where = (ref.file, ref.line)
        if target[0] == "extern":
            for prefix, crates in forbidden.items():
                if (name == prefix or name.startswith(prefix + "::")) and target[1] in crates \
                        and (where, target[1]) not in reported:
                    reported.add((where, target[1]))
                    findings.append((where, f"{shown(ref.file)}:{ref.line}: {name} uses {target[1]} "
                                            f"({ref.text()}), which {prefix} may not use"))
            continue
        module = crate.modules.get(target[1])
        there_name = crate.name(module.owner if module else target[1])
        if there_name == name:
            continue
        there = layer_of(layers, there_name)
        if there is not None and there > here and (where, there_name) not in reported:
            reported.add((where, there_name))
            direct = ref.text() == "crate::" + there_name or \
                ref.text().startswith("crate::" + there_name + "::")
            via = "" if direct else f" (in {there_name})"
            findings.append((where, f"{shown(ref.file)}:{ref.line}: {name} imports {ref.text()}{via}, "
                                    f"a higher layer"))
        if there is None or related(name, there_name):
            continue
        edges.setdefault(name, set()).add(there_name)
        evidence.setdefault((name, there_name), f"{shown(ref.file)}:{ref.line} {ref.text()}")
        a, b = entry_of(layers, name), entry_of(layers, there_name)
        if a != b and not related(a, b):
            entry_edges.setdefault(a, set()).add(b)
            entry_evidence.setdefault((a, b), f"{shown(ref.file)}:{ref.line} {ref.text()}")
    file_cycles = circles(edges)
    # A ring of files across entries is that ring of entries too: said once.
    projected = set()
    for cycle in file_cycles:
        entries = [entry_of(layers, m) for m in cycle]
        squeezed = [e for k, e in enumerate(entries) if k == 0 or e != entries[k - 1]]
        if len(squeezed) > 2:
            projected.add(tuple(rotate(squeezed[:-1])))
    for cycle in file_cycles:
        circle_lines.append(describe(key, cycle, evidence))
    for cycle in circles(entry_edges):
        if tuple(cycle) not in projected:
            circle_lines.append(describe(key, cycle, entry_evidence, entries=True))
    findings.sort(key=lambda f: f[0])
    return unlisted + [line for _, line in findings] + circle_lines


def describe(key, cycle, evidence, entries=False):
    what = "circle of layer entries" if entries else "circle"
    steps = "; ".join(evidence[(a, b)] for a, b in zip(cycle, cycle[1:]))
    return f"{key}: {what} {' -> '.join(cycle)} ({steps})"


def members():
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        return tomllib.load(f)["workspace"]["members"]


def main(argv):
    if argv[:1] == ["--self-test"]:
        return self_test()
    wanted = argv or None
    findings = []
    for member in members():
        if member not in LAYERS and (wanted is None or member in wanted):
            findings.append(f"{member}: no layers in scripts/layers.py (add its table)")
    for key, layers in LAYERS.items():
        if wanted is not None and key not in wanted:
            continue
        package = os.path.join(ROOT, key)
        if not os.path.isdir(package):
            findings.append(f"{key}: listed in scripts/layers.py, but there is no such directory")
            continue
        findings.extend(check_package(key, package, layers, FORBIDDEN.get(key, {}), ROOT))
    for line in findings:
        print(line)
    return 1 if findings else 0


# ---------------------------------------------------------------- self-test

def self_test():
    import shutil
    import tempfile
    import unittest

    def write(root, files):
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

    class Synthetic(unittest.TestCase):
        """The checker's rules, on small crates written for each test."""

        def run_on(self, files, layers, forbidden=None):
            with tempfile.TemporaryDirectory() as tmp:
                write(os.path.join(tmp, "pkg"), files)
                return check_package("pkg", os.path.join(tmp, "pkg"), layers, forbidden or {}, tmp)

        def test_upward_crate_path_and_groups(self):
            found = self.run_on({
                "src/lib.rs": "mod low;\nmod high;\n",
                "src/low.rs": "use crate::{\n    high::Thing,\n};\n// crate::high::Comment\n",
                "src/high.rs": "pub struct Thing;\n",
            }, [["low"], ["high"], ["lib"]])
            self.assertEqual(found, ["pkg/src/low.rs:2: low imports crate::high::Thing, a higher layer"])

        def test_strings_chars_comments_and_test_files(self):
            found = self.run_on({
                "src/lib.rs": "mod low;\nmod high;\n",
                "src/low.rs": "const A: char = '{';\nconst B: &str = \"// crate::high::X {\";\n"
                              "const C: &str = r#\"crate::high::Y\"#;\n/* crate::high::Z /* in */ */\n"
                              "fn f<'a>(x: &'a str) -> &'a str { x }\nuse crate::high::Real;\n"
                              "#[cfg(test)]\npub(crate) mod test_support;\n",
                "src/low/test_support.rs": "use crate::high::Anything;\n",
                "src/high.rs": "",
            }, [["low"], ["high"], ["lib"]])
            self.assertEqual(found, ["pkg/src/low.rs:6: low imports crate::high::Real, a higher layer"])

        def test_super_paths_resolve_from_the_module(self):
            found = self.run_on({
                "src/lib.rs": "mod calls;\nmod top;\nmod x;\n",
                "src/calls/mod.rs": "mod confirm;\npub struct Foo;\n",
                "src/calls/confirm.rs": "use super::Foo;\nuse super::super::x;\n"
                                        "use super::{Foo as F, super::top::T};\n",
                "src/x.rs": "",
                "src/top.rs": "",
            }, [["x", "calls"], ["top"], ["lib"]])
            self.assertEqual(found, ["pkg/src/calls/confirm.rs:3: calls::confirm imports "
                                     "super::super::top::T (in top), a higher layer"])

        def test_names_through_the_root_and_a_reexporting_module(self):
            found = self.run_on({
                "src/lib.rs": "mod error;\nmod model;\nmod client;\npub use client::{Client as C};\n"
                              "pub use error::Error;\n",
                "src/model/mod.rs": "mod inner;\npub use inner::Thing;\n",
                "src/model/inner.rs": "pub struct Thing;\n",
                "src/error.rs": "use crate::C;\nfn f(_: crate::model::Thing) {}\n",
                "src/client.rs": "use crate::Error;\n",
            }, [["model::inner"], ["error"], ["client", "model"], ["lib"]])
            self.assertEqual(found, [
                "pkg/src/error.rs:1: error imports crate::C (in client), a higher layer",
                "pkg: circle client -> error -> client (pkg/src/client.rs:1 crate::Error; "
                "pkg/src/error.rs:1 crate::C)",
            ])

        def test_circles_in_one_layer_but_not_with_a_parent(self):
            found = self.run_on({
                "src/lib.rs": "mod a;\nmod b;\nmod c;\n",
                "src/a.rs": "mod inner;\nuse crate::b::X;\nuse inner::Y;\n",
                "src/a/inner.rs": "use super::Z;\n",
                "src/b.rs": "use crate::a::Z;\n",
                "src/c.rs": "",
            }, [["a", "b", "c"], ["lib"]])
            self.assertEqual(len(found), 1, found)
            self.assertTrue(found[0].startswith("pkg: circle a -> b -> a (pkg/src/a.rs:2"), found)

        def test_circles_of_layer_entries(self):
            found = self.run_on({
                "src/lib.rs": "mod a;\nmod b;\n",
                "src/a/mod.rs": "mod one;\nmod two;\n",
                "src/a/one.rs": "use crate::b::x::X;\n",
                "src/a/two.rs": "",
                "src/b/mod.rs": "mod x;\nmod y;\n",
                "src/b/x.rs": "",
                "src/b/y.rs": "use crate::a::two::T;\n",
            }, [["a", "b"], ["lib"]])
            self.assertEqual(len(found), 1, found)
            self.assertTrue(found[0].startswith("pkg: circle of layer entries a -> b -> a"), found)

        def test_forbidden_outside_crates(self):
            found = self.run_on({
                "src/lib.rs": "mod domain;\nmod http;\nmod web;\npub use axum::Json;\n",
                "src/domain/mod.rs": "mod inner;\nmod other;\nuse axum::Router;\n/* axum::Commented */\n"
                                     "#[cfg(test)]\nmod tests {\n    use axum::Test;\n}\n",
                "src/domain/inner.rs": "fn f() -> http::StatusCode { ::tower::x() }\n"
                                       "use crate::http::Local;\n",
                "src/http.rs": "use axum::Router;\n",
                "src/web.rs": "use crate::domain::inner;\nextern crate tower;\n",
                "src/domain/other.rs": "extern crate tower;\nfn f(_: crate::Json) {}\n",
            }, [["domain", "http"], ["web"], ["lib"]], {"domain": ["axum", "http", "tower"]})
            self.assertEqual(found, [
                "pkg/src/domain/inner.rs:1: domain::inner uses http (http::StatusCode), which domain may not use",
                "pkg/src/domain/inner.rs:1: domain::inner uses tower (::tower::x), which domain may not use",
                "pkg/src/domain/mod.rs:3: domain uses axum (axum::Router), which domain may not use",
                "pkg/src/domain/other.rs:1: domain::other uses tower (::tower), which domain may not use",
                "pkg/src/domain/other.rs:2: domain::other uses axum (crate::Json), which domain may not use",
            ])

        def test_unit_tests_of_a_file_no_declaration_reached(self):
            # `http` is declared by a macro: its files are adopted by their
            # place, and an adopted file's `mod tests;` file is a test too.
            found = self.run_on({
                "src/lib.rs": "internal!(http);\nmod app;\n",
                "src/http/mod.rs": "pub(crate) mod middleware;\n",
                "src/http/middleware.rs": "#[cfg(test)]\nmod tests;\n",
                "src/http/middleware/tests.rs": "use crate::app::Service;\n",
                "src/app.rs": "use crate::http::middleware;\npub struct Service;\n",
            }, [["http"], ["app"], ["lib"]])
            self.assertEqual(found, [])

        def test_a_binary_package_and_unit_tests(self):
            found = self.run_on({
                "src/main.rs": "mod cli;\nmod run;\nuse crate::run::go;\n",
                "src/cli.rs": "#[cfg(test)]\nmod tests;\n#[cfg(test)]\nuse crate::run::Helper;\n",
                "src/cli/tests.rs": "use crate::run::Anything;\n",
                "src/run.rs": "use crate::cli;\n#[serde(with = \"crate::main_thing\")]\nstruct S;\n",
            }, [["cli"], ["run"]])
            self.assertEqual(found, [])
            found = self.run_on({
                "src/main.rs": "mod cli;\nuse crate::cli::x;\n",
                "src/cli.rs": "#[serde(deserialize_with = \"crate::helper\")]\nstruct S;\n",
            }, [["cli"], ["main"]])
            self.assertEqual(found, ["pkg/src/cli.rs:1: cli imports crate::helper (in main), a higher layer"])

        def test_unlisted_module_and_globs(self):
            found = self.run_on({
                "src/lib.rs": "mod store;\nmod extra;\n",
                "src/store/mod.rs": "mod rows;\nmod open;\nuse crate::extra::E;\n",
                "src/store/rows.rs": "",
                "src/store/open.rs": "use super::*;\nuse rows::*;\nfn f(_: E) {}\n",
                "src/extra.rs": "",
            }, [["store"], ["lib"]])
            self.assertEqual(found, ["pkg/src/extra.rs: module extra has no layer in scripts/layers.py"])
            found = self.run_on({
                "src/lib.rs": "mod store;\nmod extra;\n",
                "src/store/mod.rs": "mod rows;\nmod open;\nuse crate::extra::E;\n",
                "src/store/rows.rs": "",
                "src/store/open.rs": "use super::*;\nfn f(_: E::Variant) {}\n",
                "src/extra.rs": "",
            }, [["store"], ["extra"], ["lib"]])
            self.assertEqual(found, [
                "pkg/src/store/mod.rs:3: store imports crate::extra::E, a higher layer",
                "pkg/src/store/open.rs:2: store::open imports E::Variant (in extra), a higher layer",
            ])

    class Planted(unittest.TestCase):
        """The workspace's own crates, copied, with one wrong import planted."""

        def check(self, key, plants):
            """Findings of `key` as it is, and with `plants` (file -> line
            added at the top); only new lines are returned for the latter."""
            with tempfile.TemporaryDirectory() as tmp:
                package = os.path.join(tmp, key)
                shutil.copytree(os.path.join(ROOT, key, "src"), os.path.join(package, "src"))
                layers, forbidden = LAYERS[key], FORBIDDEN.get(key, {})
                before = check_package(key, package, layers, forbidden, tmp)
                for rel, line in plants.items():
                    path = os.path.join(package, "src", rel)
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(line + "\n" + text)
                after = check_package(key, package, layers, forbidden, tmp)
            moved = [re.sub(r":(\d+)", lambda m: f":{int(m.group(1)) + 1}", f) for f in before]
            return before, [f for f in after if f not in moved and f not in before]

        def test_clean_crates_are_clean(self):
            for key in ("payments-client", "payments-cli", "examples", "perf"):
                before, _ = self.check(key, {})
                self.assertEqual(before, [], key)

        def test_cli_error_importing_commands(self):
            _, new = self.check("payments-cli", {"error.rs": "use crate::commands::Context;"})
            self.assertIn("payments-cli/src/error.rs:1: error imports crate::commands::Context, "
                          "a higher layer", new)

        def test_client_error_importing_the_client(self):
            _, new = self.check("payments-client", {"error/mod.rs": "use crate::client::Client;"})
            self.assertIn("payments-client/src/error/mod.rs:1: error imports crate::client::Client, "
                          "a higher layer", new)

        def test_client_error_importing_the_client_through_the_root(self):
            _, new = self.check("payments-client", {"error/mismatch.rs": "use crate::{Client, ClientBuilder};"})
            self.assertIn("payments-client/src/error/mismatch.rs:1: error::mismatch imports crate::Client (in client), "
                          "a higher layer", new)

        def test_super_pointing_up(self):
            _, new = self.check("payments-client", {"model/currency.rs": "use super::super::client::Client;"})
            self.assertIn("payments-client/src/model/currency.rs:1: model::currency imports "
                          "super::super::client::Client (in client), a higher layer", new)

        def test_a_circle_within_one_layer(self):
            _, new = self.check("payments-cli", {"exit.rs": "use crate::error::CliError;",
                                                 "error.rs": "use crate::exit::Exit;"})
            self.assertTrue(any(f.startswith("payments-cli: circle error -> exit -> error") for f in new), new)

        def test_mock_domain_naming_axum(self):
            key = "payments-mock-server"
            prefix = "domain"
            self.assertIn("axum", FORBIDDEN[key][prefix])
            src = os.path.join(ROOT, key, "src")
            crate = load_package(src)[0]
            files = sorted(f for f, p in crate.files.items() if p and p[0] == prefix)
            self.assertTrue(files, "no module under domain in the mock")
            rel = os.path.relpath(files[0], src)
            _, new = self.check(key, {rel: "use axum::Router;"})
            self.assertTrue(any(f.startswith(f"{key}/src/{rel}:1: ") and "uses axum (axum::Router)" in f
                                for f in new), new)

    suite = unittest.TestSuite()
    loader = unittest.defaultTestLoader
    suite.addTests(loader.loadTestsFromTestCase(Synthetic))
    suite.addTests(loader.loadTestsFromTestCase(Planted))
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
