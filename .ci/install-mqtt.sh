#!/bin/sh
# Installs the MQTT broker the MQTT tests start (test/e2e/serve-mqtt.test.ts, test/support/mosquitto.ts): Debian's
# mosquitto, run by the tests themselves on a free loopback port with their own config — the service the package
# sets up is not used, and is stopped and disabled where systemd runs it. Idempotent and quiet: does nothing when
# mosquitto is already installed.
set -eu

dpkg-query -W -f='${Status}' mosquitto 2>/dev/null | grep -q "install ok installed" && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "install-mqtt: need root (or sudo) to install mosquitto" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends mosquitto; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "install-mqtt: apt-get failed installing mosquitto" >&2
  exit 1
fi
rm -f "$log"
if [ -d /run/systemd/system ]; then $SUDO systemctl disable --now mosquitto >/dev/null 2>&1 || true; fi
