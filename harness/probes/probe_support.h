// What the probe kinds share: judging a number against a probe's bounds, the numbers in
// evidence, {node.N.addr} expansion and requests made from a node's namespace. Internal
// to harness/probes.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "harness/http/http_client.h"
#include "harness/probes/probe_context.h"
#include "harness/probes/probe_outcome.h"
#include "harness/scenario/probe_spec.h"

namespace chaosbench::harness::probes {

// "0.41", "1.5e+09", "NaN": short, and exact enough to read a failure.
std::string format_number(double value);

// Why `value` breaks the probe's min/max ("> max 0.05", "< min 1", "is NaN"), or "" when
// it keeps them (or there are none).
std::string bound_violation(double value, const ProbeSpec& spec);

// Text an endpoint chose, fit for evidence (a terminal, the timeline): control characters
// as '?' (no escape sequence reaches a console summary), at most `max` bytes, cut on a
// UTF-8 character's boundary with "..." when longer.
std::string printable_excerpt(std::string_view text, std::size_t max);

// `text` with each {node.N.addr} replaced by ctx.address(N). Throws std::runtime_error
// when the context has no address for it.
std::string expand_node_addresses(std::string_view text, const ProbeContext& ctx);

// The namespace `node` is reached from: ctx.netns_fd(node), or -1 (this process's) for
// node -1 or a context without namespaces.
int node_netns(const ProbeContext& ctx, int node);

// http::fetch from `netns_fd` (common::in_netns around it), or from here for -1. Throws
// what in_netns and fetch throw (setns refused, a URL of another scheme).
http::Response fetch_in(int netns_fd, const http::Request& request);

// body() as the outcome, or !ok with the exception's message: evaluate() never throws.
ProbeOutcome guarded(const std::function<ProbeOutcome()>& body);

inline ProbeOutcome failed(std::string evidence) { return ProbeOutcome{false, std::nullopt, std::move(evidence)}; }

}  // namespace chaosbench::harness::probes
