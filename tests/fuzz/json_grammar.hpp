// json_grammar: a second, deliberately plain JSON checker that the fuzz targets hold core's
// answers against. It shares no code with Boost.JSON (which core's is_valid_json uses), so a
// disagreement points at a real difference in what is accepted, not at a shared mistake.
//
// It follows RFC 8259's grammar with the three choices core's validator makes on top:
//   - strings must be well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
//     above U+10FFFF), unless check_utf8 is off;
//   - a \u escape of a surrogate must be a high one followed by an escaped low one (Boost.JSON
//     rejects a lone surrogate, which the RFC's grammar would let through);
//   - containers nest at most max_depth deep.
// Boost.JSON keeps a number's decimal exponent in an int and rejects a number whose exponent
// gets near INT_MAX; rather than copy that arithmetic, the checker answers `undecided` for
// an exponent that large, and callers skip the comparison for those inputs.
//
// Recursion depth is bounded by max_depth, so hostile nesting cannot exhaust the stack.
// Not thread-safe per instance; check() makes its own.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace apiary::fuzz {

enum class verdict { valid, invalid, undecided };

struct json_grammar_options {
  bool check_utf8 = true;      // off: any byte of 0x80 and above is accepted inside a string
  std::size_t max_depth = 64;  // the deepest nesting of arrays and objects accepted
};

class json_grammar {
 public:
  static verdict check(std::string_view text, json_grammar_options options = {}) {
    json_grammar g(text, options);
    g.skip_ws();
    bool ok = g.value() && (g.skip_ws(), g.pos_ == text.size());
    if (g.undecided_) return verdict::undecided;
    return ok ? verdict::valid : verdict::invalid;
  }

 private:
  json_grammar(std::string_view text, json_grammar_options options) : s_(text), opt_(options) {}

  bool at_end() const { return pos_ >= s_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(s_[pos_]); }
  bool eat(char c) {
    if (at_end() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  // RFC 8259 whitespace is exactly these four; form feed and vertical tab are not.
  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool value() {
    if (at_end()) return false;
    switch (s_[pos_]) {
      case '{': return container('}');
      case '[': return container(']');
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  // An object (close '}') or an array (close ']'): the opening bracket is at pos_.
  bool container(char close) {
    if (depth_ == opt_.max_depth) return false;
    ++depth_;
    ++pos_;
    skip_ws();
    if (!eat(close)) {
      while (true) {
        if (close == '}') {
          if (at_end() || s_[pos_] != '"' || !string()) return false;
          skip_ws();
          if (!eat(':')) return false;
          skip_ws();
        }
        if (!value()) return false;
        skip_ws();
        if (eat(close)) break;
        if (!eat(',')) return false;
        skip_ws();
      }
    }
    --depth_;
    return true;
  }

  bool digits() {
    std::size_t start = pos_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    return pos_ != start;
  }

  bool number() {
    eat('-');
    if (eat('0')) {
      // A leading zero stands alone: "01" is not a number.
    } else if (at_end() || peek() < '1' || peek() > '9' || !digits()) {
      return false;
    }
    if (eat('.') && !digits()) return false;
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!eat('+')) eat('-');
      std::size_t start = pos_;
      if (!digits()) return false;
      // The exponent's value, saturated; the mantissa's digits shift it by at most the
      // length of the text, so below this bound Boost.JSON's int arithmetic cannot overflow.
      std::uint64_t e = 0;
      for (std::size_t i = start; i < pos_ && e <= INT_MAX; ++i) e = e * 10 + static_cast<unsigned>(s_[i] - '0');
      if (e + s_.size() >= INT_MAX) undecided_ = true;
    }
    return true;
  }

  static int hex_digit(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // Four hex digits after "\u"; -1 when they are not there.
  long unicode_escape() {
    if (!eat('\\') || !eat('u') || s_.size() - pos_ < 4) return -1;
    long v = 0;
    for (int i = 0; i < 4; ++i) {
      int d = hex_digit(peek());
      if (d < 0) return -1;
      v = v * 16 + d;
      ++pos_;
    }
    return v;
  }

  bool escape() {
    // pos_ is at the backslash.
    if (s_.size() - pos_ < 2) return false;
    switch (s_[pos_ + 1]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't': pos_ += 2; return true;
      case 'u': {
        long u = unicode_escape();
        if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF)) return false;
        if (u >= 0xD800 && u <= 0xDBFF) {
          long low = unicode_escape();
          return low >= 0xDC00 && low <= 0xDFFF;
        }
        return true;
      }
      default: return false;
    }
  }

  // One UTF-8 sequence starting at pos_ (its lead byte is 0x80 or above), by the table of
  // well-formed sequences in the Unicode standard (chapter 3, table 3-7).
  bool utf8_sequence() {
    unsigned char lead = peek();
    int more;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
      more = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      more = 2;
      if (lead == 0xE0) lo = 0xA0;  // overlong below U+0800
      if (lead == 0xED) hi = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      more = 3;
      if (lead == 0xF0) lo = 0x90;  // overlong below U+10000
      if (lead == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return false;
    }
    ++pos_;
    for (int i = 0; i < more; ++i, ++pos_) {
      if (at_end()) return false;
      unsigned char c = peek();
      if (c < (i == 0 ? lo : 0x80) || c > (i == 0 ? hi : 0xBF)) return false;
    }
    return true;
  }

  bool string() {
    ++pos_;  // the opening quote
    while (!at_end()) {
      unsigned char c = peek();
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (!escape()) return false;
      } else if (c < 0x20) {
        return false;  // control characters must be escaped
      } else if (c < 0x80 || !opt_.check_utf8) {
        ++pos_;
      } else if (!utf8_sequence()) {
        return false;
      }
    }
    return false;  // no closing quote
  }

  std::string_view s_;
  json_grammar_options opt_;
  std::size_t pos_ = 0;
  std::size_t depth_ = 0;
  bool undecided_ = false;
};

}  // namespace apiary::fuzz
