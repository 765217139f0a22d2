#!/usr/bin/env bash
# testssl.sh (Debian's package) against a local portico TLS listener: no
# finding rated HIGH or CRITICAL. Skipped (exit 77) only where testssl.sh is
# not installed (deploy/install-deps.sh --test installs it).
#
#   tests/tls/testssl_test.sh PORTICO_BINARY [rsa|ecdsa]    (KEEP=1 keeps the folder)
#
# The run is bounded: protocols (-p), cipher categories (-s), server
# defaults and certificate (-S), server preferences (-P) and every
# vulnerability check (-U: Heartbleed, CCS, Ticketbleed, ROBOT,
# renegotiation, CRIME, BREACH, POODLE, TLS_FALLBACK_SCSV, SWEET32, FREAK,
# DROWN, LOGJAM, BEAST, LUCKY13, RC4), with --fast (one openssl call for
# all ciphers rather than one per cipher). Not run: -e (each cipher,
# minutes), -f (forward secrecy: -s and -P show it), -c (client
# simulation), -h (HTTP headers, not TLS). About a minute, most of it
# testssl.sh probing the local openssl at its start.
#
# The certificate is RSA 2048 by default: it enables the most suites
# (ECDHE-RSA and DHE-RSA, so the DH group is judged too). It is made here
# by a CA of the test's own, which testssl.sh is told to trust (--add-ca),
# so the chain is judged like a real one.
set -euo pipefail
portico=$1
key_type=${2:-rsa}
testssl=$(command -v testssl || command -v testssl.sh || true)
if [ -z "$testssl" ]; then
  echo "testssl.sh is not installed (apt-get install testssl.sh): skipped"
  exit 77
fi

dir=$(mktemp -d /tmp/portico-testssl-XXXXXX)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir"

cat > openssl.cnf <<'CNF'
[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
# Where a client would check revocation (never fetched here): without them
# testssl.sh rates the certificate HIGH.
crlDistributionPoints = URI:http://ca.test/crl.pem
authorityInfoAccess = OCSP;URI:http://ocsp.ca.test/
CNF
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256)
if [ "$key_type" = rsa ]; then leaf_key=(-newkey rsa:2048); else leaf_key=("${ec[@]}"); fi
{
  openssl req -config openssl.cnf -extensions ca -x509 "${ec[@]}" -nodes -keyout ca.key \
    -out ca.pem -subj "/CN=portico testssl CA" -days 400
  openssl req -config openssl.cnf -extensions leaf -x509 "${leaf_key[@]}" -nodes \
    -keyout leaf.key -out leaf.pem -subj /CN=a.test \
    -addext "subjectAltName=DNS:a.test,IP:127.0.0.1" -days 365 -CA ca.pem -CAkey ca.key
} >openssl.log 2>&1 || { cat openssl.log; exit 1; }

cat > portico.toml <<TOML
[server]
listen = ["127.0.0.1:0"]
workers = 1
# testssl.sh reads its HTTP probes (service detection, BREACH) to the end of
# the connection: closing after each answer spares a timeout per probe.
keepalive_timeout = "0s"

[tls]
listen = ["127.0.0.1:0"]
certificates = [{ cert = "leaf.pem", key = "leaf.key" }]

[[location]]
prefix = "/"
respond = { status = 200, body = "ok\n" }
TOML
"$portico" -c portico.toml >error.log 2>&1 &
pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*(port \([0-9]*\)) for TLS.*/\1/p' error.log | head -1)
  [ -n "$port" ] && grep -q "worker 0: started" error.log && break
  kill -0 "$pid" 2>/dev/null || { cat error.log; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "portico did not listen for TLS"; cat error.log; exit 1; }

start=$(date +%s)
set +e
"$testssl" --quiet --color 0 --warnings off --nodns min --fast --ip 127.0.0.1 --add-ca ca.pem \
  --connect-timeout 5 --openssl-timeout 5 --jsonfile testssl.json \
  -p -s -S -P -U "a.test:$port" >testssl.out 2>&1
status=$?
set -e
echo "testssl.sh ($key_type certificate) ran $(( $(date +%s) - start )) s, exit $status"

python3 - testssl.json <<'PY'
import json, sys
findings = json.load(open(sys.argv[1]))
if isinstance(findings, dict):  # --jsonfile-pretty's shape, in case
    findings = [f for scan in findings.get("scanResult", []) for f in scan.values() if isinstance(f, list) for f in f]
severities = {}
for f in findings:
    severities[f.get("severity")] = severities.get(f.get("severity"), 0) + 1
print("findings by severity:", dict(sorted(severities.items())))
bad = [f for f in findings if f.get("severity") in ("HIGH", "CRITICAL")]
fatal = [f for f in findings if f.get("severity") == "FATAL" or f.get("id") == "scanProblem"]
by_id = {f.get("id"): f.get("finding", "") for f in findings}
problems = []
for f in bad + fatal:
    problems.append(f"{f.get('severity')} {f.get('id')}: {f.get('finding')}")
# The scan really reached the server: both protocols offered, the old ones not.
for id_, want in (("TLS1_2", "offered"), ("TLS1_3", "offered"), ("TLS1", "not offered"),
                  ("TLS1_1", "not offered"), ("SSLv3", "not offered")):
    if not by_id.get(id_, "").startswith(want):
        problems.append(f"{id_}: expected '{want}', got '{by_id.get(id_)}'")
if len(findings) < 50:
    problems.append(f"only {len(findings)} findings: the scan did not run through")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
result=$?
if [ $result -ne 0 ]; then
  echo "--- testssl.sh output"; cat testssl.out
  echo "--- portico error log"; cat error.log
fi
exit $result
