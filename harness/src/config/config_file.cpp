#include "apiary/harness/config/config_file.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"

namespace apiary::harness {

namespace {

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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The first key given twice in a table (underscores and hyphens alike, quotes dropped), or the
// first table given twice, as an error, or nullopt. CLI11 would keep one of the values, or
// merge adjacent ones into a list.
std::optional<std::string> duplicate_key(std::string_view text) {
  std::map<std::string, std::size_t> first_line;
  std::map<std::string, std::size_t, std::less<>> table_line;
  bool in_multiline = false;  // inside a """ or ''' string, where "a = b" is text
  std::size_t line_no = 0;
  for (std::size_t start = 0; start < text.size(); ++line_no) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    for (const char* quotes : {R"(""")", "'''"})
      for (std::size_t q = line.find(quotes); q != std::string_view::npos; q = line.find(quotes, q + 3))
        in_multiline = !in_multiline;
    if (!in_multiline && line.starts_with('[')) {
      const auto [it, added] = table_line.emplace(line, line_no + 1);
      if (!added)
        return "duplicate table " + shown(line) + " (lines " + std::to_string(it->second) + " and " +
               std::to_string(line_no + 1) + "); give each table once";
      first_line.clear();  // a table's keys are its own
      continue;
    }
    const std::size_t eq = line.find('=');
    if (in_multiline || line.empty() || line.front() == '#' || eq == std::string_view::npos) continue;
    std::string key(trim(line.substr(0, eq)));
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
      key = key.substr(1, key.size() - 2);
    std::replace(key.begin(), key.end(), '_', '-');
    const auto [it, added] = first_line.emplace(key, line_no + 1);
    if (!added)
      return "duplicate key '" + shown(key) + "' (lines " + std::to_string(it->second) + " and " +
             std::to_string(line_no + 1) + "); give each key once";
  }
  return std::nullopt;
}

// CLI11's TOML reader, strict: text only (a byte order mark skipped), no sections (or, with
// `tables`, sections one level deep), each key once with one value, underscores for hyphens.
class toml_reader final : public CLI::ConfigTOML {
 public:
  explicit toml_reader(bool tables = false) : tables_(tables) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::string text((std::istreambuf_iterator<char>(input)), std::istreambuf_iterator<char>());
    // Editors on Windows start UTF-8 files with a byte order mark; it is no part of a key.
    if (text.starts_with("\xef\xbb\xbf")) text.erase(0, 3);
    // TOML is UTF-8 text; say so instead of echoing binary bytes back as a key.
    if (const std::size_t bad = first_non_text_byte(text); bad != std::string::npos)
      throw CLI::ConfigError("not a TOML text file (a control or non-UTF-8 byte at offset " + std::to_string(bad) +
                             ")");
    if (auto twice = duplicate_key(text)) throw CLI::ConfigError(*twice);
    std::istringstream again(text);
    std::vector<CLI::ConfigItem> parsed = CLI::ConfigTOML::from_config(again);
    if (tables_) std::erase_if(parsed, [](const CLI::ConfigItem& i) { return i.name == "++" || i.name == "--"; });
    for (CLI::ConfigItem& item : parsed) {
      if (tables_ && item.parents.size() > 1)
        throw CLI::ConfigError("unknown table [" + shown(item.parents.front() + "." + item.parents[1]) +
                               "]; the tables are one level deep");
      if (!tables_ && (!item.parents.empty() || item.name == "++" || item.name == "--")) {
        const std::string section = item.parents.empty() ? item.name : item.parents.front();
        throw CLI::ConfigError("unknown section [" + shown(section) + "]; the options are top-level keys");
      }
      if (item.inputs.size() != 1) throw CLI::ConfigError(shown(item.name) + ": expected one value, not a list");
    }
    return parsed;
  }

 private:
  bool tables_;
};

// A config file is a page of keys; anything near this size is not one.
constexpr std::uint64_t largest_config = 1024 * 1024;

}  // namespace

std::string read_toml_tables(const std::string& path, std::string_view what, std::vector<toml_item>& items) {
  std::vector<CLI::ConfigItem> parsed;
  try {
    std::istringstream in(read_input_file(path, largest_config, what));
    parsed = toml_reader(true).from_config(in);
  } catch (const input_error& e) {
    return e.what();
  } catch (const CLI::Error& e) {
    return e.what();
  }
  items.clear();
  for (CLI::ConfigItem& item : parsed)
    items.push_back({item.parents.empty() ? std::string() : item.parents.front(), item.name, item.inputs.front()});
  return {};
}

std::string apply_config_file(CLI::App& app, const std::string& path) {
  const std::string named = "--config " + shown_path(path) + ": ";
  std::vector<CLI::ConfigItem> items;
  try {
    std::istringstream in(read_input_file(path, largest_config, "config file"));
    items = toml_reader().from_config(in);
  } catch (const input_error& e) {
    return named + e.what();
  } catch (const CLI::Error& e) {
    return named + e.what();
  }
  for (const CLI::ConfigItem& item : items) {
    std::string key = item.name;
    std::replace(key.begin(), key.end(), '_', '-');
    CLI::Option* opt = key == "config" ? nullptr : app.get_option_no_throw("--" + key);
    if (opt == nullptr)
      return shown_path(path) + ": unknown key '" + shown(item.name) + "' (apiary run --help lists the options)";
    if (opt->count() > 0) continue;  // the command line wins
    try {
      opt->add_result(item.inputs);
      opt->run_callback();
    } catch (const CLI::ParseError& e) {
      return shown_path(path) + ": " + e.what();
    }
  }
  return {};
}

}  // namespace apiary::harness
