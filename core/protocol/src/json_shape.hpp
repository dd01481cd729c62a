// The two helpers of the JSON readers of core/protocol (wire_value.cpp, block_api_json.cpp):
// a json_shape_error for what a value should have been, and the path of the field that held it.
// Private to the library's sources.
#pragma once

#include <string>
#include <string_view>

#include "apiary/core/protocol/wire_value.hpp"

namespace apiary::core::json_shape {

[[noreturn]] inline void bad(const std::string& problem) { throw json_shape_error("", problem); }

// Runs f, naming `step` in the path of any error it throws.
template <class F>
void at(std::string_view step, F&& f) {
  try {
    f();
  } catch (json_shape_error& e) {
    e.prefix(step);
    throw;
  }
}

}  // namespace apiary::core::json_shape
