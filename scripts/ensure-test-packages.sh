#!/bin/sh
# Debian packages the tests drive and cannot download elsewhere here, installed when missing (as root,
# with apt-get, in one go), otherwise says what to run. Part of `pnpm test`, so the README's test
# command works on a fresh machine:
#   chromium  the browser tests (account page, passkey sign-in, OAuth consent) through playwright-core
#   haproxy   the two-instance test and its benchmark (they start haproxy themselves on free ports)
#   postgresql-client  pg_dump/pg_restore for the backup round trip through DATABASE_URL (the test server's major)
set -eu
missing=
[ -x /usr/bin/chromium ] || missing="$missing chromium"
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing="$missing haproxy"
command -v pg_dump >/dev/null 2>&1 || missing="$missing postgresql-client"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's$missing for the tests…"
  # shellcheck disable=SC2086 # a list of package names
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  exit 0
fi
echo "The tests need Debian's$missing: run 'sudo apt-get install -y$missing'." >&2
exit 1
