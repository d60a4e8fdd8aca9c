#!/usr/bin/env bash
# ensure-packages.sh PKG... — make sure the Debian packages the build needs are installed.
# As root, missing packages are installed with apt-get (after one `apt-get update`); otherwise
# the exact apt-get line is printed and the script fails, so nothing half-works.
set -euo pipefail
missing=()
for pkg in "$@"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "kiln: missing Debian packages: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "kiln: run as root, or install them first:"
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
