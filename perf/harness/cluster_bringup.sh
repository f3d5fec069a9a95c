#!/usr/bin/env bash
# Bring-up plus tear-down of a 16-node virtual cluster (node namespaces, a bridge in a
# namespace of its own, veth pairs, addresses, links up): chaosbench through libnl
# against the same topology built with one `ip` command per step, as scripts do it, in
# the same run. Prints both medians and the speed-up (goal >= 5x). Root; iproute2.
#   perf/harness/cluster_bringup.sh [NODES] [REPEAT]
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
perf_need_root "network namespaces"
nodes=${1:-16}
repeat=${2:-7}
prefix="cbbench-$$"
cleanup() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$prefix-" || true); do ip netns del "$ns"; done
}
perf_on_exit cleanup

ip_once() {
  ip netns add "$prefix-br"
  ip -n "$prefix-br" link add br0 type bridge
  ip -n "$prefix-br" link set br0 up
  ip -n "$prefix-br" link set lo up
  for n in $(seq 0 $((nodes - 1))); do
    ip netns add "$prefix-n$n"
    ip -n "$prefix-br" link add "n$n" type veth peer name eth0 netns "$prefix-n$n"
    ip -n "$prefix-br" link set "n$n" master br0 up
    ip -n "$prefix-n$n" addr add "10.250.0.$((n + 1))/24" dev eth0
    ip -n "$prefix-n$n" link set eth0 up
    ip -n "$prefix-n$n" link set lo up
  done
  for n in $(seq 0 $((nodes - 1))); do ip netns del "$prefix-n$n"; done
  ip netns del "$prefix-br"
}

ip_ms=()
for i in $(seq 1 "$repeat"); do
  t0=$(date +%s%N); ip_once; t1=$(date +%s%N)
  ip_ms+=("$(( (t1 - t0) / 1000 ))")
done
libnl=$("$cb" bench cluster --nodes "$nodes" --repeat "$repeat")
python3 - "$libnl" "${ip_ms[*]}" "$nodes" <<'PY'
import json, statistics, sys
lib = json.loads(sys.argv[1])["median_ms"]
ip = statistics.median(int(x) / 1000 for x in sys.argv[2].split())
print(f"{sys.argv[3]} nodes, bring-up + tear-down: chaosbench (libnl) {lib:.1f} ms, ip commands {ip:.1f} ms, "
      f"speed-up {ip / lib:.1f}x (goal >= 5x)")
PY
