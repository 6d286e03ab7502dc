#!/bin/sh
# Installs the browser the status-page test drives (test/e2e/serve-page.test.ts): Debian's chromium, used
# headless through playwright-core pointed at /usr/bin/chromium. Nothing downloads a browser build of its own.
# Idempotent and quiet: does nothing when chromium is already installed.
set -eu

dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed" && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "install-browser: need root (or sudo) to install chromium" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "install-browser: apt-get failed installing chromium" >&2
  exit 1
fi
rm -f "$log"
