#!/usr/bin/env bash
# A test bed of real hosts on one machine, for the multi-host modes: N "hosts", each a
# network namespace on a private bridge running its own Debian sshd (listening only on its
# namespace's address, host key and authorized key made here), and a controller namespace
# from which the system OpenSSH client reaches them (BatchMode, strict host keys,
# connection multiplexing). With --slurm the same hosts form a Slurm cluster of Debian's
# daemons: one munged and one slurmctld in the controller namespace, one slurmd per host
# (NodeName = the host's name, NodeAddr = its address). Each host has a UTS namespace of
# its own, so its processes see hostname h0, h1, ... Developers and the tests use it the
# same way:
#
#   scripts/testbed.sh up DIR [N] [--slurm]
#                                     N hosts (default 4); DIR must not exist: it receives
#                                     the keys, ssh_config, inventory.json and the state
#                                     (with --slurm also slurm.env and slurm/)
#   scripts/testbed.sh ssh DIR HOST CMD...
#                                     runs CMD on host HOST (h0, h1, ...) from the controller
#   scripts/testbed.sh ctl DIR CMD... runs CMD in the controller namespace, with SLURM_CONF
#                                     set when the test bed has Slurm (srun, sbatch, sinfo)
#   scripts/testbed.sh down DIR       stops every daemon and ssh master, deletes the
#                                     namespaces, removes DIR; idempotent
#   scripts/testbed.sh down --id ID   the same for a test bed whose DIR is gone, found by
#                                     its namespaces (cbtb-ID-*); idempotent
#
# Needs root, iproute2 and openssh-server/openssh-client, and for --slurm munge, slurmctld,
# slurmd and slurm-client (scripts/bootstrap.sh installs them all). It touches nothing
# outside the namespaces it creates (their names start with cbtb-<id>-, the addresses are
# a random private /24 seen only inside them) and DIR, apart from /run/sshd, the
# privilege-separation directory sshd requires. Every daemon's ports are in the test bed's
# own namespaces and every file is under DIR, so test beds can run side by side. `up` takes
# the whole test bed down again when any step fails; TESTBED_FAIL_AT=STEP makes step STEP
# (munged, slurmctld, slurmd, ready) fail, for the tests.
set -euo pipefail

usage() {
  sed -n '12,24p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

die() {
  echo "testbed: $*" >&2
  exit 3
}

# The state of a test bed: its id, subnet and host count, as `up` wrote them.
load_state() {
  local dir=$1
  [ -f "$dir/state" ] || die "$dir is not a test bed (no state file)"
  # shellcheck source=/dev/null
  . "$dir/state"
}

ns_of() { echo "cbtb-$TB_ID-$1"; }

# One veth from the bridge namespace to namespace $1, named eth0 there, with address $2.
attach() {
  local ns=$1 addr=$2 br peer
  br=$(ns_of br)
  peer="v$3"
  ip -n "$br" link add "$peer" type veth peer name eth0 netns "$ns"
  ip -n "$br" link set "$peer" master br0 up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
}

# sshd for host $2 ($3: its address), configured by a file in DIR/hN, in a UTS namespace
# of its own named after the host.
start_sshd() {
  local dir=$1 host=$2 addr=$3 hdir
  hdir="$dir/$host"
  mkdir -p "$hdir"
  ssh-keygen -q -t ed25519 -N '' -C "chaosbench-testbed-$host" -f "$hdir/ssh_host_ed25519_key"
  cat > "$hdir/sshd_config" <<EOF
ListenAddress $addr
Port 22
HostKey $hdir/ssh_host_ed25519_key
PidFile $hdir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
X11Forwarding no
PrintMotd no
LogLevel ERROR
EOF
  echo "$addr $(cut -d' ' -f1,2 "$hdir/ssh_host_ed25519_key.pub")" >> "$dir/known_hosts"
  # nsenter --net, not ip netns exec: that would remount /sys for the namespace and hide
  # the cgroup hierarchies, which a host's agent needs for its node's cgroups.
  nsenter --net="/run/netns/$(ns_of "$host")" unshare --uts sh -c 'hostname "$1" && exec /usr/sbin/sshd -f "$2" -E "$3"' \
    sh "$host" "$hdir/sshd_config" "$hdir/sshd.log"
}

# Waits until every host's sshd answers a real login (key, host key and command).
wait_logins() {
  local dir=$1 i deadline=$((SECONDS + 10))
  for ((i = 0; i < TB_HOSTS; i++)); do
    until cmd_ssh "$dir" "h$i" true 2>/dev/null; do
      [ $SECONDS -lt $deadline ] || die "h$i: sshd does not answer (see $dir/h$i/sshd.log)"
      sleep 0.1
    done
  done
}

# TESTBED_FAIL_AT=STEP: step STEP of `up` fails here (the tests check what a failed up leaves).
checkpoint() {
  [ "${TESTBED_FAIL_AT:-}" != "$1" ] || die "step $1 fails (TESTBED_FAIL_AT)"
}

# Slurm's files, all under DIR/slurm: slurm.conf (the hosts' CPU layout is this machine's,
# from slurmd -C), an empty plugstack.conf, munged's key and socket, the daemons' state,
# spool, pid and log files.
write_slurm_conf() {
  local dir=$1 net=$2 s="$1/slurm" layout i
  mkdir -p "$s/state" "$s/spool" "$s/run" "$s/log"
  mkdir -m 755 "$s/munge"
  : > "$s/plugstack.conf"
  layout=$(/usr/sbin/slurmd -C | sed -n '1s/.*\(CPUs=.*ThreadsPerCore=[0-9]*\).*/\1/p')
  [ -n "$layout" ] || die "slurmd -C printed no CPU layout"
  cat > "$s/slurm.conf" <<EOF
# The test bed's Slurm cluster (scripts/testbed.sh); clients: SLURM_CONF=$s/slurm.conf
ClusterName=cbtb$TB_ID
SlurmctldHost=ctl($net.254)
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$s/munge/munge.socket.2
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$s/state
SlurmctldPidFile=$s/run/slurmctld.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdSpoolDir=$s/spool/%n
SlurmdPidFile=$s/run/slurmd.%n.pid
SlurmdLogFile=$s/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
PlugStackConfig=$s/plugstack.conf
ReturnToService=2
SlurmdTimeout=10
MessageTimeout=5
KillWait=5
NodeName=DEFAULT $layout State=UNKNOWN
EOF
  for ((i = 0; i < TB_HOSTS; i++)); do
    echo "NodeName=h$i NodeAddr=$net.$((i + 1)) NodeHostname=h$i" >> "$s/slurm.conf"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >> "$s/slurm.conf"
  printf '%s\nSLURM_CONF=%s\n' "# The test bed's Slurm, for programs in the controller namespace (ctl exports it)." \
    "$s/slurm.conf" > "$dir/slurm.env"
}

# munged (a random key, its socket under DIR/slurm/munge) and slurmctld, in the controller
# namespace; slurmctld in a UTS namespace of its own named ctl, the SlurmctldHost name.
# Both daemonize and write their pid files under DIR/slurm. munged refuses a socket that
# not every user can reach (DIR is 0700, and so may be the directories above it) unless
# --force: every client here is root (the daemons, and srun from `ctl`).
start_slurm_controller() {
  local dir=$1 s="$1/slurm" m="$1/slurm/munge" ctl
  ctl=/run/netns/$(ns_of ctl)
  head -c 1024 /dev/urandom > "$m/munge.key"
  chmod 400 "$m/munge.key"
  nsenter --net="$ctl" /usr/sbin/munged --force --socket="$m/munge.socket.2" --key-file="$m/munge.key" \
    --pid-file="$s/run/munged.pid" --log-file="$s/log/munged.log" --seed-file="$m/munged.seed" \
    < /dev/null >> "$s/log/munged.out" 2>&1 || die "munged did not start (see $s/log/munged.*)"
  checkpoint munged
  nsenter --net="$ctl" unshare --uts sh -c 'hostname ctl && exec /usr/sbin/slurmctld -f "$1"' sh "$s/slurm.conf" \
    < /dev/null >> "$s/log/slurmctld.out" 2>&1 || die "slurmctld did not start (see $s/log/slurmctld.*)"
  checkpoint slurmctld
}

# slurmd for host $2, in the host's network namespace only (ip netns exec would remount
# /sys, where slurmd needs the machine's cgroups) and a UTS namespace named after the host.
start_slurmd() {
  local dir=$1 host=$2 s="$1/slurm"
  mkdir -p "$s/spool/$host"
  nsenter --net="/run/netns/$(ns_of "$host")" unshare --uts \
    sh -c 'hostname "$1" && exec /usr/sbin/slurmd -N "$1" -f "$2"' sh "$host" "$s/slurm.conf" \
    < /dev/null >> "$s/log/slurmd.$host.out" 2>&1 || die "$host: slurmd did not start (see $s/log/slurmd.$host.*)"
}

# Waits until slurmctld reports every host's slurmd idle and responding.
wait_slurm() {
  local dir=$1 deadline=$((SECONDS + 20)) idle=0
  until idle=$(cmd_ctl "$dir" sinfo -h -r -N -t idle -o %N 2>/dev/null | wc -l) && [ "$idle" -eq "$TB_HOSTS" ]; do
    [ $SECONDS -lt $deadline ] || die "$idle of $TB_HOSTS slurmd idle after 20 s (see $dir/slurm/log)"
    sleep 0.1
  done
}

cmd_up() {
  local dir=$1 hosts=4 slurm=0 i a
  shift
  for a in "$@"; do
    if [ "$a" = --slurm ]; then slurm=1; else hosts=$a; fi
  done
  [[ "$hosts" =~ ^[0-9]+$ ]] && [ "$hosts" -ge 1 ] && [ "$hosts" -le 64 ] || die "N must be 1..64, not \"$hosts\""
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, sshd on their addresses)"
  [ -x /usr/sbin/sshd ] || die "no /usr/sbin/sshd: install openssh-server (scripts/bootstrap.sh)"
  command -v ssh >/dev/null || die "no ssh: install openssh-client (scripts/bootstrap.sh)"
  if [ "$slurm" -eq 1 ]; then
    for a in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/srun; do
      [ -x "$a" ] || die "no $a: install munge, slurmctld, slurmd and slurm-client (scripts/bootstrap.sh)"
    done
  fi
  [ ! -e "$dir" ] || die "$dir exists: a test bed gets a directory of its own"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  chmod 700 "$dir"
  TB_ID=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  local net="10.$((200 + 0x${TB_ID:0:2} % 50)).$((0x${TB_ID:2:2}))"
  TB_HOSTS=$hosts
  printf 'TB_ID=%s\nTB_NET=%s\nTB_HOSTS=%s\nTB_DIR=%s\nTB_SLURM=%s\n' "$TB_ID" "$net" "$hosts" "$dir" "$slurm" > "$dir/state"
  TB_UP_DIR=$dir
  trap 'trap - ERR EXIT; echo "testbed: up failed; taking it down (cbtb-$TB_ID-*)" >&2; cmd_down "$TB_UP_DIR" >/dev/null 2>&1 || true' ERR EXIT
  mkdir -p /run/sshd && chmod 755 /run/sshd
  ip netns add "$(ns_of br)"
  ip -n "$(ns_of br)" link add br0 type bridge
  ip -n "$(ns_of br)" link set br0 up
  ip netns add "$(ns_of ctl)"
  attach "$(ns_of ctl)" "$net.254" ctl
  ssh-keygen -q -t ed25519 -N '' -C chaosbench-testbed -f "$dir/id_ed25519"
  cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
  : > "$dir/known_hosts"
  {
    echo "# The test bed's hosts, for ssh -F (run in the controller namespace)."
    for ((i = 0; i < hosts; i++)); do
      printf 'Host h%d\n  HostName %s.%d\n' "$i" "$net" $((i + 1))
    done
    printf 'Host *\n  User root\n  IdentityFile %s/id_ed25519\n  IdentitiesOnly yes\n' "$dir"
    printf '  UserKnownHostsFile %s/known_hosts\n  StrictHostKeyChecking yes\n  BatchMode yes\n' "$dir"
    printf '  ConnectTimeout 5\n  ControlMaster auto\n  ControlPath %s/cm-%%C\n  ControlPersist 60\n' "$dir"
  } > "$dir/ssh_config"
  local inventory="[" sep=""
  for ((i = 0; i < hosts; i++)); do
    ip netns add "$(ns_of "h$i")"
    attach "$(ns_of "h$i")" "$net.$((i + 1))" "h$i"
    start_sshd "$dir" "h$i" "$net.$((i + 1))"
    inventory+="$sep{\"name\": \"h$i\", \"address\": \"$net.$((i + 1))\", \"user\": \"root\", \"port\": 22, \"interfaces\": [\"eth0\"]}"
    sep=", "
  done
  echo "$inventory]" > "$dir/inventory.json"
  if [ "$slurm" -eq 1 ]; then
    write_slurm_conf "$dir" "$net"
    start_slurm_controller "$dir"
    for ((i = 0; i < hosts; i++)); do start_slurmd "$dir" "h$i"; done
    checkpoint slurmd
  fi
  wait_logins "$dir"
  [ "$slurm" -eq 0 ] || wait_slurm "$dir"
  checkpoint ready
  trap - ERR EXIT
  echo "testbed: $hosts hosts up in $dir (controller $net.254, hosts $net.1-$net.$hosts)$([ "$slurm" -eq 0 ] || echo "; Slurm: $dir/slurm.env")"
}

cmd_ctl() {
  local dir=$1
  shift
  load_state "$dir"
  if [ "${TB_SLURM:-0}" -eq 1 ]; then
    set -a
    # shellcheck source=/dev/null
    . "$dir/slurm.env"
    set +a
  fi
  ip netns exec "$(ns_of ctl)" "$@"
}

cmd_ssh() {
  local dir=$1 host=$2
  shift 2
  load_state "$dir"
  ip netns exec "$(ns_of ctl)" ssh -F "$dir/ssh_config" "$host" -- "$@"
}

# Whether pid $1 is alive and one of this test bed's daemons (its command line names DIR
# $2), so that a stale pid file never kills a stranger. A zombie is not alive: the daemons'
# parent is pid 1, which may not reap here.
tb_daemon() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -qF "$2/"
}

# Thaws every freezer cgroup above and at the one pid $1 is in (v1 freezer.state, v2
# cgroup.freeze, where the v2 hierarchy is mounted), so that SIGKILL reaches it: a frozen
# process does not die until thawed, and a run's node.pause whose agent died mid-fault
# leaves its rank frozen. Only called for processes inside the test bed's namespaces.
thaw_of() {
  local line cg part path base
  while IFS= read -r line; do
    case "$line" in
      *:freezer:*) cg=${line#*:freezer:} base=/sys/fs/cgroup/freezer ;;
      0::*) cg=${line#0::} base=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts) ;;
      *) continue ;;
    esac
    [ -n "$base" ] || continue
    path=$base
    for part in ${cg//\// }; do
      path+="/$part"
      [ -w "$path/freezer.state" ] && echo THAWED > "$path/freezer.state" 2>/dev/null
      [ -w "$path/cgroup.freeze" ] && echo 0 > "$path/cgroup.freeze" 2>/dev/null
    done
  done < <(cat "/proc/$1/cgroup" 2>/dev/null)
  return 0
}

# Kills every process in the namespaces cbtb-$TB_ID-* (thawing it first) and the daemons
# among pids $@ (by their pid files, wherever they run), until none is left; then deletes
# the namespaces. Fails, keeping them, when a process outlives SIGKILL for 5 s.
kill_and_delete_namespaces() {
  local ns pid left deadline=$((SECONDS + 5))
  while :; do
    left=""
    for ns in $(ip netns list | awk '{print $1}' | grep "^cbtb-$TB_ID-" || true); do
      for pid in $(ip netns pids "$ns" 2>/dev/null); do
        thaw_of "$pid"
        kill -KILL "$pid" 2>/dev/null || true
        left+=" $pid"
      done
    done
    for pid in "$@"; do [ -z "$TB_DOWN_DIR" ] || ! tb_daemon "$pid" "$TB_DOWN_DIR" || left+=" $pid"; done
    [ -n "$left" ] || break
    [ $SECONDS -lt $deadline ] || die "processes$left outlive SIGKILL; cbtb-$TB_ID-* kept (run down again)"
    sleep 0.05
  done
  for ns in $(ip netns list | awk '{print $1}' | grep "^cbtb-$TB_ID-" || true); do
    ip netns delete "$ns"
  done
}

cmd_down() {
  local dir=$1 pid f daemons=()
  [ -d "$dir" ] || return 0
  load_state "$dir"
  TB_DOWN_DIR=$dir
  # The ssh masters first (they live in the controller namespace), then the daemons by
  # their pid files (slurmd before it starts more), then every process left in the test
  # bed's namespaces (job steps, tasks, whatever sshd started) until none is, then the
  # namespaces. A process that outlives SIGKILL keeps DIR, so that down can run again.
  for f in "$dir"/cm-*; do
    [ -S "$f" ] && ip netns exec "$(ns_of ctl)" ssh -F "$dir/ssh_config" -O exit -o ControlPath="$f" x 2>/dev/null || true
  done
  for f in "$dir"/slurm/run/slurmd.*.pid "$dir"/slurm/run/slurmctld.pid "$dir"/slurm/run/munged.pid "$dir"/h*/sshd.pid; do
    [ -f "$f" ] && pid=$(cat "$f") && tb_daemon "$pid" "$dir" || continue
    kill -KILL "$pid" 2>/dev/null || true
    daemons+=("$pid")
  done
  kill_and_delete_namespaces "${daemons[@]}"
  rm -rf "$dir"
}

# down --id ID: the same for a test bed whose directory is gone, found by its namespaces'
# prefix (cbtb-ID-); its daemons all run in those namespaces.
cmd_down_id() {
  [[ "$1" =~ ^[0-9a-f]{6}$ ]] || die "--id: expected the 6 hex digits of a test bed's id, not \"$1\""
  TB_ID=$1
  TB_DOWN_DIR=""
  kill_and_delete_namespaces
}

[ $# -ge 2 ] || usage
command=$1
shift
case "$command" in
  up) [ $# -le 3 ] || usage; cmd_up "$@" ;;
  down)
    if [ "$1" = --id ]; then [ $# -eq 2 ] || usage; cmd_down_id "$2"; else [ $# -eq 1 ] || usage; cmd_down "$1"; fi ;;
  ssh) [ $# -ge 3 ] || usage; cmd_ssh "$@" ;;
  ctl) [ $# -ge 2 ] || usage; cmd_ctl "$@" ;;
  *) usage ;;
esac
