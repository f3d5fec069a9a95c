// mesh: false turns the link mesh off; an object tunes it (mesh_spec.h).
#include <fmt/format.h>

#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {

MeshSpec parse_mesh(ParseContext& ctx, const json& value) {
  MeshSpec m;
  if (value.is_boolean()) {
    m.enabled = value.get<bool>();
    return m;
  }
  if (!value.is_object()) {
    ctx.error("mesh", fmt::format("expected false (no link mesh) or an object such as {{\"rate\": 10}}, got {}",
                                  describe(value)));
    return m;
  }
  ObjectReader r(ctx, value, "mesh", {"enabled", "rate", "window"});
  if (auto v = r.boolean("enabled")) m.enabled = *v;
  if (auto v = r.number("rate")) {
    if (*v < 0.5 || *v > 100)
      ctx.error(r.path_of("rate"), fmt::format("expected probes per pair per second, 0.5 to 100; got {}", *v));
    else
      m.rate = *v;
  }
  if (auto v = r.duration("window", /*allow_zero=*/false)) {
    if (v->value < std::chrono::milliseconds(200) || v->value > std::chrono::seconds(60))
      ctx.error(r.path_of("window"), fmt::format("expected 200ms to 60s, got {}", common::to_string(*v)));
    else
      m.window = *v;
  }
  if (m.enabled && m.rate * m.window.seconds() < 2)
    ctx.error(r.path_of("rate"), fmt::format("{} probes per second over a {} window is under 2 probes a window; "
                                             "raise the rate or the window", m.rate, common::to_string(m.window)));
  return m;
}

}  // namespace chaosbench::harness
