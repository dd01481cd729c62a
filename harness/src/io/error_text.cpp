#include "apiary/harness/io/error_text.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace apiary::harness {

namespace {

constexpr std::size_t line_limit = 1000;
// Longer than a shown() value with its quotes and colon, so a value shown already stays whole.
constexpr std::size_t word_limit = 2 * shown_limit + 40;

// The length of the UTF-8 sequence that starts with byte c (1 for anything malformed, so a
// stray byte is escaped alone).
std::size_t sequence_length(unsigned char c) {
  if (c >= 0xf0 && c <= 0xf4) return 4;
  if (c >= 0xe0 && c <= 0xef) return 3;
  if (c >= 0xc2 && c <= 0xdf) return 2;
  return 1;
}

bool well_formed(std::string_view s, std::size_t i, std::size_t len) {
  if (i + len > s.size()) return false;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
  return true;
}

void escape(std::string& out, unsigned char c) {
  static const char hex[] = "0123456789abcdef";
  if (c == '\n') {
    out += "\\n";
  } else if (c == '\t') {
    out += "\\t";
  } else if (c == '\r') {
    out += "\\r";
  } else {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  }
}

}  // namespace

std::string shown(std::string_view value, std::size_t limit) {
  std::string out;
  std::size_t characters = 0;
  for (std::size_t i = 0; i < value.size();) {
    if (characters == limit) return out + "…";
    const auto c = static_cast<unsigned char>(value[i]);
    const std::size_t len = sequence_length(c);
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && (len == 1 || !well_formed(value, i, len)))) {
      escape(out, c);
      ++i;
    } else {
      out.append(value.substr(i, len));
      i += len;
    }
    ++characters;
  }
  return out;
}

std::string shown_path(std::string_view path, std::size_t limit) {
  std::string whole = shown(path, std::string::npos);
  // Character boundaries of the escaped text (UTF-8 continuation bytes are not one).
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < whole.size(); ++i)
    if ((static_cast<unsigned char>(whole[i]) & 0xc0) != 0x80) starts.push_back(i);
  if (starts.size() <= limit) return whole;
  const std::size_t head = limit / 3;
  const std::size_t tail = limit - head - 1;
  return whole.substr(0, starts[head]) + "…" + whole.substr(starts[starts.size() - tail]);
}

std::string one_line(std::string_view message) {
  // Word by word: a value echoed by a message apiary did not write (CLI11's "not expected:
  // ...") is shortened like shown() does; the line as a whole is capped too.
  std::string out;
  for (std::size_t start = 0; start < message.size();) {
    const std::size_t space = std::min(message.find(' ', start), message.size());
    out += shown(message.substr(start, space - start), word_limit);
    if (space < message.size()) out += ' ';
    start = space + 1;
  }
  return shown(out, line_limit);
}

}  // namespace apiary::harness
