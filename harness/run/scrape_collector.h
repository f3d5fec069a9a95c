// The scenario's Prometheus scrapes (scenario "scrape", harness/prometheus/scraper.h):
// started with the workload, stopped in the unwind once the faults are reverted (a scrape
// in flight must not delay a revert) and before the targets stop, so the series never
// record the harness stopping them. Failed scrapes are warnings and timeline lines, never
// a failed run. See run_collector.h for the contract.
#pragma once

#include <memory>

#include "harness/prometheus/scraper.h"
#include "harness/run/run_collector.h"

namespace chaosbench::harness {

class ScrapeCollector final : public RunCollector {
 public:
  ~ScrapeCollector() override {
    if (scraper_) scraper_->stop();
  }

  void at(Stage stage, const RunContext& ctx) override;
  void stop() override;

 private:
  const RunContext* ctx_ = nullptr;
  std::unique_ptr<prometheus::Scraper> scraper_;
};

}  // namespace chaosbench::harness
