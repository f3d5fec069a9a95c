// Hand-built run models for the report-format and tuning-advice tests: fixed values, so
// the golden files under tests/golden/ stay byte for byte the same.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::test {

// A two-rank training run through one network.delay window, with checks (one failing,
// with characters every format must escape), a baseline comparison (pass, warn, fail)
// and events from the ranks and the harness.
reports::RunResult golden_run();

// A serve run stopped by its abort: network.loss on the replicas, an `error-rate` metric
// probe that fails 2 s into the window and holds for 3 s, an http probe that passes
// throughout, the abort with its evidence, and the loss window truncated at the revert.
reports::RunResult aborted_run();

// A healthy training run that no tuning-advice rule fires on; the advice tests change one
// thing at a time.
reports::RunResult clean_train_run();

// A four-rank training run through `faults` faults one after another (network.delay,
// node.cpu_throttle and node.kill in turn, every name different), each window followed by
// its recovery, with the records a real run has in every phase, the per-fault figures,
// series, events, checks and a baseline comparison: report.html at its widest.
reports::RunResult many_faults_run(int faults);

// A gated row of record `m` as the gate writes it, with points: basis "runs" (5 figures a
// side, spread ±3 % around each side's centre) or "samples" (21 quantiles of a sample from
// 0.7 to 1.3 times the centre), p50; a record without stats is a single value a side.
reports::MetricComparison gated_row(const reports::MetricRecord& m, const std::string& basis, double change,
                                    reports::GateStatus status);

// Four gated rows, in the gate's order: a repeated value (comm/busbw, 5 runs a side) that
// passed, a single value that WARNs (train/throughput), a latency's p99 on one run's
// samples (21 quantiles 100 ... 300 us against 130 ... 330 us) and a step time's p50 on 5
// runs a side (about 10 against 12 ms), both FAIL.
std::vector<reports::MetricComparison> gated_rows();

// A combined result of `run --repeat 3` (tests/data/train-results.json without series,
// events, processes or probes; run-02 failed on its own) gated run by run against a
// baseline: every record a row of 3 or 5 figures a side, the overall step time regressed.
reports::RunResult combined_run();

// A record with phase = `phase` plus `labels`; stats with p50 = value when `with_stats`.
reports::MetricRecord metric(const std::string& name, const std::string& unit, const std::string& phase, double value,
                             reports::Labels labels = {}, bool with_stats = false);

// tests/golden/NAME compared with `actual` byte for byte. CHAOSBENCH_UPDATE_GOLDEN=1
// rewrites the file instead (then review the diff and commit it):
//   CHAOSBENCH_UPDATE_GOLDEN=1 ./build/bin/chaosbench_reports_tests "[report-formats]"
void check_golden(const std::string& name, const std::string& actual);

}  // namespace chaosbench::test
