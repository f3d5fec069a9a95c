// Boost.Program_options' two types by name only, for the settings headers
// (bench/*/*_settings.h): whoever includes a workload's settings (the scenario model, the
// launcher) then compiles without Boost's headers. The .cc files include the real ones.
#pragma once

namespace boost::program_options {
class options_description;
class variables_map;
}  // namespace boost::program_options
