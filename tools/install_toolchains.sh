#!/usr/bin/env bash
# Install the Debian cross toolchains and simulators that targets.md lists.
# As root: apt-get installs what is missing. Otherwise: say exactly what to
# install, and fail when CI=true (a CI run without toolchains proves nothing).
set -euo pipefail
PKGS="gcc gcc-avr avr-libc binutils-avr simavr libsimavr-dev gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"
# minun-compile --format arduino / cmake are tested with these (docs/deploy.md)
PKGS="$PKGS arduino-builder arduino-core-avr cmake"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "toolchains: all present"
    exit 0
fi
if [ "$(id -u)" = "0" ]; then
    echo "toolchains: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
    echo "toolchains: installed"
    exit 0
fi
echo "toolchains: missing$missing"
echo "  install them with: sudo apt-get install -y --no-install-recommends$missing"
if [ "${CI:-}" = "true" ]; then
    exit 1
fi
echo "  (continuing: tests that need them will fail)"
