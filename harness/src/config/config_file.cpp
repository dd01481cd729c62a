#include "apiary/harness/config/config_file.hpp"

#include <toml++/toml.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <utility>

#include "apiary/harness/config/options.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"

namespace apiary::harness {

namespace {

// A TOML file apiary reads is a page of keys; anything near this size is not one.
constexpr std::uint64_t largest_toml = 1024 * 1024;
// The longest parse error an error line carries (toml++ echoes the key or value it stopped at).
constexpr std::size_t longest_description = 240;

// The offset of the first byte that cannot be in a UTF-8 text file (a control character
// other than tab, newline and carriage return, or a malformed UTF-8 sequence), or npos.
std::size_t first_non_text_byte(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return i;
      ++i;
      continue;
    }
    const std::size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (len == 0 || (len == 3 && c > 0xef) || i + len > text.size()) return i;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::size_t line_of(std::string_view text, std::size_t offset) {
  return 1 +
         static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// The first line holding more than nesting_limit dots, brackets and braces (in strings and
// comments too: a bound on how deep the line can nest, found without parsing it), or 0.
std::size_t overnested_line(std::string_view text) {
  std::size_t line = 1;
  std::size_t count = 0;
  for (const char c : text) {
    if (c == '\n') {
      ++line;
      count = 0;
    } else if ((c == '.' || c == '[' || c == '{') && ++count > nesting_limit) {
      return line;
    }
  }
  return 0;
}

std::string at(const std::string& path, std::size_t line) { return shown_path(path) + ":" + std::to_string(line); }

toml_type type_of(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return toml_type::string;
    case toml::node_type::integer: return toml_type::integer;
    case toml::node_type::floating_point: return toml_type::floating;
    case toml::node_type::boolean: return toml_type::boolean;
    case toml::node_type::array: return toml_type::array;
    case toml::node_type::table: return toml_type::table;
    default: return toml_type::date_time;
  }
}

// A float as the shortest text that reads back to it, with a point or an exponent, so a
// whole number's option refuses 5.0 as it refuses 5.5.
std::string float_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string out(buf, r.ptr);
  if (out.find_first_of(".eEn") == std::string::npos) out += ".0";
  return out;
}

std::string text_of(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* f = node.as_floating_point()) return float_text(f->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  return {};
}

// The values under `node` (a key's parts so far in `key`): a table's entries, or the node
// itself. The depth is bounded by overnested_line's check and toml++'s nesting limit.
void collect(const toml::node& node, std::vector<std::string>& key, std::vector<toml_item>& out) {
  const toml::table* table = node.as_table();
  if (table == nullptr || table->empty()) {
    if (key.empty()) return;  // an empty file
    const toml::source_position& begin = node.source().begin;
    out.push_back({key, begin.line, begin.column, type_of(node), text_of(node)});
    return;
  }
  for (const auto& [name, child] : *table) {
    key.emplace_back(name.str());
    collect(child, key, out);
    key.pop_back();
  }
}

// toml++'s "Error while parsing key-value pair: cannot redefine ..." as an error line's tail.
std::string parse_problem(const toml::parse_error& e) {
  std::string text(e.description());
  if (!text.empty()) text.front() = static_cast<char>(std::tolower(static_cast<unsigned char>(text.front())));
  return shown(text, longest_description);
}

// The problem of the text of a TOML file (not valid, or nested too deep), or "".
std::string check_text(const std::string& path, std::string_view text) {
  // TOML is UTF-8 text; say so instead of echoing binary bytes back as a key.
  if (const std::size_t bad = first_non_text_byte(text); bad != std::string_view::npos)
    return at(path, line_of(text, bad)) + ": not a TOML text file (a control or non-UTF-8 byte at offset " +
           std::to_string(bad) + ")";
  if (const std::size_t line = overnested_line(text); line != 0)
    return at(path, line) + ": more than " + std::to_string(nesting_limit) +
           " dots, brackets and braces on one line; no key apiary reads nests that deep";
  return {};
}

// A config file's value for the option, in the option's words; "" when it was set.
std::string set_option(const option_binder::option_ref& opt, const toml_item& item) {
  if (opt.cli->count() > 0) return {};  // the command line wins
  try {
    opt.cli->add_result(item.value);
    opt.cli->run_callback();
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return {};
}

// Whether a value of this type is one an option of `kind` reads: a number or a text option
// reads a string, an integer or a float as its text (a size "64KiB", a rate 5000), a toggle
// a boolean or a string (on, off).
bool fits(toml_type type, value_kind kind) {
  if (kind == value_kind::toggle) return type == toml_type::boolean || type == toml_type::string;
  return type == toml_type::string || type == toml_type::integer || type == toml_type::floating;
}

std::string_view expected(value_kind kind) {
  switch (kind) {
    case value_kind::number: return "a number";
    case value_kind::toggle: return "true or false";
    case value_kind::text: break;
  }
  return "a string";
}

// One key of a config file applied to its option: the problem (without the file), or "".
// `first` holds the line of each option's key so far.
std::string apply_item(option_binder& options, const toml_item& item, std::map<std::string, std::size_t>& first) {
  std::string name = item.dotted();
  std::replace(name.begin(), name.end(), '_', '-');
  const auto opt = item.key.size() == 1 ? options.find(name) : std::nullopt;
  if (!opt) return "unknown key '" + shown(item.dotted()) + "' (apiary run --help lists the options)";
  if (const auto [it, added] = first.emplace(name, item.line); !added)
    return "duplicate key '" + name + "' (lines " + std::to_string(it->second) + " and " + std::to_string(item.line) +
           "); give each key once";
  if (!fits(item.type, opt->kind))
    return "'" + shown(item.dotted()) + "': expected " + std::string(expected(opt->kind)) + ", not " +
           std::string(toml_type_name(item.type));
  return set_option(*opt, item);
}

}  // namespace

std::string_view toml_type_name(toml_type type) {
  switch (type) {
    case toml_type::string: return "a string";
    case toml_type::integer: return "an integer";
    case toml_type::floating: return "a float";
    case toml_type::boolean: return "a boolean";
    case toml_type::array: return "an array";
    case toml_type::table: return "a table";
    case toml_type::date_time: break;
  }
  return "a date or time";
}

std::string toml_item::dotted() const {
  std::string out;
  for (const std::string& part : key) out += (out.empty() ? "" : ".") + part;
  return out;
}

std::string toml_where(const std::string& path, const toml_item& item) { return at(path, item.line); }

std::string read_toml(const std::string& path, std::string_view what, std::vector<toml_item>& items) {
  std::string text = read_input_file(path, largest_toml, what);
  // Editors on Windows start UTF-8 files with a byte order mark; it is no part of a key.
  if (text.starts_with("\xef\xbb\xbf")) text.erase(0, 3);
  if (std::string problem = check_text(path, text); !problem.empty()) return problem;
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string_view(path));
  } catch (const toml::parse_error& e) {
    return at(path, e.source().begin.line) + ": " + parse_problem(e);
  }
  std::vector<std::string> key;
  items.clear();
  collect(root, key, items);
  // toml++ keeps a table's keys sorted: back into the file's order.
  std::sort(items.begin(), items.end(), [](const toml_item& a, const toml_item& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  return {};
}

std::string apply_config_file(option_binder& options, const std::string& path) {
  std::vector<toml_item> items;
  try {
    if (std::string problem = read_toml(path, "config file", items); !problem.empty()) return problem;
  } catch (const input_error& e) {
    return "--config " + shown_path(path) + ": " + e.what();
  }
  std::map<std::string, std::size_t> first;
  for (const toml_item& item : items)
    if (std::string problem = apply_item(options, item, first); !problem.empty())
      return toml_where(path, item) + ": " + problem;
  return {};
}

}  // namespace apiary::harness
