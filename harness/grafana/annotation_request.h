// The requests of Grafana's HTTP annotations API that `run --grafana` sends, as pure
// functions (unit-tested without a Grafana):
//   POST  /api/annotations      {"time":MS,"timeEnd":MS,"tags":[...],"text":"...",
//                                 "dashboardUID":"..."}  -> {"id":N,"message":"Annotation added"}
//   PATCH /api/annotations/N    {"time":MS,"timeEnd":MS}  -> {"message":"Annotation patched"}
// Times are Unix epoch milliseconds; an annotation with timeEnd > time is a region.
// Without dashboardUID the annotation belongs to the organisation and shows on any
// dashboard whose "Annotations & Alerts" query filters by its tags.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chaosbench::harness::grafana {

// One fault occurrence, as an annotation tells it.
struct FaultAnnotation {
  std::string fault;                 // its name in the scenario
  std::string type;                  // "network.delay"
  std::vector<std::string> targets;  // what it resolved to ("node3")
  int occurrence = 1;
  std::string run_id;
  std::string scenario;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;  // == start_ms while the fault is in effect
};

// Tags: "chaosbench", the type, each target, the run id.
std::vector<std::string> annotation_tags(const FaultAnnotation& a);
// "fault slow-link (network.delay) #1 on node3 — chaosbench run ID, scenario NAME".
std::string annotation_text(const FaultAnnotation& a);

// "<base>/api/annotations" and "<base>/api/annotations/<id>"; a trailing '/' of the base
// (a Grafana under a sub-path: http://host/grafana/) is dropped.
std::string annotations_url(const std::string& base);
std::string annotation_url(const std::string& base, std::int64_t id);

// The URL as a warning may show it: "user:password@" (Grafana's basic auth, written into
// --grafana) becomes "***@", so a log or timeline.jsonl never carries a credential.
std::string url_for_messages(const std::string& url);

// The POST body (dashboard_uid "" leaves the field out).
std::string create_body(const FaultAnnotation& a, const std::string& dashboard_uid);
// The PATCH body that sets the region's end.
std::string end_body(const FaultAnnotation& a);
// The "id" of a create's answer; none when the answer has none (or is not JSON).
std::optional<std::int64_t> created_id(const std::string& response_body);

}  // namespace chaosbench::harness::grafana
