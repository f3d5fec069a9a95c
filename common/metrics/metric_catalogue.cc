#include "common/metrics/metric_catalogue.h"

#include <algorithm>
#include <array>

namespace chaosbench::common {
namespace {

using B = Better;
using A = Aggregation;

// A row's display hints, set by name: H.key(1).timeline(2). (Designated initialisers
// would say the same, but g++ warns on every field they leave to its default.)
struct Hints {
  MetricDisplay d;
  constexpr Hints key(int rank) const { Hints h = *this; h.d.key_rank = rank; return h; }
  constexpr Hints timeline(int rank) const { Hints h = *this; h.d.timeline_rank = rank; return h; }
  constexpr Hints latency() const { Hints h = *this; h.d.latency_like = true; return h; }
  constexpr Hints effects_hidden() const { Hints h = *this; h.d.effects_hidden = true; return h; }
  constexpr Hints sweep_column(int rank, std::string_view stat = "value") const {
    Hints h = *this;
    h.d.sweep_column = rank;
    h.d.sweep_stat = stat;
    return h;
  }
  constexpr Hints sweep_objective(int rank, std::string_view proxy) const {
    Hints h = *this;
    h.d.sweep_objective = rank;
    h.d.sweep_proxy = proxy;
    return h;
  }
  constexpr operator MetricDisplay() const { return d; }  // rows convert implicitly
};
constexpr Hints H{};

// Each row is the metric's definition, which `chaosbench metrics` prints and checks,
// gates and reports rely on: change one only together with what computes the metric.
// Display ranks are unique within their field.
constexpr std::array kCatalogue = std::to_array<MetricSpec>({
    // Communication (anchor: nccl-tests doc/PERFORMANCE.md).
    {"comm/algbw", "GB/s", B::kHigher, A::kMean, "bytes / time per op, per collective and message size (GB = 10^9 bytes)",
     H.effects_hidden()},
    {"comm/busbw", "GB/s", B::kHigher, A::kMean, "algbw x factor: allreduce 2(n-1)/n; reduce-scatter, all-gather (n-1)/n; broadcast 1",
     H.key(22).timeline(5)},
    {"comm/latency", "us", B::kLower, A::kMean, "mean time per op (per size); p50/p99 across iterations in stats",
     H.key(23).timeline(4).latency()},
    {"comm/iter_cv", "%", B::kLower, A::kMean, "coefficient of variation of per-iteration time (jitter)",
     H.effects_hidden()},
    {"comm/wrong_elements", "count", B::kLower, A::kSum, "elements that differ from the expected result in check iterations; must be 0"},
    {"comm/avg_busbw", "GB/s", B::kHigher, A::kMean, "mean busbw over a size sweep",
     H.effects_hidden().sweep_column(7).sweep_objective(3, "comm/latency")},
    {"comm/time", "ms", B::kLower, A::kMean, "per step, a hybrid-parallel rank's time in one group's communication (label group: tp allreduces, pp send/recv waits, dp gradient allreduce's exposed wait)"},
    {"comm/bytes", "bytes", B::kNone, A::kMean, "per step, bytes a hybrid-parallel rank sent in one group's communication (label group: tp, pp, dp); stats sum: the total"},
    // Compute (anchor: SuperBench micro-benchmarks).
    {"compute/gemm_tflops", "TFLOP/s", B::kHigher, A::kMean, "achieved GEMM throughput per device and dtype",
     H.key(33)},
    {"compute/peak_tflops", "TFLOP/s", B::kHigher, A::kMean, "the hardware's peak per device and dtype: lanes x 2 x FMA units x clock x cores (CPU, measured), SMs x fp32 lanes x 2 x clock (GPU)",
     H.key(34)},
    {"compute/mem_bw", "GB/s", B::kHigher, A::kMean, "STREAM-triad memory bandwidth (host or device)",
     H.key(35)},
    {"compute/h2d_bw", "GB/s", B::kHigher, A::kMean, "host to device copy bandwidth (GPU only)"},
    {"compute/d2h_bw", "GB/s", B::kHigher, A::kMean, "device to host copy bandwidth (GPU only)"},
    {"compute/launch_latency", "us", B::kLower, A::kMean, "kernel launch to completion of an empty kernel (GPU only)",
     H.latency()},
    // Training.
    {"train/throughput", "samples/s", B::kHigher, A::kMean, "global samples per second over the phase",
     H.key(1).timeline(1).sweep_column(1).sweep_objective(2, "train/step_time")},
    {"train/step_time", "ms", B::kLower, A::kMean, "wall time per optimizer step; p50, p99",
     H.key(2).timeline(2).latency().sweep_column(2, "p50")},
    {"train/compute_time", "ms", B::kLower, A::kMean, "per step, time in forward/backward",
     H.key(3).timeline(9).latency()},
    {"train/comm_time", "ms", B::kLower, A::kMean, "per step, exposed (non-overlapped) communication time",
     H.key(4).timeline(8).latency()},
    {"train/data_time", "ms", B::kLower, A::kMean, "per step, making this rank's batch (and copying it to the device)",
     H.latency()},
    {"train/forward_time", "ms", B::kLower, A::kMean, "per step, the forward pass and the loss",
     H.latency()},
    {"train/backward_time", "ms", B::kLower, A::kMean, "per step, the backward pass (gradient allreduces start during it; on an elastic run's leader also the check for ranks waiting to join)",
     H.latency()},
    {"train/optimizer_time", "ms", B::kLower, A::kMean, "per step, the optimizer update (and the replica fingerprint when due)",
     H.latency()},
    {"train/cpu_time", "ms", B::kLower, A::kMean, "per step, CPU time of the rank's whole process (every thread, kernel included): above step_time, more than one core was busy",
     H.latency()},
    {"train/overlap", "%", B::kHigher, A::kMean, "share of communication hidden behind computation",
     H.key(5)},
    {"train/mfu", "%", B::kHigher, A::kMean, "achieved model FLOP/s / measured peak (compute/gemm_tflops)",
     H.key(6)},
    {"train/mfu_hw", "%", B::kHigher, A::kMean, "achieved model FLOP/s / the hardware's peak (compute/peak_tflops): a slow BLAS library shows here",
     H.key(7)},
    {"train/rank_imbalance", "%", B::kLower, A::kMean, "(slowest - fastest rank compute time) / fastest, per step, p50 (compute: the allreduce equalises step times); hybrid parallel: within each pipeline stage, the step's worst stage",
     H.key(8)},
    {"train/straggler_score", "ratio", B::kHigher, A::kMean, "per rank: fastest rank's median compute time / this rank's (hybrid: within its pp_stage); per pp_stage, and per tp_group within its stage: fastest's stage_time / this one's; a straggler is < 0.75",
     H.key(9)},
    {"train/pipeline_bubble", "%", B::kLower, A::kMean, "per step, share of a pipeline-parallel rank's pipeline phase spent waiting for its neighbour stages; per pp_stage: median; analytic (p-1)/(m+p-1)",
     H.key(10)},
    {"train/stage_time", "ms", B::kLower, A::kMean, "per step, a hybrid-parallel rank's forward + backward compute of its pipeline stage; per pp_stage and tp_group: the slowest rank's median",
     H.latency()},
    {"train/loss", "", B::kLower, A::kLast, "training loss; final value and curve",
     H.key(11).timeline(3)},
    {"train/time_to_target", "s", B::kLower, A::kMin, "wall time until loss first reaches the scenario's target",
     H.key(12).sweep_column(3).sweep_objective(1, "train/step_time")},
    {"train/loss_ratio", "ratio", B::kLower, A::kLast, "final loss / first step's loss",
     H.sweep_column(4)},
    // Resilience.
    {"resilience/goodput", "%", B::kHigher, A::kMean, "productive training time / total wall time",
     H.key(13).sweep_column(6)},
    {"resilience/badput", "%", B::kLower, A::kMean, "per bucket: startup, checkpoint save/restore, wasted progress, recovery, stalled",
     H.key(14)},
    {"resilience/time_to_detect", "s", B::kLower, A::kMean, "fault applied -> the workload (or harness) notices",
     H.key(15)},
    {"resilience/time_to_recover", "s", B::kLower, A::kMean, "fault applied -> all ranks making steps again",
     H.key(16).sweep_column(5)},
    {"resilience/lost_steps", "steps", B::kLower, A::kSum, "steps computed before a failure and computed again after it",
     H.key(17)},
    {"resilience/throughput_retention", "ratio", B::kHigher, A::kMean, "throughput during a fault window / baseline throughput",
     H.key(18)},
    {"resilience/restarts", "count", B::kLower, A::kSum, "restarts of the workload or of ranks",
     H.key(19)},
    {"resilience/time_lost", "s", B::kLower, A::kMean, "per failure, time lost by part: detect (applied -> noticed), restart (noticed -> the job steps again, less restore), restore (checkpoint load), recompute (lost steps x fault-free step time, plus the step in flight), rejoin (elastic: re-admitting the ended ranks, less a step); per part without fault: the median over failures"},
    {"resilience/mtti_observed", "s", B::kHigher, A::kMean, "mean time to interruption: wall time since the job started / failures detected"},
    {"resilience/ettr", "ratio", B::kHigher, A::kMean, "effective training time ratio: productive step time / wall time since the job started (goodput without start-up)"},
    {"resilience/running_efficiency", "ratio", B::kHigher, A::kMean, "productive step time / wall time between consecutive steps of one membership with no fault or restart between them: what running costs without failures (the goodput model's fault-free share)"},
    {"resilience/sdc_detection_steps", "steps", B::kLower, A::kMax, "per injected bit flip: steps from the flip to the replicas' disagreement (1: caught at the next step)"},
    {"resilience/sdc_caught", "ratio", B::kHigher, A::kMean, "injected bit flips that a replica check caught / injected bit flips"},
    {"ckpt/save_time", "ms", B::kLower, A::kMean, "time training is blocked per checkpoint save",
     H.key(20)},
    {"ckpt/restore_time", "ms", B::kLower, A::kMean, "time to load state after a restart",
     H.key(21)},
    {"ckpt/size", "bytes", B::kLower, A::kMean, "bytes written per checkpoint, full and incremental separately"},
    {"ckpt/write_bw", "GB/s", B::kHigher, A::kMean, "checkpoint bytes / write time"},
    // Inference (anchors: MLPerf LoadGen, Triton perf_analyzer).
    {"infer/latency", "ms", B::kLower, A::kMean, "request latency; p50, p90, p99, p99.9",
     H.key(25).timeline(6).latency()},
    {"infer/throughput", "req/s", B::kHigher, A::kMean, "completed requests per second",
     H.key(24).timeline(7)},
    {"infer/error_rate", "%", B::kLower, A::kMean, "failed or timed-out requests / sent",
     H.key(26)},
    {"infer/queue_time", "ms", B::kLower, A::kMean, "time a request waits for a batch; p50, p99",
     H.latency()},
    {"infer/batch_size", "requests", B::kHigher, A::kMean, "mean executed batch size"},
    {"infer/ttft", "ms", B::kLower, A::kMean, "time to first token (streaming models)",
     H.key(27).timeline(10).latency()},
    {"infer/tpot", "ms", B::kLower, A::kMean, "time per output token (streaming models): (e2e - ttft) / (output tokens - 1), per request",
     H.key(28).latency()},
    // LLM serving (anchors: vLLM benchmark_serving, GenAI-Perf/AIPerf, DistServe's goodput).
    {"infer/itl", "ms", B::kLower, A::kMean, "inter-token latency: every gap between consecutive token chunks of a stream",
     H.latency()},
    {"infer/e2e_latency", "ms", B::kLower, A::kMean, "LLM request: scheduled send -> last token (or failure)",
     H.latency()},
    {"infer/output_tokens_per_s", "tok/s", B::kHigher, A::kMean, "output tokens of the requests finished per second of a window",
     H.key(29).timeline(11)},
    {"infer/request_goodput", "req/s", B::kHigher, A::kMean, "requests per second that met every SLO bound (DistServe)",
     H.key(30).timeline(12)},
    {"infer/slo_attainment", "%", B::kHigher, A::kMean, "finished requests that met every SLO bound / finished requests",
     H.key(31)},
    {"infer/failed_streams", "count", B::kLower, A::kSum, "LLM requests that failed (connect, status, timeout, malformed, truncated) per window"},
    {"infer/peak_rate", "req/s", B::kHigher, A::kLast, "find_peak: the highest request rate whose SLO attainment met the target (label bound: low, high)"},
    {"llm/running", "requests", B::kNone, A::kMean, "built-in LLM server: sequences in the running batch (vLLM num_requests_running)"},
    {"llm/waiting", "requests", B::kNone, A::kMean, "built-in LLM server: requests queued (vLLM num_requests_waiting)"},
    {"llm/kv_cache_usage", "%", B::kNone, A::kMax, "built-in LLM server: paged KV cache blocks in use (vLLM kv_cache_usage_perc)"},
    {"llm/preemptions", "count", B::kLower, A::kSum, "built-in LLM server: sequences preempted (recomputed) for want of KV blocks"},
    // Faults and resources.
    {"fault/apply_latency", "us", B::kLower, A::kMean, "scheduled time -> fault in effect (the harness's own precision)"},
    {"fault/effect_error", "%", B::kLower, A::kMean, "measured effect vs requested (e.g. RTT added vs delay asked)"},
    {"fault/abort_latency", "ms", B::kLower, A::kMean, "a stop condition (abort) or the kill switch decided -> every active fault reverted"},
    {"probe/failures", "count", B::kLower, A::kSum, "per probe (label probe): evaluations of the scenario's live probe that failed"},
    {"node/cpu_usage", "CPUs", B::kNone, A::kMean, "per node (label node): CPUs its threads used (their CPU time / window; the node's cgroup's threads, /proc/<tid>/schedstat)"},
    {"node/cpu_wait", "threads", B::kLower, A::kMean, "per node: the mean number of its threads kept waiting for a CPU (run delay / window): high when a CPU quota or a noisy neighbour starves it"},
    {"node/cpu_throttled", "%", B::kLower, A::kMean, "per node with a cpu cgroup: share of the window its CPU quota held it (cpu.stat throttled time)"},
    {"node/memory_used", "bytes", B::kNone, A::kMax, "per node with a memory cgroup: its memory use (memory.usage_in_bytes, v2 memory.current)"},
    {"host/cpu_steal", "%", B::kLower, A::kMean, "share of the host's CPU time its hypervisor gave to others (/proc/stat steal)"},
    {"net/pair_rtt", "ms", B::kLower, A::kMean, "link mesh, per ordered pair of nodes (labels src, dst): median round trip of the window's probes, UDP node to node and back, without the reflector's hold time"},
    {"net/pair_loss", "%", B::kLower, A::kMean, "link mesh, per ordered pair: share of the window's probes that got no echo within the timeout (1 s; 3 ticks at rates under 3 a second)"},
    {"diagnosis/time_to_localise", "s", B::kLower, A::kMin, "the first fault's start -> the live diagnosis first names a culprit (blind: it never reads the fault list)"},
    {"diagnosis/culprits", "count", B::kNone, A::kMax, "the live diagnosis, once a second: culprits it has named so far (0 before any); a metric probe with max 0 stops a run that found one"},
    {"net/tx_bytes", "bytes", B::kNone, A::kMax, "per node interface counters"},
    {"net/rx_bytes", "bytes", B::kNone, A::kMax, "per node interface counters"},
    {"net/retransmits", "count", B::kLower, A::kMax, "TCP retransmissions per node"},
    {"net/rtt", "ms", B::kLower, A::kMean, "round trip to a peer as the workload measured it (scenarios/examples/ping_rtt.py: ping)"},
    {"gpu/memory_used", "MiB", B::kNone, A::kMax, "GPU memory in use (GPU only)"},
    {"gpu/xid_events", "count", B::kNone, A::kSum, "per Xid: device errors the ranks reported with it (failure_detected {xid}; a real GPU's or gpu.xid's)"},
    // Scraped Prometheus endpoints (scenario "scrape"); the series scraped keep their own names.
    {"scrape/up", "", B::kHigher, A::kMean, "1 when a scrape target answered with valid metrics, else 0, per instance; its mean over a phase is the target's availability"},
    {"scrape/duration", "s", B::kLower, A::kMean, "time one scrape of a target took, per instance"},
    // The tool's own costs (chaosbench bench micro).
    {"bench/scenario_parse", "us", B::kLower, A::kMean, "time to parse and validate one scenario file (scenarios/demo.json)"},
    {"bench/ingest_rate", "records/s", B::kHigher, A::kMean, "metric records per second the harness takes in: socket to sample store, or decode alone"},
    {"bench/report_time", "ms", B::kLower, A::kMean, "time to produce one report (results.json, ...) of a run with 10^6 series samples",
     H.latency()},
});

}  // namespace

std::span<const MetricSpec> metric_catalogue() { return kCatalogue; }

const MetricSpec* find_metric(std::string_view name) {
  for (const auto& m : kCatalogue) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<const MetricSpec*> metrics_ranked_by(int MetricDisplay::*rank) {
  std::vector<const MetricSpec*> out;
  for (const auto& m : kCatalogue)
    if (m.display.*rank > 0) out.push_back(&m);
  std::sort(out.begin(), out.end(), [rank](const MetricSpec* a, const MetricSpec* b) { return a->display.*rank < b->display.*rank; });
  return out;
}

std::string_view to_string(Aggregation a) {
  switch (a) {
    case Aggregation::kMean: return "mean";
    case Aggregation::kSum: return "sum";
    case Aggregation::kLast: return "last";
    case Aggregation::kMax: return "max";
    case Aggregation::kMin: return "min";
  }
  return "mean";
}

}  // namespace chaosbench::common
