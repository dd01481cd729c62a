// config_file: every TOML file apiary reads, through one strict reader over CLI11's TOML
// parser: the file must be a regular file of at most 1 MiB (input_file.hpp), UTF-8 text (a
// byte order mark is skipped; a control or malformed byte is refused, not echoed back as a
// key), each table given once and each key once in its table (underscores and hyphens
// alike), each with one value, not a list. Two kinds of file:
//
//   config files    `apiary run --config FILE`: top-level keys only, each the name of an
//                   option (options.hpp), read into the options the command line did not give;
//   table files     tables one level deep, keys read back as text for the caller to parse
//                   (the --rc-params file, rc_params_file.hpp).
//
// Thread safety: none needed; each call reads its own file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace apiary::harness {

// Reads a config file into the options registered on `app` that the command line did not
// give: without sections, with known keys only (underscores accepted for hyphens). The error
// line naming the file and the key, or "".
std::string apply_config_file(CLI::App& app, const std::string& path);

// One key of a TOML file read by read_toml_tables: its table ("" before the first), its name
// and its value as text (quotes removed).
struct toml_item {
  std::string table;
  std::string key;
  std::string value;
};

// Reads a TOML file of tables as strictly as a config file, its tables one level deep. `what`
// names the kind of file. The items in file order, or the problem (the path not named).
std::string read_toml_tables(const std::string& path, std::string_view what, std::vector<toml_item>& items);

}  // namespace apiary::harness
