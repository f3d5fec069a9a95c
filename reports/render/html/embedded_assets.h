// Files compiled into the binary for report.html: its skeleton (reports/render/html/report_template.html)
// and Debian's Chart.js. Defined by a source that reports/render/html/embed_assets.cmake generates at
// build time; the bytes are exactly the files'.
#pragma once

#include <string_view>

namespace chaosbench::reports::html {

std::string_view report_template();
std::string_view chart_js();

}  // namespace chaosbench::reports::html
