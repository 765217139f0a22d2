#!/usr/bin/env bash
# Installs what portico needs to build and run, from Debian's packages only;
# with --test also what the test suite uses. Idempotent and quiet: does
# nothing when everything is already there.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libuv1-dev          # the event loop, one per worker
  node-llhttp         # the HTTP/1.x parser (C sources, built as a static library)
  libtomlplusplus-dev # the config file
  libspdlog-dev       # error and access logs
  libre2-dev          # regex locations, linear time
  libxxhash-dev       # XXH3: the keys of the limits' shared tables
  nlohmann-json3-dev  # `portico stats` reads /stats; JSON access log tests parse lines
  libssl-dev          # TLS termination: OpenSSL 3 (TLS 1.2/1.3, tickets, ALPN, SNI)
  libnghttp2-dev      # HTTP/2: framing, HPACK, flow control and the flood limits (rapid reset, CONTINUATION)
  libsystemd-dev      # sd_notify: the systemd unit is Type=notify (READY, RELOADING, STOPPING)
  zlib1g-dev          # compress: gzip, the coding every client has
  libbrotli-dev       # compress: br, the best ratio on text (browsers over HTTPS); tests decode with it too
  libzstd-dev         # compress: zstd, near brotli's ratio at a fraction of the CPU (Chrome, Firefox)
  libcrypt-dev        # basic auth: libxcrypt checks htpasswd's bcrypt and SHA-crypt hashes
  catch2              # unit and integration tests (v2)
  curl                # handy checks by hand
)
# The demo app needs Node.js; any recent one on the PATH will do.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
if [ "${1:-}" = "--test" ]; then
  packages+=(prometheus)  # promtool checks /metrics in the counters tests
  packages+=(chromium)    # the dashboard's browser test (tests/browser), headless
  command -v npm >/dev/null 2>&1 || packages+=(npm)  # ...and its puppeteer-core
  packages+=(clang-14 libfuzzer-14-dev)  # tests/fuzz: libFuzzer targets with ASan + UBSan; test.sh --full's clang build
  packages+=(clang-format-14)  # deploy/check-format.sh: the format of changed lines (test.sh --full)
  packages+=(openssl nghttp2-client testssl.sh)  # tests/tls: certificates at test time, s_client, h2load, testssl.sh
  packages+=(python3-yaml)  # tests/deploy read the Compose and Kubernetes YAML (CI has no Docker daemon or cluster)
  packages+=(wrk slowhttptest)  # tests/soak: keep-alive load and slowloris heads
  packages+=(python3-h2 python3-brotli python3-zstandard)  # tests/soak: HTTP/2 clients, decoding br and zstd
  packages+=(nginx)  # tests/diff: portico's answers compared with nginx's, same config by scenario
  packages+=(pebble)  # tests/acme: Let's Encrypt's ACME test CA, started on loopback (-strict)
  packages+=(apache2-utils)  # htpasswd: the basic auth tests make their user files with it
  packages+=(iproute2)  # ss: a server socket's send buffer (static_send_buffer_test)
  # The package tests (tests/package/): cpack -G DEB reads the libraries'
  # package names with dpkg-shlibdeps (dpkg-dev) after `file` finds the
  # binaries; systemd-analyze verifies the unit; logrotate runs the shipped
  # rotation on the installed package.
  packages+=(dpkg-dev file systemd logrotate)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  sudo_if_needed apt-get update -qq
  sudo_if_needed apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The browser test's npm packages, exactly as locked; again only when the
# lock file changed since the last install.
if [ "${1:-}" = "--test" ]; then
  browser=tests/browser
  cd "$(dirname "$0")/.."
  if ! cmp -s "$browser/package-lock.json" "$browser/node_modules/.installed-lock.json"; then
    echo "installing the browser test's npm packages" >&2
    (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$browser/package-lock.json" "$browser/node_modules/.installed-lock.json"
  fi
fi
