#!/bin/sh
# The two-instance test (apps/server/test/two-instances.test.ts) and its benchmark put Debian's
# HAProxy in front of two Kitty processes. Installs it when missing (as root, with apt-get),
# otherwise says what to run. Part of `pnpm test`, next to ensure-chromium.sh, so a fresh machine
# gets it. Only the package is installed: the tests start haproxy themselves on free ports.
set -eu
command -v haproxy >/dev/null 2>&1 && exit 0
[ -x /usr/sbin/haproxy ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's haproxy for the two-instance test…"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
  exit 0
fi
echo "The two-instance test needs Debian's haproxy: run 'sudo apt-get install -y haproxy'." >&2
exit 1
