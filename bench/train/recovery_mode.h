// What happens when a rank of a workload fails (dies, or hangs past the scenario's
// hang_timeout): the one enum the harness acts on and the trainer's ranks read from
// --recovery. Words and enum values are a pair; the scenario and the worker flag use the words.
#pragma once

#include <optional>
#include <string_view>

namespace chaosbench::bench::train {

enum class RecoveryMode {
  kNone,     // the run fails; in a rank, a collective failure ends it with an error
  kRestart,  // as torchrun: every rank is stopped and started again (attempt + 1) and
             // resumes from the newest good checkpoint
  kElastic,  // the workload carries on without the rank (survivors agree on a new
             // membership and go on from memory); the harness restarts a killed rank when
             // its node is back, and it joins at a step boundary and receives the state
};

const char* to_string(RecoveryMode m);  // "none", "restart", "elastic"
// The mode for "none", "restart" or "elastic"; nullopt for anything else.
std::optional<RecoveryMode> parse_recovery_mode(std::string_view text);

}  // namespace chaosbench::bench::train
