// Text helpers of the colony's option parsers (mix.cpp, faults.cpp).
#pragma once

#include <string_view>

namespace apiary::colony::detail {

// s without leading and trailing blanks (spaces and tabs).
inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace apiary::colony::detail
