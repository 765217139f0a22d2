#!/usr/bin/env bash
# What one TLS handshake costs each server, in instructions (callgrind), split
# between the server's own code, libssl, libcrypto, libc and the rest: the
# question "is the cost OpenSSL's or ours?" that CPU time cannot answer.
#
#   tests/bench/handshake_cost.sh                  portico, nginx and h2o
#   SERVERS="portico nginx" tests/bench/handshake_cost.sh
#
# Each server runs the bench's static config with its TLS listener (run.sh's
# tls scenario: ECDSA P-256, TLS 1.3, TLS_AES_128_GCM_SHA256, X25519, one
# worker) under callgrind. Two loads, each after the same warm-up:
#   full     ab -n N -c 10 https://.../index.html      (ab never offers a session)
#   resumed  h2load --h1 -n N -c 10 -H 'Connection: close' (each new connection
#            offers the ticket its client got before)
# and an idle run (warm-up only) is subtracted. Environment: SERVERS, PORTICO_BIN,
# HANDSHAKES (N, 500), BENCH_PORT (18680), BENCH_TLS_PORT (18643). Every
# process started here is stopped by its pid on exit.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="python3 $HERE/lib/bench.py"
PORTICO=${PORTICO_BIN:-$ROOT/build/portico}
PORT=${BENCH_PORT:-18680}
TLS_PORT=${BENCH_TLS_PORT:-18643}
N=${HANDSHAKES:-500}
WARM=100
SERVERS=${SERVERS:-portico nginx h2o}
SUITE=TLS_AES_128_GCM_SHA256
GROUP=X25519
URL="https://127.0.0.1:$TLS_PORT/index.html"

for tool in valgrind openssl h2load ab taskset; do
  command -v "$tool" >/dev/null || { echo "handshake_cost.sh: $tool is missing" >&2; exit 2; }
done

RUN=$(mktemp -d /tmp/portico-handshake.XXXXXX)
STARTED=()
alive() { kill -0 "$1" 2>/dev/null; }
stop() { # stop PID: TERM, wait up to 60 s (callgrind writes its output), then KILL
  local pid=$1 i
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  for ((i = 0; i < 600; i++)); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
cleanup() {
  local i
  for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do stop "${STARTED[$i]}"; done
  [ -n "${KEEP_RUN:-}" ] || rm -rf "$RUN"
}
trap cleanup EXIT

wait_port() { # wait_port PORT: until something answers there (60 s: valgrind starts slowly)
  local i
  for ((i = 0; i < 1200; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# The certificate run.sh's tls scenario uses: a P-256 CA and a leaf it signs.
printf 'subjectAltName = DNS:localhost, IP:127.0.0.1\nbasicConstraints = CA:FALSE\n' >"$RUN/leaf.ext"
{
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=handshake cost CA" -keyout "$RUN/ca.key" -out "$RUN/ca.pem" &&
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$RUN/leaf.key" &&
  openssl req -new -key "$RUN/leaf.key" -subj /CN=localhost -out "$RUN/leaf.csr" &&
  openssl x509 -req -in "$RUN/leaf.csr" -CA "$RUN/ca.pem" -CAkey "$RUN/ca.key" -CAcreateserial \
    -days 2 -sha256 -extfile "$RUN/leaf.ext" -out "$RUN/leaf.pem" &&
  cat "$RUN/leaf.pem" "$RUN/leaf.key" >"$RUN/leaf.haproxy.pem"
} >"$RUN/certs.log" 2>&1 || { echo "could not make the certificate:" >&2; cat "$RUN/certs.log" >&2; exit 1; }
# The load tools read this instead of the system's openssl.cnf, as in run.sh.
printf '%s\n' "openssl_conf = c" "[c]" "ssl_conf = s" "[s]" "system_default = t" "[t]" \
  "MinProtocol = TLSv1.3" "Ciphersuites = $SUITE" "Groups = $GROUP" >"$RUN/client.cnf"
CLIENT=(env "OPENSSL_CONF=$RUN/client.cnf" taskset -c 0)
VALUES=(PORT="$PORT" APP_PORT=1 WWW="$ROOT/www" RUN="$RUN" TLS_PORT="$TLS_PORT"
        CERT="$RUN/leaf.pem" KEY="$RUN/leaf.key" CERTKEY="$RUN/leaf.haproxy.pem")
TAGS=static,keepalive,tls

# server_command SERVER: sets CMD, the command line that runs it in the foreground.
server_command() {
  case "$1" in
    portico)
      $PY template "$HERE/conf/portico-static.toml" "$RUN/portico.toml" "$TAGS" "${VALUES[@]}"
      CMD=("$PORTICO" -c "$RUN/portico.toml") ;;
    nginx)
      mkdir -p "$RUN"/nginx-{body,proxy,fastcgi,uwsgi,scgi}
      $PY template "$HERE/conf/nginx.conf" "$RUN/nginx.conf" "$TAGS" "${VALUES[@]}"
      CMD=(nginx -p "$RUN/" -c "$RUN/nginx.conf" -g 'daemon off;') ;;
    h2o)
      $PY template "$HERE/conf/h2o.conf" "$RUN/h2o.conf" "$TAGS" "${VALUES[@]}"
      CMD=(h2o -c "$RUN/h2o.conf") ;;
  esac
}

# measure SERVER NAME [LOAD...]: the server under callgrind, the warm-up
# (resumed handshakes, so both loads start from a server that issued tickets),
# then LOAD; prints the Ir of each object as JSON.
measure() {
  local server=$1 name=$2 dir="$RUN/$1-$2" pid
  shift 2
  mkdir -p "$dir"
  server_command "$server"
  taskset -c 1 valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$dir/callgrind.out.%p" "${CMD[@]}" >"$dir/log" 2>&1 &
  pid=$!
  STARTED+=("$pid")
  wait_port "$TLS_PORT" || { echo "$server did not start" >&2; cat "$dir/log" >&2; return 1; }
  sleep 1
  "${CLIENT[@]}" h2load --h1 -n "$WARM" -c 10 -H "Connection: close" "$URL" >"$dir/warm.out" 2>&1
  if [ $# -gt 0 ]; then "${CLIENT[@]}" "$@" >"$dir/load.out" 2>&1; fi
  stop "$pid"
  $PY callgrind-objects "$dir"/callgrind.out.*
}

# per_handshake SERVER IDLE LOAD: one line, instructions per handshake by object.
per_handshake() {
  python3 - "$1" "$2" "$3" "$N" <<'EOF'
import json, sys
server, idle, load, n = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
groups = {"server": 0, "libssl": 0, "libcrypto": 0, "libc": 0, "other": 0}
for obj, ir in load.items():
    ir -= idle.get(obj, 0)
    name = obj.rsplit("/", 1)[-1]
    if name.startswith("libssl"): groups["libssl"] += ir
    elif name.startswith("libcrypto"): groups["libcrypto"] += ir
    elif name.startswith(("libc.", "libc-")): groups["libc"] += ir
    elif name in ("portico", "nginx", "h2o"): groups["server"] += ir
    else: groups["other"] += ir
total = sum(groups.values())
cells = "  ".join(f"{k} {v / n / 1000:,.0f}k" for k, v in groups.items())
print(f"  {server:<16} {total / n / 1000:>6,.0f}k   {cells}")
EOF
}

echo "instructions per handshake (thousands), $N handshakes per load, minus an idle run:"
for server in $SERVERS; do
  if [ "$server" != portico ] && ! command -v "$server" >/dev/null; then
    echo "  $server: not installed"; continue
  fi
  idle=$(measure "$server" idle) || continue
  if full=$(measure "$server" full ab -n "$N" -c 10 "$URL"); then
    grep -q "^Complete requests: *$N" "$RUN/$server-full/load.out" || echo "  $server: ab did not complete" >&2
    per_handshake "$server full" "$idle" "$full"
  fi
  if resumed=$(measure "$server" resumed h2load --h1 -n "$N" -c 10 -H "Connection: close" "$URL"); then
    grep -q "$N succeeded" "$RUN/$server-resumed/load.out" || echo "  $server: h2load did not complete" >&2
    per_handshake "$server resumed" "$idle" "$resumed"
  fi
done
