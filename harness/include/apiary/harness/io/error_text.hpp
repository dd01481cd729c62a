// error_text: how an error line shows what the user gave. A value is echoed so the user sees
// which one is meant, never whole: a 200,000-character value, or one holding a newline,
// would break the rule that every error is one short line on stderr.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace apiary::harness {

// The longest value an error line echoes, in characters.
inline constexpr std::size_t shown_limit = 80;

// `value` as an error line echoes it: control characters escaped (\n, \t, \xNN), cut after
// `limit` characters (never inside a UTF-8 sequence) with "…" in place of the rest.
std::string shown(std::string_view value, std::size_t limit = shown_limit);

// A path as an error line echoes it: whole up to `limit` characters (a path is often long
// and its end names the file), else its start and its end around "…"; escaped as shown().
std::string shown_path(std::string_view path, std::size_t limit = 2 * shown_limit);

// A message as one line: control characters escaped, each word (a run without spaces) cut
// as shown() cuts a value, the whole cut after 1,000 characters.
std::string one_line(std::string_view message);

}  // namespace apiary::harness
