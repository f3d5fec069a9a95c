#!/usr/bin/env bash
# A test bed of real hosts on one machine, for the multi-host modes: N "hosts", each a
# network namespace on a private bridge running its own Debian sshd (listening only on its
# namespace's address, host key and authorized key made here), and a controller namespace
# from which the system OpenSSH client reaches them (BatchMode, strict host keys,
# connection multiplexing). Developers and the tests use it the same way:
#
#   scripts/testbed.sh up DIR [N]     N hosts (default 4); DIR must not exist: it receives
#                                     the keys, ssh_config, inventory.json and the state
#   scripts/testbed.sh ssh DIR HOST CMD...
#                                     runs CMD on host HOST (h0, h1, ...) from the controller
#   scripts/testbed.sh ctl DIR CMD... runs CMD in the controller namespace
#   scripts/testbed.sh down DIR       stops every sshd and ssh master, deletes the
#                                     namespaces, removes DIR; idempotent
#
# Needs root, iproute2 and openssh-server/openssh-client (scripts/bootstrap.sh installs
# them). It touches nothing outside the namespaces it creates (their names start with
# cbtb-<id>-, the addresses are a random private /24 seen only inside them) and DIR, apart
# from /run/sshd, the privilege-separation directory sshd requires. `up` takes the whole
# test bed down again when any step fails.
set -euo pipefail

usage() {
  sed -n '8,14p' "$0" | sed 's/^# \{0,1\}//' >&2
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
  ip netns exec "$(ns_of "$host")" unshare --uts sh -c 'hostname "$1" && exec /usr/sbin/sshd -f "$2" -E "$3"' \
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

cmd_up() {
  local dir=$1 hosts=${2:-4} i
  [[ "$hosts" =~ ^[0-9]+$ ]] && [ "$hosts" -ge 1 ] && [ "$hosts" -le 64 ] || die "N must be 1..64, not \"$hosts\""
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, sshd on their addresses)"
  [ -x /usr/sbin/sshd ] || die "no /usr/sbin/sshd: install openssh-server (scripts/bootstrap.sh)"
  command -v ssh >/dev/null || die "no ssh: install openssh-client (scripts/bootstrap.sh)"
  [ ! -e "$dir" ] || die "$dir exists: a test bed gets a directory of its own"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  chmod 700 "$dir"
  TB_ID=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  local net="10.$((200 + 0x${TB_ID:0:2} % 50)).$((0x${TB_ID:2:2}))"
  TB_HOSTS=$hosts
  printf 'TB_ID=%s\nTB_NET=%s\nTB_HOSTS=%s\nTB_DIR=%s\n' "$TB_ID" "$net" "$hosts" "$dir" > "$dir/state"
  TB_UP_DIR=$dir
  trap 'trap - ERR EXIT; echo "testbed: up failed; taking it down" >&2; cmd_down "$TB_UP_DIR" >/dev/null 2>&1 || true' ERR EXIT
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
  wait_logins "$dir"
  trap - ERR EXIT
  echo "testbed: $hosts hosts up in $dir (controller $net.254, hosts $net.1-$net.$hosts)"
}

cmd_ctl() {
  local dir=$1
  shift
  load_state "$dir"
  ip netns exec "$(ns_of ctl)" "$@"
}

cmd_ssh() {
  local dir=$1 host=$2
  shift 2
  load_state "$dir"
  ip netns exec "$(ns_of ctl)" ssh -F "$dir/ssh_config" "$host" -- "$@"
}

cmd_down() {
  local dir=$1 ns pid f
  [ -d "$dir" ] || return 0
  load_state "$dir"
  # The ssh masters first (they live in the controller namespace), then every process in
  # the test bed's namespaces (sshd and whatever it started), then the namespaces.
  for f in "$dir"/cm-*; do
    [ -S "$f" ] && ip netns exec "$(ns_of ctl)" ssh -F "$dir/ssh_config" -O exit -o ControlPath="$f" x 2>/dev/null || true
  done
  for ns in $(ip netns list | awk '{print $1}' | grep "^cbtb-$TB_ID-" || true); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  for f in "$dir"/h*/sshd.pid; do
    [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null || true
  done
  for ns in $(ip netns list | awk '{print $1}' | grep "^cbtb-$TB_ID-" || true); do
    ip netns delete "$ns"
  done
  rm -rf "$dir"
}

[ $# -ge 2 ] || usage
command=$1
shift
case "$command" in
  up) [ $# -le 2 ] || usage; cmd_up "$@" ;;
  down) [ $# -eq 1 ] || usage; cmd_down "$1" ;;
  ssh) [ $# -ge 3 ] || usage; cmd_ssh "$@" ;;
  ctl) [ $# -ge 2 ] || usage; cmd_ctl "$@" ;;
  *) usage ;;
esac
