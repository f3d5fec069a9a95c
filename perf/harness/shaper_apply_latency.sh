#!/usr/bin/env bash
# fault/apply_latency of a netlink-applied network fault: a tc rate rule (htb root, class,
# u32 dst filter) put in effect and taken out through TcShaper (libnl) against the same
# change made by one `tc` command a step, in the same run, on a 2-node virtual cluster.
# Prints one JSON line and a table: p50/p99 of each and the ratio (goal: netlink apply p99
# below 2 ms). Needs root, iproute2 and a build (scripts/build.sh).
#   perf/harness/shaper_apply_latency.sh [REPEAT]
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
perf_need_root "network namespaces, tc"
"$cb" bench shaper --repeat "${1:-200}"
