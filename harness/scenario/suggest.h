// "did you mean ...?": the closest candidate by edit distance, when it is close enough
// to be a likely typo.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::harness {

std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` if its distance is at most max(2, |word| / 3).
std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string_view>& candidates);

// " (did you mean \"x\"?)" or "" — ready to append to a message.
std::string suggestion_suffix(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace chaosbench::harness
