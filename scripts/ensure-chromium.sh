#!/bin/sh
# The browser tests (account page, passkey sign-in, OAuth consent) drive Debian's Chromium through
# playwright-core; no browser can be downloaded here. Installs it when missing (as root, with apt-get),
# otherwise says what to run. Part of `pnpm test`, so the README's test command works on a fresh machine.
set -eu
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests…"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "The browser tests need Debian's chromium at /usr/bin/chromium: run 'sudo apt-get install -y chromium'." >&2
exit 1
