#!/usr/bin/env bash
# Installs Tessera's build and test dependencies from Debian 12's packages.
# Idempotent: when every package is present it returns without touching apt.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config
  libyaml-cpp-dev libyaml-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libsqlite3-dev prometheus-cpp-dev libssl-dev libjemalloc-dev
  # end-to-end tests: tasks written in Python, JSON checks, network namespaces
  python3 jq curl iproute2 procps
  # the Python client (python/): pip install ./python into a venv, offline (setuptools and wheel come with python3-pip)
  python3-pip python3-venv python3-setuptools python3-wheel
  # metrics tests: promtool and a real Prometheus server
  prometheus
  # dashboard tests: headless Chromium driven through chromedriver by Selenium
  chromium chromium-driver python3-selenium
  # container images and tasks: pull, unpack, run; the tests' loopback registry and offline image
  skopeo umoci runc docker-registry busybox-static
  # the etcd state store's tests: a real etcd
  etcd-server
  # the fuzz targets (scripts/fuzz.sh): clang with libFuzzer
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
echo "installing: ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
