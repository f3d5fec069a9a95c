#!/usr/bin/env bash
# Blind fault localisation: 20 trials of the built-in trainer on 4-8 namespaced
# nodes, each with one hidden fault drawn with Python's random.Random(SEED) (default 23):
# node.cpu_throttle on a node, network.delay on a link or on all of a node's traffic,
# network.loss on a link, or gpu.slowdown on a rank, starting 12-20 s in for 25 s; then
# `chaosbench diagnose --json` on each results.json with every trace of the fault removed;
# and 10 fault-free runs. Prints a row per run and the totals against the acceptance:
# right component named first in >= 18/20, right class (node / link / nic / gpu) in 20/20,
# median time to localise (first_named_s - the fault's applied_at_s) <= 15 s, and >= 9/10
# clean runs naming nothing. Writes DIR/summary.json and DIR/summary.md; exit 0 when every
# line passes, 1 otherwise, 2 on a usage error. About 35 minutes here (70 s a trial, 50 s a
# clean run; a fault that slows the trainer makes its run longer).
#   perf/harness/blind_trials.sh [--seed 23] [--trials 20] [--clean 10] [--nodes-min 4] [--nodes-max 8]
#                         [--out DIR] [--binary build/bin/chaosbench] [--keep] [--dry-run]
# Needs a build (scripts/build.sh; CHAOSBENCH=path or --binary for another binary) and root
# (namespaces, cgroups); --help for the rest. The trials themselves are perf/blind_trials.py.
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
/usr/bin/python3 perf/blind_trials.py --binary "$cb" "$@"
