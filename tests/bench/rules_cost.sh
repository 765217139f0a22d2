#!/usr/bin/env bash
# What request rules cost portico, in instructions per request (callgrind):
# three proxy_headers rules and a rewrite that does not match (the budget:
# at most 300 instructions more) against the same location without them.
#   PORTICO_BIN=/path/to/portico tests/bench/rules_cost.sh
exec "$(dirname "$0")/location_cost.sh" rules \
  'proxy_headers = { "X-Forwarded-Port" = "$server_port", "Accept-Encoding" = "", "X-Client" = "$remote_addr" }
rewrite = [{ from = "^/old/(.*)$", to = "/new/$1", flag = "break" }]'
