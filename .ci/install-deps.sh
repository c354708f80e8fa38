#!/usr/bin/env bash
# Installs what the build, the demo and the tests need on a fresh Debian 12 machine, skipping what is
# already there: Debian packages (as root, or through sudo) and the npm packages of package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

# libclang-rt-dev rather than a versioned name: it follows the release's default clang (the fuzz build).
packages=(cmake make g++ pkg-config git libegl-dev libgles-dev libegl-mesa0 libglm-dev nlohmann-json3-dev
          libgtest-dev emscripten chromium firefox-esr wamerican nodejs clang libclang-rt-dev
          webkit2gtk-driver xvfb xauth clang-format)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Some images ship npm inside another nodejs build; Debian's npm is only needed when there is none.
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm ci only when node_modules does not hold exactly the versions of package-lock.json. An optional
# package may be absent: npm skips those built for other platforms (esbuild's), and counting them
# would run npm ci every time.
in_sync='
  const fs = require("fs");
  const want = require("./package-lock.json").packages;
  const have = fs.existsSync("node_modules/.package-lock.json") ? require("./node_modules/.package-lock.json").packages : {};
  const ok = Object.entries(want).every(([k, v]) => k === "" || (have[k] ? have[k].version === v.version : v.optional === true));
  process.exit(ok ? 0 : 1);'
node -e "$in_sync" || npm ci --no-audit --no-fund --loglevel=error
