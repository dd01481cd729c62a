// text_format: numbers (and signals) as the summary, the progress line and the error messages
// print them.
#pragma once

#include <cstdint>
#include <string>

namespace apiary::harness {

// "1,234,567"
std::string grouped(std::uint64_t v);

// A share in [0, 1] as a percentage with one decimal: "12.3%".
std::string percent_text(double share);

// "1.5 GiB", "12 KiB", "300 bytes".
std::string bytes_text(std::uint64_t bytes);

// Nanoseconds as seconds, for "in 1.5 s".
inline double seconds_of(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

// "SIGINT", or "signal 64" for a number without a name.
std::string signal_name(int sig);

}  // namespace apiary::harness
