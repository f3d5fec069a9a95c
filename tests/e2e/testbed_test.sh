#!/usr/bin/env bash
# The multi-host test bed (scripts/testbed.sh) as users and the tests depend on it: N
# hosts up, each sshd reached from the controller namespace with the test bed's key and
# host keys only, each answering from its own namespace, address and hostname, connections
# multiplexed; a wrong key refused; a second `up` into a used directory refused; `down`
# leaves no namespace, process or file behind, a frozen process in a host included, and
# `down --id` finds a test bed whose directory is gone; a test killed outright (SIGKILL)
# leaves nothing either. Skips (with the reason) without root or sshd. Cleans up on every
# exit.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/e2e/testbed_checks.sh
. "$root/tests/e2e/testbed_checks.sh"
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

# A process frozen in a freezer cgroup (as a dead agent's paused rank is) dies with down,
# and down --id takes down a test bed whose directory is gone.
"$tb" up "$dir" 2 >/dev/null || { echo "FAILED: up"; exit 1; }
. "$dir/state"
"$tb" ssh "$dir" h1 'sleep 300 </dev/null >/dev/null 2>&1 &'
sleeper=$(for p in $(ip netns pids "cbtb-$TB_ID-h1"); do grep -qa '^sleep' "/proc/$p/cmdline" && echo "$p"; done | head -1)
v2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
if [ -d /sys/fs/cgroup/freezer ]; then
  freezer=/sys/fs/cgroup/freezer/cbtb-test-$TB_ID
  mkdir -p "$freezer/inner" && echo "$sleeper" > "$freezer/inner/cgroup.procs" && echo FROZEN > "$freezer/freezer.state"
  check "a process in h1 is frozen (from its parent cgroup, v1)" grep -q FROZEN "$freezer/inner/freezer.state"
else
  freezer=$v2/cbtb-test-$TB_ID
  mkdir -p "$freezer/inner" && echo "$sleeper" > "$freezer/inner/cgroup.procs" && echo 1 > "$freezer/cgroup.freeze"
  check "a process in h1 is frozen (from its parent cgroup, v2)" grep -q "frozen 1" "$freezer/inner/cgroup.events"
fi
mv "$dir" "$work/moved"
"$tb" down --id "$TB_ID"
check "down --id exits 0" test $? -eq 0
check "down --id: no namespace of the test bed is left" test "$(ip netns list | grep -c "^cbtb-$TB_ID-")" -eq 0
check "down --id: the frozen process is gone" test -z "$(alive $sleeper)"
rmdir "$freezer/inner" "$freezer" 2>/dev/null
"$tb" down "$work/moved" >/dev/null

# A test killed outright: its guardian takes its test bed down and removes its directory.
cat > "$work/killed.sh" <<SH
root=$root
. "\$root/tests/e2e/testbed_checks.sh"
testbed_test_start
echo "\$work" > "$work/killed.work"
"\$tb" up "\$dir" 2 >/dev/null && cp "\$dir/state" "$work/killed.state"
exec sleep 300
SH
bash "$work/killed.sh" </dev/null >/dev/null 2>&1 &
victim=$!
for _ in $(seq 200); do [ -f "$work/killed.state" ] && break; sleep 0.1; done
check "the test bed of the test to be killed came up" test -f "$work/killed.state"
killed_id=$(sed -n 's/^TB_ID=//p' "$work/killed.state")
kill -KILL "$victim"
wait "$victim" 2>/dev/null
for _ in $(seq 100); do [ "$(ip netns list | grep -c "^cbtb-$killed_id-")" -eq 0 ] && break; sleep 0.1; done
check "SIGKILLed test: its guardian deleted its namespaces" test "$(ip netns list | grep -c "^cbtb-$killed_id-")" -eq 0
for _ in $(seq 30); do [ -e "$(cat "$work/killed.work")" ] || break; sleep 0.1; done
check "SIGKILLed test: its directory is gone" test ! -e "$(cat "$work/killed.work")"

end_checks
