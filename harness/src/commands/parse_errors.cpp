#include "commands/parse_errors.hpp"

#include <algorithm>
#include <cstddef>

#include "apiary/harness/io/error_text.hpp"

namespace apiary::harness {

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string near = nearest(word, candidates);
  return near.empty() ? std::string() : "; did you mean " + near + "?";
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::string list_text(const std::vector<std::string>& names, std::string_view last_joint) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? std::string(last_joint) : std::string(", ")) + names[i];
  return out;
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  return names;
}

// No command given, or a word that names none.
std::string missing_command(const CLI::App& app) {
  const std::vector<std::string> commands = command_names(app);
  const std::vector<std::string> rest = app.remaining();
  if (rest.empty()) return "a command is required: " + list_text(commands, " or ");
  const std::string& first = rest.front();
  if (first.starts_with("-"))
    return "unknown option '" + shown(first) + "' before the command; the commands are " + list_text(commands, " and ");
  const std::string near = did_you_mean(first, commands);
  return "unknown command '" + shown(first) + "'" +
         (near.empty() ? "; the commands are " + list_text(commands, " and ") : near);
}

// Arguments that are neither an option of the command nor a value of one: the first of them
// (CLI11 hands a command's leftovers up to the top-level application).
std::string unexpected(const CLI::App& top, const CLI::App& app) {
  const std::vector<std::string> rest = top.remaining(true);
  if (rest.empty()) return "unexpected arguments";
  const std::string& first = rest.front();
  if (first.starts_with("-")) {
    const std::string name = first.substr(0, first.find('='));
    return "unknown option '" + shown(name) + "'" + did_you_mean(name, option_names(app));
  }
  return "unexpected argument '" + shown(first) + "'; options take the form --name VALUE";
}

// CLI11's "--blocks: At Most 1 required but received 2" and "--config: 1 required FILE
// missing", or the text as it is.
std::string mismatch(const std::string& what) {
  const std::size_t colon = what.find(": ");
  if (colon == std::string::npos) return what;
  const std::string name = what.substr(0, colon);
  const std::string rest = what.substr(colon + 2);
  if (rest.starts_with("At Most")) {
    const std::size_t received = rest.rfind(' ');
    return name + " is given " + rest.substr(received + 1) + " times; give it once";
  }
  if (rest.ends_with(" missing")) {
    const std::size_t required = rest.find(" required ");
    const std::string type = required == std::string::npos ? std::string("a value")
                                                           : rest.substr(required + 10, rest.size() - required - 18);
    return name + " needs a value (" + type + ")";
  }
  return what;
}

}  // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

parse_problem explain_parse_error(const CLI::ParseError& e, const CLI::App& app) {
  const std::vector<const CLI::App*> parsed = app.get_subcommands([](const CLI::App* s) { return s->parsed(); });
  const CLI::App* sub = parsed.empty() ? nullptr : parsed.front();
  parse_problem p{sub == nullptr ? std::string() : sub->get_name(), e.what()};
  // By type: CLI11 names some errors after the command that threw them.
  if (sub == nullptr && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr)
    p.text = missing_command(app);
  else if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)
    p.text = unexpected(app, sub == nullptr ? app : *sub);
  else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr)
    p.text = mismatch(e.what());
  return p;
}

}  // namespace apiary::harness
