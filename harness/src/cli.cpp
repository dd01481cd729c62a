#include "apiary/harness/cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace apiary::harness {

namespace {

constexpr const char* exit_help =
    "Exit status: 0 the run completed; 1 the run failed (the report says why) or the report could not be written; "
    "2 bad command line, config file or output path (nothing ran); 130 interrupted by SIGINT, 143 by SIGTERM "
    "(the report is marked \"interrupted\": true).";

std::string key_of(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

std::string toml_value(const option_spec& o, const std::string& v) {
  if (o.kind == value_kind::number) return v;
  std::string q = "\"";
  for (char ch : v) {
    if (ch == '"' || ch == '\\') q.push_back('\\');
    q.push_back(ch);
  }
  q.push_back('"');
  return q;
}

}  // namespace

std::string config_to_toml(const run_config& c) {
  std::string out;
  for (const option_spec& o : run_options()) {
    const std::string v = o.get(c);
    if (v.empty()) {
      out += "# " + std::string(o.name) + " = (" + std::string(o.default_text) + ")\n";
      continue;
    }
    out += std::string(o.name) + " = " + toml_value(o, v) + "\n";
  }
  return out;
}

std::optional<std::string> apply_config_file(const std::string& path, run_config& c,
                                             const std::vector<std::string>& given) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "--config " + path + ": no such file";
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_file(path);
  } catch (const CLI::Error& e) {
    return "--config " + path + ": " + e.what();
  }
  for (const CLI::ConfigItem& item : items) {
    if (!item.parents.empty() || item.name == "++" || item.name == "--") {
      const std::string section = item.parents.empty() ? item.name : item.parents.front();
      return path + ": unknown section [" + section + "]; the options are top-level keys";
    }
    const std::string key = key_of(item.name);
    const option_spec* o = find_option(key);
    if (o == nullptr) return path + ": unknown key '" + item.name + "' (apiary run --help lists the options)";
    if (std::find(given.begin(), given.end(), key) != given.end()) continue;  // the command line wins
    if (item.inputs.size() != 1) return path + ": " + item.name + ": expected one value, not a list";
    if (auto problem = o->set(c, item.inputs.front()))
      return path + ": " + item.name + " = '" + item.inputs.front() + "': " + *problem;
  }
  return std::nullopt;
}

command parse_command_line(int argc, const char* const* argv) {
  command cmd;
  CLI::App app("apiary: Hive's colony + queen full-block-cycle test for a node core", "apiary");
  app.require_subcommand(1, 1);
  app.footer(exit_help);
  CLI::App* run = app.add_subcommand(
      "run",
      "Run the cycle test: producer threads build and sign transactions, the writer fills and applies blocks; "
      "prints a summary and writes a JSON report");
  run->footer(exit_help);

  const run_config defaults;
  const auto specs = run_options();
  std::vector<std::string> values(specs.size());
  std::vector<CLI::Option*> cli_options(specs.size());
  std::string config_file;
  bool print_config = false;
  run->add_option("--config", config_file,
                  "Read options from this TOML file (keys are the option names: blocks = 100); the command line "
                  "overrides it (default: none, the built-in defaults, equal to configs/default.toml)")
      ->type_name("FILE");
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const option_spec& o = specs[i];
    const std::string def = o.default_text.empty() ? o.get(defaults) : std::string(o.default_text);
    cli_options[i] = run->add_option("--" + std::string(o.name), values[i],
                                     std::string(o.help) + " (default: " + def + ")")
                         ->type_name(std::string(o.placeholder));
  }
  run->add_flag("--print-config", print_config, "Print the effective options as a config file and exit (default: off)");
  std::uint32_t fail_at_block = 0;
  run->add_option("--fail-at-block", fail_at_block, "Testing: fail the run at this block")->group("");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    cmd.status = app.exit(e);
    return cmd;
  } catch (const CLI::CallForAllHelp& e) {
    cmd.status = app.exit(e);
    return cmd;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "apiary: %s (apiary run --help lists the options)\n", e.what());
    cmd.status = exit_usage;
    return cmd;
  }

  run_config& c = cmd.config;
  std::vector<std::string> given;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (cli_options[i]->count() > 0) given.emplace_back(specs[i].name);

  if (!config_file.empty()) {
    c.config_file = config_file;
    c.name = std::filesystem::path(config_file).stem().string();
    if (auto problem = apply_config_file(config_file, c, given)) {
      std::fprintf(stderr, "apiary run: %s\n", problem->c_str());
      cmd.status = exit_usage;
      return cmd;
    }
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (cli_options[i]->count() == 0) continue;
    if (auto problem = specs[i].set(c, values[i])) {
      std::fprintf(stderr, "apiary run: --%s '%s': %s\n", std::string(specs[i].name).c_str(), values[i].c_str(),
                   problem->c_str());
      cmd.status = exit_usage;
      return cmd;
    }
  }
  if (auto problem = validate(c)) {
    std::fprintf(stderr, "apiary run: %s\n", problem->c_str());
    cmd.status = exit_usage;
    return cmd;
  }
  c.fail_at_block = fail_at_block;
  cmd.print_config = print_config;
  cmd.run = true;
  return cmd;
}

}  // namespace apiary::harness
