#!/usr/bin/env bash
# What embedding the mock costs an application's tests, beside wiremock-rs
# (issue 35): two fresh crates, one with payments-mock-server as a
# dev-dependency (`default-features = false`, a path dependency on this
# checkout), one with wiremock, each with one test that starts the server
# and sends it one request. For each: the crates it compiles (cargo tree,
# normal, build and dev edges, unique names and versions, the crate itself
# counted) and a cold `cargo test --no-run` from an empty target directory
# (the registry already downloaded: `cargo fetch` runs first, untimed).
#
#   scripts/bench-embed.sh            # ROUNDS=2 alternating rounds
#
# Prints one line per build and a summary; the figures go into
# BENCHMARKS.md by hand. Builds in the dev profile, as `cargo test` does.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=${ROUNDS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/payments-embed.XXXXXX")
trap 'rm -rf "$work"' EXIT

make_crate() { # name, dev-dependency line, test body
  mkdir -p "$work/$1/src" "$work/$1/tests"
  cat > "$work/$1/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dev-dependencies]
$2
tokio = { version = "1", features = ["macros", "rt-multi-thread", "net", "io-util"] }

[workspace]
EOF
  echo "" > "$work/$1/src/lib.rs"
  cat > "$work/$1/tests/smoke.rs" <<EOF
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// One request over plain TCP, so neither crate pulls an HTTP client.
async fn get(addr: std::net::SocketAddr, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connects");
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("reads");
    answer
}

#[tokio::test]
async fn one_request() {
$3
}
EOF
}

make_crate embed-mock \
  "payments-mock-server = { path = \"$root/payments-mock-server\", default-features = false }" \
  '    let server = payments_mock_server::MockServer::start().await;
    let answer = get(server.addr(), "/_mock/health").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");'

make_crate embed-wiremock \
  'wiremock = "0.6"' \
  '    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/health"))
        .respond_with(wiremock::ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let answer = get(*server.address(), "/health").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");'

# The same versions as the workspace where the two share a crate.
cp Cargo.lock "$work/embed-mock/Cargo.lock"
cp Cargo.lock "$work/embed-wiremock/Cargo.lock"

count() {
  (cd "$work/$1" && cargo tree -e normal,build,dev --prefix none 2>/dev/null |
    sed 's/ (\*)//; s/ (proc-macro)//' | awk '{print $1" "$2}' | sort -u | wc -l)
}

declare -A times crates
for name in embed-mock embed-wiremock; do
  (cd "$work/$name" && cargo fetch -q)
  crates[$name]=$(count "$name")
done

for round in $(seq 1 "$rounds"); do
  for name in embed-mock embed-wiremock; do
    target="$work/target-$name-$round"
    start=$(date +%s.%N)
    (cd "$work/$name" && CARGO_TARGET_DIR="$target" cargo test --no-run --offline -q 2>/dev/null)
    end=$(date +%s.%N)
    seconds=$(echo "$end - $start" | bc)
    if ! out=$(cd "$work/$name" && CARGO_TARGET_DIR="$target" cargo test --offline 2>&1) ||
      ! grep -q "1 passed" <<<"$out"; then
      echo "the $name test did not pass:" >&2
      echo "$out" | tail -20 >&2
      exit 1
    fi
    rm -rf "$target"
    printf 'round %s  %-15s %3s crates  cold cargo test --no-run %6.1f s\n' \
      "$round" "$name" "${crates[$name]}" "$seconds"
    times[$name]="${times[$name]:-} $seconds"
  done
done

median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mock=$(median "${times[embed-mock]}")
wire=$(median "${times[embed-wiremock]}")
printf 'median: mock %.1f s (%s crates), wiremock %.1f s (%s crates): %.2fx the build, goal <= 1.5x; crates goal <= 110\n' \
  "$mock" "${crates[embed-mock]}" "$wire" "${crates[embed-wiremock]}" "$(echo "$mock / $wire" | bc -l)"
