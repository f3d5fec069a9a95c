#!/usr/bin/env bash
# The Slurm test bed (scripts/testbed.sh up DIR N --slurm) as users and the tests depend on
# it: from the controller namespace, with only what `ctl` sets, sinfo shows N idle nodes,
# srun places tasks on distinct hosts (each its own hostname and address), an allocation
# exposes SLURM_JOB_ID and SLURM_JOB_NODELIST and runs overlapping steps; `down`, with a
# job still running, leaves no namespace, daemon, job step, mount or file behind, and
# neither does an `up` that fails. Skips (with the reason) without root or the packages.
# Cleans up on every exit.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tb="$root/scripts/testbed.sh"
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces)"; exit 0; }
for p in /usr/sbin/sshd /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/srun; do
  [ -x "$p" ] || { echo "skipped: no $p (openssh-server, munge, slurmctld, slurmd, slurm-client; scripts/bootstrap.sh installs them)"; exit 0; }
done
work=$(mktemp -d)
dir="$work/bed"
failed_dir="$work/failed"
trap '"$tb" down "$dir" >/dev/null 2>&1; "$tb" down "$failed_dir" >/dev/null 2>&1; rm -rf "$work"' EXIT
# shellcheck source=tests/e2e/testbed_checks.sh
. "$root/tests/e2e/testbed_checks.sh"
ms() { echo $(($(date +%s%N) / 1000000)); }
ctl() { "$tb" ctl "$dir" "$@"; }

t0=$(ms)
"$tb" up "$dir" 3 --slurm || { echo "FAILED: up"; exit 1; }
echo "up with Slurm: $(($(ms) - t0)) ms"
. "$dir/state"
conf=$(sed -n 's/^SLURM_CONF=//p' "$dir/slurm.env")
check "slurm.env names the test bed's slurm.conf" test -f "$conf"
check "ctl exports it" test "$(ctl sh -c 'echo "$SLURM_CONF"')" = "$conf"
check "sinfo shows 3 idle nodes h0 h1 h2" test "$(ctl sinfo -h -r -N -t idle -o %N | sort | tr '\n' ' ')" = "h0 h1 h2 "
check "srun -N3 hostname runs on h0, h1 and h2" test "$(ctl srun -N3 hostname | sort | tr '\n' ' ')" = "h0 h1 h2 "
out=$(ctl srun -N3 --ntasks-per-node=1 sh -c 'echo "$(hostname) $(ip -4 -o addr show eth0)"')
for i in 0 1 2; do
  addr=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[$i]['address'])" "$dir/inventory.json")
  check "h$i's task sees its own address $addr" grep -q "^h$i .* inet $addr/24 " <<< "$out"
  check "slurm.conf gives h$i NodeAddr $addr" grep -q "^NodeName=h$i NodeAddr=$addr " "$conf"
done
# An allocation, as `cluster.mode: slurm` runs in one: its variables, then a step that
# holds the allocation's CPUs and a second, overlapping one beside it.
out=$(ctl salloc -N2 sh -c 'echo "job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST"
  srun --overlap -N2 --ntasks-per-node=1 sleep 30 & sleep 1
  timeout 10 srun --overlap -N2 --ntasks-per-node=1 hostname | sort | tr "\n" " "; echo
  kill $!' 2>/dev/null)
check "salloc -N2 exposes SLURM_JOB_ID and SLURM_JOB_NODELIST" grep -Eq '^job=[0-9]+ nodes=h\[[0-2][-,][0-2]\]$' <<< "$out"
check "srun --overlap runs beside a step on 2 distinct hosts" grep -Eq '^h[0-2] h[0-2] $' <<< "$(tail -1 <<< "$out")"
check "  (distinct)" test "$(tail -1 <<< "$out" | tr ' ' '\n' | sort -u | grep -c .)" -eq 2

"$tb" up "$dir" 2 --slurm >/dev/null 2>&1
check "a second up into a used directory is refused (exit 3)" test $? -eq 3
# down with a job running: its steps and tasks go too.
setsid "$tb" ctl "$dir" srun -N3 sleep 300 > /dev/null 2>&1 &
for _ in $(seq 50); do
  [ "$(ctl squeue -h -t running -o %i | wc -l)" -ge 1 ] && break
  sleep 0.1
done
sleep 0.5
daemons=$(cat "$dir"/slurm/run/*.pid "$dir"/h*/sshd.pid)
pids=$(for ns in $(ip netns list | awk '{print $1}' | grep "^cbtb-$TB_ID-"); do ip netns pids "$ns"; done)
check "a job runs before down (slurmstepd in each host)" test "$(ps -o comm= -p "$(tr '\n' ',' <<< "$pids" | sed 's/,$//')" | grep -c slurmstepd)" -ge 3
t0=$(ms)
"$tb" down "$dir"
check "down exits 0" test $? -eq 0
echo "down: $(($(ms) - t0)) ms"
check "no namespace of the test bed is left" test "$(ip netns list | grep -c "^cbtb-$TB_ID-")" -eq 0
# shellcheck disable=SC2086
check "no munged, slurmctld, slurmd or sshd of the test bed is left (pid files)" test -z "$(alive $daemons)"
# shellcheck disable=SC2086
check "no slurmstepd, task or other process of its namespaces is left" test -z "$(alive $pids)"
check "no mount of the test bed is left" test "$(grep -cE "cbtb-$TB_ID-|$dir" /proc/self/mountinfo)" -eq 0
check "its directory is gone" test ! -e "$dir"
"$tb" down "$dir"
check "down is idempotent" test $? -eq 0

# A failed up: every step has run, every daemon is up, and the last step fails.
err=$(TESTBED_FAIL_AT=ready "$tb" up "$failed_dir" 2 --slurm 2>&1 >/dev/null)
check "an up whose last step fails exits 3" test $? -eq 3
id=$(sed -n 's/.*up failed; taking it down (cbtb-\([0-9a-f]*\)-\*).*/\1/p' <<< "$err")
check "  and names its test bed" test -n "$id"
check "  and leaves no namespace" test "$(ip netns list | grep -c "^cbtb-$id-")" -eq 0
# shellcheck disable=SC2046
check "  no daemon" test -z "$(alive $(pgrep -f -- "$failed_dir/"))"
check "  no mount" test "$(grep -cE "cbtb-$id-|$failed_dir" /proc/self/mountinfo)" -eq 0
check "  and no directory" test ! -e "$failed_dir"
"$tb" up "$failed_dir" 0 --slurm >/dev/null 2>&1
check "up with N=0 is refused (exit 3) and makes no directory" test $? -eq 3 -a ! -e "$failed_dir"

end_checks
