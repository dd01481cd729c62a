// parse_errors: what CLI11 says of a command line it cannot parse, in apiary's words. An
// unknown command or option is named with the nearest valid one; an option given twice, or
// without its value, says so.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace apiary::harness {

struct parse_problem {
  std::string command;  // the subcommand being parsed ("run"), or empty before one
  std::string text;     // one line, without the "apiary COMMAND: " prefix
};

// `app` is the top-level application, after its parse() threw `e`.
parse_problem explain_parse_error(const CLI::ParseError& e, const CLI::App& app);

// The candidate nearest to `word` by edit distance, or empty when none is near (a distance
// above a third of the word's length, and above 2).
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace apiary::harness
