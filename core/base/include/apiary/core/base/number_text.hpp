// number_text: a double as the shortest text that reads back as the same double ("0.25",
// "1e+20"), for messages that quote a value as it was given or will be used.
#pragma once

#include <charconv>
#include <string>

namespace apiary::core {

inline std::string number_text(double v) {
  char buf[32];  // the longest shortest form of a double is 24 characters
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

}  // namespace apiary::core
