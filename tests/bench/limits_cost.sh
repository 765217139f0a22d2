#!/usr/bin/env bash
# What a rate limit and an allow list cost portico, in instructions per
# request (callgrind; the budget: at most 150 more than the same location
# without them). The rate is high enough that every request passes: the
# cost measured is the check, not a refusal.
#   PORTICO_BIN=/path/to/portico tests/bench/limits_cost.sh
exec "$(dirname "$0")/location_cost.sh" limits \
  "limit = [\"per_ip\"]
${LIMITS_COST_EXTRA-allow = [\"127.0.0.1\"]
deny = [\"all\"]}" \
  '[limit.per_ip]
key = "$remote_addr"
rate = "1000000r/s"
burst = 100'
