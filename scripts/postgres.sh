#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the mock's tests and benchmarks
# (issue 23): Debian's server, initdb in a directory of its own, a free
# loopback port, password authentication over TCP, run as a non-root user.
#
#   scripts/postgres.sh install        apt-get install postgresql when missing
#   scripts/postgres.sh start DIR      initdb (once) and start; prints the URL
#                                      and writes it to DIR/url
#   scripts/postgres.sh stop DIR       stop it (fast shutdown)
#   scripts/postgres.sh restart DIR    start it again on the same port
#   scripts/postgres.sh url DIR        the URL of a started cluster
#
# The URL is postgres://mock:PASSWORD@127.0.0.1:PORT/postgres; the password
# is random per cluster and lives in DIR/url (mode 600) only.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

bindir() {
  local dir
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir
    return
  fi
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] || { echo "postgres.sh: no PostgreSQL server found (run: scripts/postgres.sh install)" >&2; exit 1; }
  echo "$dir"
}

install() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    return
  fi
  echo "postgres.sh: installing Debian's postgresql" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}

# PostgreSQL refuses to run as root: as root, the cluster belongs to the
# Debian package's `postgres` user (or one made for it).
owner() {
  if [ "$(id -u)" != 0 ]; then
    id -un
    return
  fi
  if ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
  echo postgres
}

run_as() {
  local user=$1
  shift
  if [ "$(id -un)" = "$user" ]; then "$@"; else runuser -u "$user" -- "$@"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  local dir=$1 bin user port password
  bin=$(bindir)
  user=$(owner)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
    port=$(free_port)
    umask 077
    printf '%s\n' "$password" >"$dir/pwfile"
    chown -R "$user" "$dir"
    run_as "$user" "$bin/initdb" -D "$dir/data" -U mock --pwfile="$dir/pwfile" \
      --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
    rm -f "$dir/pwfile"
    printf 'postgres://mock:%s@127.0.0.1:%s/postgres\n' "$password" "$port" >"$dir/url"
    printf '%s\n' "$port" >"$dir/port"
    chown "$user" "$dir/url" "$dir/port"
  fi
  port=$(cat "$dir/port")
  run_as "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
  cat "$dir/url"
}

stop() {
  local dir=$1
  [ -f "$dir/data/PG_VERSION" ] || return 0
  run_as "$(owner)" "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

case "${1:-}" in
  install) install ;;
  start) start "${2:?a directory}" ;;
  restart) start "${2:?a directory}" ;;
  stop) stop "${2:?a directory}" ;;
  url) cat "${2:?a directory}/url" ;;
  *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
