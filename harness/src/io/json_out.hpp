// json_out: the harness's streaming JSON writer (run reports, replay results, interval
// records). Private to the harness; no DOM is built, values go straight into the caller's
// out_buffer.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/json.hpp"

namespace apiary::harness {

// core::json_writer plus the commas: remembers, per open object or array, whether an
// element was written, so callers only say what comes next.
class json_out {
 public:
  explicit json_out(core::out_buffer& b) : w_(b) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view k) {
    separate();
    w_.key(k);
    after_key_ = true;
  }

  void value(std::uint64_t v) {
    separate();
    w_.number(v);
  }
  void value(std::int64_t v) {
    separate();
    w_.number(v);
  }
  void value(std::uint32_t v) { value(static_cast<std::uint64_t>(v)); }
  void value(int v) { value(static_cast<std::int64_t>(v)); }
  // Fixed-point with `decimals` digits; null for NaN and infinities (JSON has none).
  void value(double v, int decimals) {
    separate();
    if (!std::isfinite(v)) {
      w_.raw("null");
      return;
    }
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
    w_.raw(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  }
  // The shortest text that reads back as exactly v (1e-300 stays 1e-300); null as above.
  void exact(double v) {
    separate();
    if (!std::isfinite(v)) {
      w_.raw("null");
      return;
    }
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    w_.raw(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  }
  void value(std::string_view s) {
    separate();
    w_.string(s);
  }
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(bool b) {
    separate();
    w_.boolean(b);
  }
  void null() {
    separate();
    w_.raw("null");
  }
  // A string, or null when empty.
  void text_or_null(std::string_view s) {
    if (s.empty())
      null();
    else
      value(s);
  }

  template <class T>
  void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }
  void field(std::string_view k, double v, int decimals) {
    key(k);
    value(v, decimals);
  }
  // The value, or null when there is none (a statistic of nothing).
  void field_or_null(std::string_view k, bool present, double v, int decimals) {
    key(k);
    if (present)
      value(v, decimals);
    else
      null();
  }

 private:
  void open(char c) {
    separate();
    w_.put(c);
    has_element_.push_back(false);
  }
  void close(char c) {
    has_element_.pop_back();
    w_.put(c);
  }
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!has_element_.empty()) {
      if (has_element_.back()) w_.put(',');
      has_element_.back() = true;
    }
  }

  core::json_writer w_;
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

// Nanoseconds in the units the JSON fields are named for.
inline double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }
inline double us(std::int64_t ns) { return static_cast<double>(ns) / 1e3; }
inline double sec(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace apiary::harness
