#!/usr/bin/env bash
# Installs what the end-to-end tests (tests/e2e) need, and nothing twice:
# Debian's Chromium (apt, as root) and the pinned Node packages of e2e/
# (npm ci from e2e/package-lock.json, redone only when the lock changes; its options,
# no install scripts and quiet, are e2e/.npmrc, a link to the GraphiQL bundle's).
# Browsers are never downloaded by playwright: the tests drive /usr/bin/chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

need_node_major=20

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "e2e_setup: Node.js >= $need_node_major with npm is required" >&2
  exit 1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if (( node_major < need_node_major )); then
  echo "e2e_setup: Node.js >= $need_node_major is required, found $(node --version)" >&2
  exit 1
fi

if ! command -v chromium >/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "e2e_setup: Chromium is missing; as root: apt-get install chromium" >&2
    exit 1
  fi
  echo "e2e_setup: installing Debian's chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# npm ci wipes node_modules first, so a stamp of the lock's hash tells whether
# the installed tree is the locked one.
stamp=e2e/node_modules/.lock-sha256
lock_hash=$(sha256sum e2e/package-lock.json | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$lock_hash" ]]; then
  echo "e2e_setup: npm ci in e2e/"
  (cd e2e && npm ci)
  echo "$lock_hash" >"$stamp"
fi
echo "e2e_setup: ready (node $(node --version), $(chromium --version 2>/dev/null | head -n1))"
