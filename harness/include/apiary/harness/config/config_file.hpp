// config_file: every TOML file apiary reads, through one reader over toml++ (TOML 1.0, read
// whole, in memory linear in the file's size): the file must be a regular file of at most
// 1 MiB (input_file.hpp), UTF-8 text (a byte order mark is skipped; a control or malformed
// byte is refused, not echoed back as a key), valid TOML (each key and table once), and no
// line of it may hold more than nesting_limit dots, brackets and braces: no key apiary reads
// has more than two parts, and toml++ builds and frees nested tables recursively, so a
// 100,000-part table header would overflow the stack. Every problem is one line naming the
// file and the line: `configs/x.toml:12: unknown key 'colony.thread'`. Two kinds of file:
//
//   config files    `apiary run --config FILE`: top-level keys only, each the name of an
//                   option (options.hpp) and of a type the option reads, read into the
//                   options the command line did not give;
//   table files     read into their values (toml_item) for the caller to check (the
//                   --rc-params file, rc_params_file.hpp).
//
// toml++ is included by config_file.cpp alone. Thread safety: none needed; each call reads its
// own file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace apiary::harness {

class option_binder;

// The most dots, brackets and braces a line of a TOML file apiary reads may hold.
inline constexpr std::size_t nesting_limit = 256;

// Reads a config file into the options registered on `options` that the command line did not
// give: top-level keys only, each an option's name (underscores read as hyphens) and of a
// type it reads. The error line naming the file (and the line and the key), or "".
std::string apply_config_file(option_binder& options, const std::string& path);

// The type of a TOML value.
enum class toml_type : std::uint8_t { string, integer, floating, boolean, array, table, date_time };

// "a string", "an integer", ...: how a message names a type.
std::string_view toml_type_name(toml_type type);

// One value of a TOML file: its key's parts (the tables, then the key; an empty table is a
// value of type table), the line and column it starts at, its type, and its text: a string's contents,
// an integer in decimal, a float as the shortest text that reads back to it (with a point or
// an exponent: 5.0 stays "5.0"), true or false; empty for the other types.
struct toml_item {
  std::vector<std::string> key;
  std::size_t line = 0;
  std::size_t column = 0;
  toml_type type = toml_type::string;
  std::string value;

  std::string dotted() const;  // the key's parts joined by dots
};

// Reads the TOML file at `path`; `what` names the kind of file in messages. The values in file
// order, or the problem naming the file (PATH: or PATH:LINE:).
std::string read_toml(const std::string& path, std::string_view what, std::vector<toml_item>& items);

// "PATH:LINE": where an error line says an item is.
std::string toml_where(const std::string& path, const toml_item& item);

}  // namespace apiary::harness
