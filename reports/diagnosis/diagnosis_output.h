// A diagnosis (diagnosis.h) as `chaosbench diagnose` prints it: JSON (--json; the
// contract docs/diagnosis.md describes) or text a person reads.
#pragma once

#include <string>

#include "reports/diagnosis/diagnosis.h"

namespace chaosbench::reports {

std::string diagnosis_json(const Diagnosis& d, int indent = 2);
std::string diagnosis_text(const Diagnosis& d);
// One line: "link node0-node3 (slow link), confidence 0.93, from 17.0 s".
std::string culprit_line(const DiagnosisCulprit& c);

}  // namespace chaosbench::reports
