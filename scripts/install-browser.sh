#!/usr/bin/env bash
# Installs what the browser tests need, idempotently:
#
#   scripts/install-browser.sh
#
# - Debian's chromium and chromium-driver (/usr/bin/chromium,
#   /usr/bin/chromedriver), through apt-get (as root, or with sudo);
# - axe-core, pinned by payments-mock-server-cli/tests/browser/package-lock.json,
#   through npm ci, into that folder's node_modules/.
#
# The tests (cargo test -p payments-mock-server-cli --test browser) find them
# there; CHROMIUM, CHROMEDRIVER and AXE_CORE_JS point them elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    echo "install-browser.sh: installing Debian's chromium and chromium-driver" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi

browser_tests=payments-mock-server-cli/tests/browser
if [ ! -f "$browser_tests/node_modules/axe-core/axe.min.js" ] ||
    ! diff -q <(node -p "require('./$browser_tests/package-lock.json').packages['node_modules/axe-core'].version") \
        <(node -p "require('./$browser_tests/node_modules/axe-core/package.json').version") >/dev/null 2>&1; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-browser.sh: npm is needed for axe-core; installing Debian's nodejs and npm" >&2
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    fi
    echo "install-browser.sh: installing axe-core (npm ci)" >&2
    npm ci --prefix "$browser_tests" --no-audit --no-fund --loglevel=error >/dev/null
fi

echo "install-browser.sh: $(chromium --version 2>/dev/null | head -n 1); $(chromedriver --version | head -n 1); axe-core $(node -p "require('./$browser_tests/node_modules/axe-core/package.json').version")"
