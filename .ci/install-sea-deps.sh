#!/bin/sh
# Installs what the single-executable build and its qemu end-to-end tests need (see docs/deploy.md and
# scripts/sea.mjs): qemu user-mode emulators, the Debian cross sysroots that stand in for a Raspberry Pi OS
# (bookworm) userland, and the cross binutils used to strip each target's Node binary before injection.
# nats-server (2.9, JetStream included) is for the fleet tests (docs/fleet.md), which start a real server;
# openssl makes the throwaway CA and certificates of the NATS TLS test.
# g++-arm-linux-gnueabihf, cmake and ninja-build compile armv7's llama.cpp from the source node-llama-cpp ships
# (scripts/build/llama-source.mjs: its npm armv7 package carries AArch64 files), once per build cache.
# Idempotent and quiet: does nothing when every package is already installed.
set -eu

PKGS="qemu-user-static
libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross
libc6-armhf-cross libstdc++6-armhf-cross libgcc-s1-armhf-cross libatomic1-armhf-cross
binutils binutils-aarch64-linux-gnu binutils-arm-linux-gnueabihf
g++-arm-linux-gnueabihf cmake ninja-build
xz-utils
nats-server
openssl"

missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "install-sea-deps: need root (or sudo) to install:$missing" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
# shellcheck disable=SC2086
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends $missing; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "install-sea-deps: apt-get failed installing:$missing" >&2
  exit 1
fi
rm -f "$log"
