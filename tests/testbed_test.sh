#!/usr/bin/env bash
# The multi-host test bed (scripts/testbed.sh) as users and the tests depend on it: N
# hosts up, each sshd reached from the controller namespace with the test bed's key and
# host keys only, each answering from its own namespace, address and hostname, connections
# multiplexed; a wrong key refused; a second `up` into a used directory refused; `down`
# leaves no namespace, process or file behind. Skips (with the reason) without root or
# sshd. Cleans up on every exit.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/testbed_checks.sh
. "$root/tests/testbed_checks.sh"
testbed_test_start

"$tb" up "$dir" 4 || { echo "FAILED: up"; exit 1; }
. "$dir/state"
for i in 0 1 2 3; do
  addr=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[$i]['address'])" "$dir/inventory.json")
  out=$("$tb" ssh "$dir" "h$i" ip -4 -o addr show dev eth0)
  check "h$i answers from its own address $addr" grep -q "inet $addr/24" <<< "$out"
  peer=$("$tb" ssh "$dir" "h$i" 'echo $SSH_CONNECTION' | awk '{print $3}')
  check "h$i's sshd is the one on $addr" test "$peer" = "$addr"
  check "h$i's hostname is h$i (a UTS namespace of its own)" test "$("$tb" ssh "$dir" "h$i" hostname)" = "h$i"
done
check "connections are multiplexed (a master socket per host)" test "$(find "$dir" -maxdepth 1 -type s -name 'cm-*' | wc -l)" -eq 4
ssh-keygen -q -t ed25519 -N '' -f "$work/stranger"
h1=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[1]['address'])" "$dir/inventory.json")
"$tb" ctl "$dir" ssh -F /dev/null -o BatchMode=yes -o ConnectTimeout=5 -o UserKnownHostsFile="$dir/known_hosts" \
  -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -i "$work/stranger" "root@$h1" true 2>/dev/null
check "a key the hosts do not know is refused (ssh exit 255)" test $? -eq 255
"$tb" up "$dir" 2 >/dev/null 2>&1
check "a second up into a used directory is refused (exit 3)" test $? -eq 3
check "and changes nothing: 6 namespaces" test "$(ip netns list | grep -c "^cbtb-$TB_ID-")" -eq 6

sshd_pids=$(cat "$dir"/h*/sshd.pid)
"$tb" down "$dir"
check "down exits 0" test $? -eq 0
check "no namespace of the test bed is left" test "$(ip netns list | grep -c "^cbtb-$TB_ID-")" -eq 0
# shellcheck disable=SC2086
check "no sshd of the test bed is left" test -z "$(alive $sshd_pids)"
check "its directory is gone" test ! -e "$dir"
"$tb" down "$dir"
check "down is idempotent" test $? -eq 0

end_checks
