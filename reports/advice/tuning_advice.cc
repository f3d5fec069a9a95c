#include "reports/advice/tuning_advice.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <string_view>

#include "common/values/units.h"
#include "reports/advice/advice_lookup.h"
#include "reports/advice/advice_rule.h"
#include "reports/advice/parallel_advice.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

using Rule = AdviceRule;
using Context = AdviceRule::Context;
using Finding = AdviceRule::Finding;

bool is_train(const Context& c) { return c.scenario.workload_kind == "train"; }

// --- rules -----------------------------------------------------------------------------

// Exposed (non-overlapped) communication as a share of the step, both medians.
struct CommShare {
  std::string phase;
  double comm_ms = 0, step_ms = 0, share = 0;
};

std::optional<CommShare> comm_share(const RunResult& run) {
  std::string phase = tuning_phase(run, "train/step_time");
  const auto* step = find_record(run, "train/step_time", phase);
  const auto* comm = find_record(run, "train/comm_time", phase);
  if (!step || !comm || !(p50(*step) > 0)) return std::nullopt;
  return CommShare{phase, p50(*comm), p50(*step), p50(*comm) / p50(*step)};
}

std::optional<Finding> exposed_communication(const Context& c, const Rule& rule) {
  auto s = comm_share(c.run);
  if (!s || s->share <= rule.threshold) return std::nullopt;
  Finding f;
  f.evidence = fmt::format("exposed communication is {} of step time in {} (train/comm_time p50 {} of train/step_time p50 {})",
                           pct(s->share), s->phase, format_value(s->comm_ms, "ms"), format_value(s->step_ms, "ms"));
  if (const auto* overlap = find_record(c.run, "train/overlap", s->phase))
    f.evidence += fmt::format("; train/overlap {}", format_value(overlap->value, "%"));
  if (is_train(c)) {
    auto bytes = c.scenario.bucket_bytes;
    f.detail = fmt::format("bucket_size is {}{}: try {} (4x) and compare train/comm_time.", format_bytes(double(bytes)),
                           c.scenario.bucket_size_given ? "" : " (the default)", format_bytes(4.0 * double(bytes)));
  }
  return f;
}

// Buckets per step of the train workload: whole layers, last first, a bucket closing once
// it holds at least bucket_size (as bench/train does; fp32 weights and biases).
std::optional<std::pair<double, int>> gradient_buckets(const Context& c) {
  const auto& layers = c.scenario.model_layers;
  if (layers.size() < 2) return std::nullopt;
  double limit = double(c.scenario.bucket_bytes), total = 0, open = 0;
  int buckets = 0;
  for (std::size_t i = layers.size() - 1; i >= 1; --i) {
    double bytes = 4.0 * (layers[i - 1] + 1) * layers[i];
    total += bytes;
    open += bytes;
    if (open >= limit) ++buckets, open = 0;
  }
  if (open > 0) ++buckets;
  return std::make_pair(total, buckets);
}

std::optional<Finding> small_message_latency(const Context& c, const Rule& rule) {
  // Collective benchmark: per (collective, algorithm), busbw at the smallest size against
  // the largest. Allreduce when measured (that is what gradient buckets are), else all.
  bool any_allreduce = false;
  for (const auto& m : c.run.metrics) any_allreduce |= m.name == "comm/busbw" && label_value(m.labels, "collective") == "allreduce";
  std::string phase = tuning_phase(c.run, "comm/busbw");
  std::map<std::pair<std::string, std::string>, std::map<std::int64_t, const MetricRecord*>> sweeps;
  for (const auto& m : c.run.metrics) {
    if (m.name != "comm/busbw" || label_value(m.labels, "phase") != phase) continue;
    if (any_allreduce && label_value(m.labels, "collective") != "allreduce") continue;
    auto bytes = m.labels.find("bytes");
    if (bytes == m.labels.end() || !std::holds_alternative<std::int64_t>(bytes->second)) continue;
    sweeps[{label_value(m.labels, "collective"), label_value(m.labels, "algorithm")}][std::get<std::int64_t>(bytes->second)] = &m;
  }
  std::optional<Finding> worst;
  double worst_ratio = rule.threshold;
  for (const auto& [key, sizes] : sweeps) {
    if (sizes.size() < 2) continue;
    const MetricRecord* small = sizes.begin()->second;
    const MetricRecord* large = sizes.rbegin()->second;
    double peak = 0;
    for (const auto& [bytes, m] : sizes) peak = std::max(peak, m->value);
    if (!(peak > 0) || small->value / peak >= worst_ratio) continue;
    worst_ratio = small->value / peak;
    const auto* latency = find_record(c.run, "comm/latency", phase, without_phase(small->labels));
    std::int64_t half = sizes.rbegin()->first;
    for (const auto& [bytes, m] : sizes)
      if (m->value >= peak / 2) { half = bytes; break; }
    worst = Finding{
        fmt::format("{} ({}) in {}: {} messages{} reach busbw {}, {} of the {} peak (largest size {}: {})", key.first,
                    key.second, phase, format_bytes(double(sizes.begin()->first)),
                    latency ? fmt::format(" take {} and", format_value(latency->value, "us")) : "",
                    format_value(small->value, "GB/s"), pct(worst_ratio), format_value(peak, "GB/s"),
                    format_bytes(double(sizes.rbegin()->first)), format_value(large->value, "GB/s")),
        fmt::format("Messages reach half the peak bus bandwidth from {}: keep gradient buckets at least that large.",
                    format_bytes(double(half)))};
  }
  if (worst) return worst;
  // Train workload: many buckets per step while communication is exposed.
  auto buckets = gradient_buckets(c);
  auto share = comm_share(c.run);
  if (!buckets || !share || buckets->second < rule.secondary || share->share <= rule.threshold) return std::nullopt;
  Finding f;
  f.evidence = fmt::format("{} of fp32 gradients go out in about {} allreduces of {} per step, and exposed communication is {} of step time in {} (train/comm_time p50 {} of train/step_time p50 {})",
                           format_bytes(buckets->first), buckets->second, format_bytes(double(c.scenario.bucket_bytes)), pct(share->share),
                           share->phase, format_value(share->comm_ms, "ms"), format_value(share->step_ms, "ms"));
  auto nodes = c.scenario.cluster_nodes;
  const auto* overlap = find_record(c.run, "train/overlap", share->phase);
  if (nodes && *nodes >= 2 && overlap && overlap->value < 100) {
    // Whole allreduce time = exposed ÷ (1 − overlap); busbw = 2(n−1)/n × bytes ÷ time.
    double total_s = share->comm_ms / (1 - overlap->value / 100) / 1000;
    double busbw = 2 * (*nodes - 1) / *nodes * buckets->first / total_s / 1e9;
    f.evidence += fmt::format("; effective allreduce busbw about {}", format_value(busbw, "GB/s"));
  }
  f.detail = fmt::format("Try bucket_size {} ({} buckets or fewer).", format_bytes(4.0 * double(c.scenario.bucket_bytes)),
                         (buckets->second + 3) / 4);
  return f;
}

std::optional<Finding> rank_imbalance(const Context& c, const Rule& rule) {
  const MetricRecord* worst = nullptr;
  for (const auto& m : c.run.metrics)
    if (m.name == "train/rank_imbalance" && label_value(m.labels, "phase") != "overall" && m.value > rule.threshold &&
        (!worst || m.value > worst->value))
      worst = &m;
  if (!worst) return std::nullopt;
  std::string phase = label_value(worst->labels, "phase");
  // Per-rank scores only: a hybrid job's stage and TP-group scores have their own rules.
  const MetricRecord* slowest = nullptr;
  for (const auto& m : c.run.metrics)
    if (m.name == "train/straggler_score" && label_value(m.labels, "phase") == phase && m.labels.contains("rank") &&
        (!slowest || m.value < slowest->value))
      slowest = &m;
  Finding f;
  f.evidence = fmt::format("train/rank_imbalance {} in {}", format_value(worst->value, "%"), phase);
  if (const auto* base = find_record(c.run, "train/rank_imbalance", "baseline"); base && phase != "baseline")
    f.evidence += fmt::format(" (baseline {})", format_value(base->value, "%"));
  if (!slowest) return f;
  std::string rank = label_value(slowest->labels, "rank"), node;
  for (const auto& p : c.run.processes)
    if (std::to_string(p.rank) == rank && !p.node.empty()) node = p.node;
  f.evidence += fmt::format("; the straggler is rank {}{}: train/straggler_score {} (fastest rank's compute time ÷ its own)", rank,
                            node.empty() ? "" : fmt::format(" on {}", node), format_value(slowest->value, "ratio"));
  if (const auto* fault = fault_of_phase(c.run, phase))
    f.detail = fmt::format("In this window the imbalance is what fault {} injected; judge rank {} by how fast the job gets back to its baseline.",
                           describe_fault(*fault), rank);
  else
    f.detail = fmt::format("Rank {} is slow without an injected fault: check its node first.", rank);
  return f;
}

std::optional<Finding> checkpoint_blocking(const Context& c, const Rule& rule) {
  double blocked_pct = 0;
  std::string source;
  const auto* saves = find_record(c.run, "ckpt/save_time", "overall");
  if (const auto* badput = find_record(c.run, "resilience/badput", "overall", {{"bucket", std::string("checkpoint_save")}})) {
    blocked_pct = badput->value;
    source = "resilience/badput checkpoint_save";
  } else if (saves && saves->stats && c.run.duration_s > 0) {
    blocked_pct = saves->stats->sum / (c.run.duration_s * 1000) * 100;
    source = "Σ ckpt/save_time ÷ duration";
  }
  if (blocked_pct <= rule.threshold) return std::nullopt;
  Finding f;
  f.evidence = fmt::format("checkpoint saves blocked training for {} of wall time ({})", format_value(blocked_pct, "%"), source);
  if (saves && saves->stats)
    f.evidence += fmt::format("; {} saves, ckpt/save_time mean {}, total {} of a {} run", saves->stats->n,
                              format_value(saves->stats->mean, "ms"), format_value(saves->stats->sum, "ms"),
                              format_value(c.run.duration_s, "s"));
  if (c.scenario.checkpoint_async == false)
    f.detail += "Set checkpoint.async to true: training then blocks only for a copy of the state. ";
  if (c.scenario.checkpoint_mode == "full")
    f.detail += "Set checkpoint.mode to incremental: deltas against the last full checkpoint are cheaper. ";
  if (auto every = c.scenario.checkpoint_every)
    f.detail += fmt::format("Saving every {} steps instead of {} halves this cost (to about {}).", 2 * *every, *every,
                            format_value(blocked_pct / 2, "%"));
  return f;
}

std::optional<Finding> long_recovery(const Context& c, const Rule& rule) {
  const MetricRecord* slowest = nullptr;
  for (const auto& m : c.run.metrics)
    if (m.name == "resilience/time_to_recover" && (!slowest || m.value > slowest->value)) slowest = &m;
  double lost_pct = 0;
  for (const char* bucket : {"recovery", "wasted_progress"})
    if (const auto* b = find_record(c.run, "resilience/badput", "overall", {{"bucket", std::string(bucket)}})) lost_pct += b->value;
  bool slow = slowest && slowest->value > rule.threshold;
  if (!slow && lost_pct <= rule.secondary) return std::nullopt;
  Finding f;
  if (slowest)
    f.evidence = fmt::format("resilience/time_to_recover {} after fault {}", format_value(slowest->value, "s"),
                             label_value(slowest->labels, "fault"));
  f.evidence += fmt::format("{}resilience/badput recovery + wasted_progress {} of wall time", f.evidence.empty() ? "" : "; ",
                            format_value(lost_pct, "%"));
  if (is_train(c) && c.scenario.recovery_mode != "elastic")
    f.detail += "Set recovery.mode to elastic: the survivors carry on from memory instead of every rank restarting from the last checkpoint. ";
  // The checkpoint interval trade-off: a failure loses on average half an interval of
  // steps (I/2 × T); each save blocks C, i.e. C/I per step. Halving I saves I/4 × T per
  // failure and costs C/I more per step, so it pays off when failures come more often
  // than once every (I·T)² ÷ (4C) seconds.
  auto every = c.scenario.checkpoint_every;
  const auto* step = find_record(c.run, "train/step_time", tuning_phase(c.run, "train/step_time"));
  const auto* save = find_record(c.run, "ckpt/save_time", "overall");
  if (!every && is_train(c)) f.detail += "There are no checkpoints: add checkpoint.every_steps so a restart does not start over.";
  if (!every || !step || !(*every >= 2)) return f;
  double interval = *every, step_s = p50(*step) / 1000;
  f.evidence += fmt::format("; checkpoint every {} steps, train/step_time p50 {}", interval, format_value(p50(*step), "ms"));
  f.detail += fmt::format("A failure loses on average {} steps × {} = {} of work.", interval / 2, format_value(p50(*step), "ms"),
                          format_value(interval / 2 * step_s, "s"));
  if (save && save->value > 0) {
    double save_s = save->value / 1000, half = std::floor(interval / 2);
    double break_even = std::pow(interval * step_s, 2) / (4 * save_s);
    f.detail += fmt::format(
        " Each save blocks {} ({} per step, {} of a step); every {} steps would lose {} per failure and cost {} per step"
        " ({}): worth it when failures come more often than once every {}.",
        format_value(save->value, "ms"), format_value(save->value / interval, "ms"), pct(save_s / interval / step_s), half,
        format_value(half / 2 * step_s, "s"), format_value(save->value / half, "ms"), pct(save_s / half / step_s),
        format_value(break_even, "s"));
  }
  return f;
}

std::optional<Finding> fault_throughput(const Context& c, const Rule& rule) {
  std::vector<const MetricRecord*> low;
  for (const auto& m : c.run.metrics)
    if (m.name == "resilience/throughput_retention" && label_value(m.labels, "phase").starts_with("fault:") &&
        m.value < rule.threshold)
      low.push_back(&m);
  if (low.empty()) return std::nullopt;
  std::stable_sort(low.begin(), low.end(), [](auto* a, auto* b) { return a->value < b->value; });
  Finding f;
  for (const auto* m : low) {
    std::string phase = label_value(m->labels, "phase");
    const auto* fault = fault_of_phase(c.run, phase);
    f.evidence += fmt::format("{}{} kept {} of baseline throughput (resilience/throughput_retention {})",
                              f.evidence.empty() ? "" : "; ", fault ? describe_fault(*fault) : phase, pct(m->value),
                              format_value(m->value, "ratio"));
  }
  const auto* worst = fault_of_phase(c.run, label_value(low.front()->labels, "phase"));
  std::string type = worst ? worst->type : "";
  f.detail = fmt::format("The worst is {}: ", worst ? worst->name : label_value(low.front()->labels, "phase"));
  if (type.starts_with("network."))
    f.detail += "a degraded link slows every synchronous step, so hide more communication (larger buckets, overlap) and prefer an allreduce with fewer rounds over the slow link.";
  else if (type == "node.kill" || type.starts_with("process."))
    f.detail += "lost ranks cost the most; elastic recovery and cheap frequent checkpoints bound the loss.";
  else
    f.detail += "one slow rank stalls every synchronous step; detect it (train/straggler_score) and exclude or replace its node (elastic recovery), or give it a smaller share of the batch.";
  return f;
}

// What an Xid usually means, for the advice (NVIDIA's Xid catalogue).
std::string_view xid_meaning(std::int64_t xid) {
  switch (xid) {
    case 48: case 63: case 64: case 94: case 95:
      return "an HBM ECC error: check retired or remapped rows (nvidia-smi -q -d ROW_REMAPPER) and replace the GPU if it repeats";
    case 79: return "the GPU fell off the bus: a PCIe, power or thermal fault; drain the node";
    case 74: return "an NVLink error: check the links (nvidia-smi nvlink -e)";
    case 13: case 31: case 43:
      return "often the program's own bug (an illegal address): run it under compute-sanitizer before blaming the GPU";
    default: return "see NVIDIA's Xid catalogue";
  }
}

std::optional<Finding> gpu_errors(const Context& c, const Rule&) {
  Finding f;
  for (const auto& m : c.run.metrics) {
    if (m.name != "gpu/xid_events" || m.value <= 0) continue;
    const auto xid = static_cast<std::int64_t>(label_number(m.labels, "xid").value_or(0));
    f.evidence += fmt::format("{}Xid {} reported {} time(s) (gpu/xid_events)", f.evidence.empty() ? "" : "; ", xid, m.value);
    f.detail += fmt::format("{}Xid {}: {}.", f.detail.empty() ? "" : " ", xid, xid_meaning(xid));
  }
  if (f.evidence.empty()) return std::nullopt;
  return f;
}

std::optional<Finding> silent_corruption(const Context& c, const Rule& rule) {
  const auto* caught = find_record(c.run, "resilience/sdc_caught", "overall");
  if (!caught) return std::nullopt;
  double slowest = 0;
  int detected = 0;
  for (const auto& m : c.run.metrics)
    if (m.name == "resilience/sdc_detection_steps") {
      slowest = std::max(slowest, m.value);
      ++detected;
    }
  Finding f;
  f.evidence = fmt::format("{} of the injected bit flips caught (resilience/sdc_caught {}){}", pct(caught->value),
                           format_value(caught->value, "ratio"),
                           detected ? fmt::format(", each within {} step(s) (resilience/sdc_detection_steps)", slowest) : "");
  if (caught->value < rule.threshold)
    f.detail = "Flips before the allreduce are summed into every replica, which then agree: watch gradient norms and "
               "loss spikes, or recompute a step now and then on another GPU, to catch those.";
  else
    f.detail = "The replica check caught every flip; keep workload.sdc_check_every at 1 where a wrong update costs more "
               "than a hash per step.";
  return f;
}

// Batch size and learning rate are advised from a sweep's points side by side. The run
// model holds no sweep results yet, so this rule never fires; it stays in the table so the
// documented rule set is complete and the sweep work has its place to plug in.
std::optional<Finding> sweep_batch_lr(const Context&, const Rule&) { return std::nullopt; }

// Deterministic output order: severity (high, medium, low), then id.
constexpr Rule kRules[] = {
    {"checkpoint-blocking", "medium", "Checkpoint saves block training", "resilience/badput{bucket=checkpoint_save}, ckpt/save_time",
     5.0, 0, checkpoint_blocking,
     "Make checkpoints asynchronous or incremental, or save less often."},
    {"exposed-communication", "medium", "Communication is not hidden behind computation",
     "train/comm_time p50, train/step_time p50, train/overlap", 0.30, 0, exposed_communication,
     "Use bigger gradient buckets (fewer, larger allreduces) and make sure they overlap backward."},
    {"fault-throughput", "high", "A fault cuts throughput by more than half", "resilience/throughput_retention", 0.5, 0,
     fault_throughput, "Harden the job against the fault that hurts most."},
    {"gpu-errors", "high", "GPUs reported Xid errors", "gpu/xid_events", 0, 0, gpu_errors,
     "A GPU that reported an Xid stays suspect: run the vendor's diagnostics (dcgmi diag -r 3) before it trains again."},
    {"pipeline-bubble", "medium", "Pipeline stages wait for each other", "train/pipeline_bubble{pp_stage}, workload.parallel.microbatches",
     20.0, 10.0, pipeline_bubble, "Shrink the bubble: more microbatches per step, and stages that take equal time."},
    {"slow-pipeline-stage", "high", "One pipeline stage is slower than the others", "train/straggler_score{pp_stage}, train/stage_time",
     0.8, 0, slow_pipeline_stage, "Even out the stages: the slowest sets the pace of the whole pipeline."},
    {"slow-tp-group", "high", "One tensor-parallel group is slower than the rest of its stage",
     "train/straggler_score{tp_group}, train/stage_time", 0.8, 0, slow_tp_group,
     "Find why the group is slow: one slow shard stalls every layer's allreduce of its TP group, and its replica's pipeline."},
    {"tp-communication", "medium", "Tensor-parallel communication takes a large share of the step",
     "comm/time{group=tp} p50, train/step_time p50, comm/bytes{group=tp}", 0.25, 0, tp_communication,
     "Make TP allreduces fewer or faster: they sit on the critical path of every layer."},
    {"long-recovery", "high", "Recovering from failures costs too much", "resilience/time_to_recover, resilience/badput, ckpt/save_time, train/step_time",
     10.0, 10.0, long_recovery,
     "Use elastic recovery and choose the checkpoint interval by the goodput trade-off below."},
    {"rank-imbalance", "high", "Ranks compute at different speeds", "train/rank_imbalance, train/straggler_score", 10.0, 0,
     rank_imbalance, "Find the straggler's cause (CPU quota, noisy neighbour, thermal limits) or exclude it."},
    {"small-message-latency", "low", "Small allreduces are latency-bound", "comm/busbw, comm/latency (collective); train/comm_time, train/step_time (train)",
     0.10, 8, small_message_latency, "Send fewer, larger messages: merge gradient buckets."},
    {"silent-corruption", "high", "Bit flips reached the training state", "resilience/sdc_caught, resilience/sdc_detection_steps",
     1.0, 0, silent_corruption, "Silent data corruption was injected; replicas that must agree are the cheapest check."},
    {"sweep-batch-lr", "low", "Batch size and learning rate", "sweep results (not in the run model yet)", 0, 0, sweep_batch_lr,
     "Pick the sweep point that passes the checks with the best throughput."},
};

int severity_rank(std::string_view s) { return s == "high" ? 0 : s == "medium" ? 1 : 2; }

}  // namespace

std::vector<Advice> tuning_advice(const RunResult& run) {
  const Context context{run, run.scenario_facts};
  std::vector<Advice> out;
  for (const auto& rule : kRules) {
    auto finding = rule.evaluate(context, rule);
    if (!finding) continue;
    std::string recommendation(rule.recommendation);
    if (!finding->detail.empty()) recommendation += fmt::format(" {}", finding->detail);
    while (!recommendation.empty() && recommendation.back() == ' ') recommendation.pop_back();
    out.push_back({std::string(rule.id), std::string(rule.title), finding->evidence, recommendation, std::string(rule.severity)});
  }
  std::stable_sort(out.begin(), out.end(), [](const Advice& a, const Advice& b) {
    return std::make_pair(severity_rank(a.severity), a.rule) < std::make_pair(severity_rank(b.severity), b.rule);
  });
  return out;
}

}  // namespace chaosbench::reports
