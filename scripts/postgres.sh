#!/usr/bin/env bash
# Sourced by scripts/test.sh: start a throw-away PostgreSQL (Debian's package) in a temporary data
# folder on a unix socket in that folder, export COCOVIZ_TEST_POSTGRES (a connection URL) for the
# tests, and stop the server and remove the folder on exit, whatever the result.
# PostgreSQL refuses to run as root: as root the server runs as the unprivileged user `nobody`.
pg_bin=""
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && pg_bin="$d"; done
if [ -z "$pg_bin" ]; then
  if [ "$(id -u)" = 0 ]; then apt_get="apt-get"; else apt_get="sudo apt-get"; fi
  $apt_get update -qq && DEBIAN_FRONTEND=noninteractive $apt_get install -y -qq postgresql >/dev/null
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && pg_bin="$d"; done
fi
pg_dir="$(mktemp -d /tmp/cocoviz-pg.XXXXXX)"
if [ "$(id -u)" = 0 ]; then
  chown nobody "$pg_dir"
  as_pg() { runuser -u nobody -- "$@"; }
  pg_user=nobody
else
  as_pg() { "$@"; }
  pg_user="$(id -un)"
fi
stop_postgres() {
  as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$pg_dir"
}
trap stop_postgres EXIT
as_pg "$pg_bin/initdb" -D "$pg_dir/data" -U "$pg_user" --auth=trust -E UTF8 >/dev/null
# No TCP port: only the unix socket in the temporary folder, so parallel runs never collide.
as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w \
  -o "-c listen_addresses='' -k $pg_dir -c fsync=off -c full_page_writes=off" start >/dev/null
export COCOVIZ_TEST_POSTGRES="postgresql://$pg_user@/postgres?host=$pg_dir"
