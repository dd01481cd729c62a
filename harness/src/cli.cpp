#include "apiary/harness/cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <deque>
#include <array>
#include <span>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return "--config " + path + ": no such file";
  if (std::filesystem::is_directory(status)) return "--config " + path + ": a directory, not a config file";
  if (!std::filesystem::is_regular_file(status)) return "--config " + path + ": not a regular file";
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "--config " + path + ": cannot be read: " + std::strerror(errno);
    // TOML is UTF-8 text; say so instead of echoing binary bytes back as a key.
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (const std::size_t bad = first_non_text_byte(text); bad != std::string::npos)
      return "--config " + path + ": not a TOML text file (a control or non-UTF-8 byte at offset " +
             std::to_string(bad) + ")";
  }
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

namespace {

// The run options one subcommand takes, registered with CLI11; read back by apply().
class option_set {
 public:
  // names: the run_options() to offer (empty: all of them).
  option_set(CLI::App* app, const run_config& defaults, std::span<const std::string_view> names = {}) {
    for (const option_spec& o : run_options()) {
      if (!names.empty() && std::find(names.begin(), names.end(), o.name) == names.end()) continue;
      // The table's default text describes run_config{}'s value; a subcommand with another
      // default shows its own.
      const std::string value = o.get(defaults);
      const std::string def =
          !o.default_text.empty() && value == o.get(run_config{}) ? std::string(o.default_text) : value;
      entries_.push_back({&o, std::string(), nullptr});
      entry& e = entries_.back();
      e.cli = app->add_option("--" + std::string(o.name), e.value, std::string(o.help) + " (default: " + def + ")")
                  ->type_name(std::string(o.placeholder));
    }
  }
  option_set(const option_set&) = delete;
  option_set& operator=(const option_set&) = delete;

  // The names given on the command line.
  std::vector<std::string> given() const {
    std::vector<std::string> out;
    for (const entry& e : entries_)
      if (e.cli->count() > 0) out.emplace_back(e.spec->name);
    return out;
  }

  // Sets every given option; false (after printing the error line) on a bad value.
  bool apply(run_config& c, std::string_view command_name) const {
    for (const entry& e : entries_) {
      if (e.cli->count() == 0) continue;
      if (auto problem = e.spec->set(c, e.value)) {
        std::fprintf(stderr, "apiary %.*s: --%s '%s': %s\n", static_cast<int>(command_name.size()),
                     command_name.data(), std::string(e.spec->name).c_str(), e.value.c_str(), problem->c_str());
        return false;
      }
    }
    return true;
  }

 private:
  struct entry {
    const option_spec* spec;
    std::string value;
    CLI::Option* cli;
  };
  std::deque<entry> entries_;  // stable addresses: CLI11 writes into entry::value
};

// The run options that shape a workload, and those that shape a replay's chain and blocks.
constexpr std::array<std::string_view, 6> workload_option_names = {"seed", "threads", "accounts", "sign", "mix",
                                                                   "faults"};
constexpr std::array<std::string_view, 17> replay_option_names = {
    "seed", "threads", "accounts", "sign", "mix", "faults", "block-size",
    "max-block-size", "block-transactions", "dedup",   "custom-ops",    "signers",
    "block-session", "reversible-blocks", "keep-alive", "pool-objects", "pool-undo"};

}  // namespace

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
  std::string config_file;
  bool print_config = false;
  run->add_option("--config", config_file,
                  "Read options from this TOML file (keys are the option names: blocks = 100); the command line "
                  "overrides it (default: none, the built-in defaults, equal to configs/default.toml)")
      ->type_name("FILE");
  const option_set run_set(run, defaults);
  run->add_flag("--print-config", print_config, "Print the effective options as a config file and exit (default: off)");
  std::uint32_t fail_at_block = 0;
  run->add_option("--fail-at-block", fail_at_block, "Testing: fail the run at this block")->group("");

  run_config replay_defaults;
  replay_defaults.accounts = replay_default_accounts;
  const std::string transactions_help =
      "Normal transactions to generate, taking turns between the --threads streams; --faults companions come on "
      "top (default: " +
      std::to_string(cmd.transactions) + ")";

  CLI::App* workload = app.add_subcommand(
      "workload",
      "Generate a seeded workload once (single-threaded order, signatures on every core) and save it for "
      "`apiary replay --workload`; the same options give the same file");
  workload->footer("Exit status: 0 saved; 1 generation or the file failed; 2 bad command line (nothing written).");
  workload->add_option("--out", cmd.workload_out, "Where the workload goes (required)")->type_name("FILE")->required();
  workload->add_option("--transactions", cmd.transactions, transactions_help)->type_name("N");
  const option_set workload_set(workload, replay_defaults, workload_option_names);

  CLI::App* replay = app.add_subcommand(
      "replay",
      "Push a workload through the writer and the core on one thread, with no other thread running: the same "
      "binary, workload and options execute the same instructions every time (the CI performance gate counts "
      "them with callgrind); prints a summary");
  replay->footer(
      "The measured part is the function apiary_replay_measured: valgrind --tool=callgrind --collect-atstart=no "
      "--toggle-collect=apiary_replay_measured counts only it.\n"
      "Exit status: 0 replayed; 1 the replay or an output failed; 2 bad command line, workload file or output "
      "path.");
  replay->add_option("--workload", cmd.workload_in,
                     "A workload saved by `apiary workload` (default: none, generate one from --seed, --threads, "
                     "--accounts, --sign, --mix, --faults and --transactions first)")
      ->type_name("FILE");
  replay->add_option("--transactions", cmd.transactions, transactions_help + "; without --workload only")
      ->type_name("N");
  replay->add_option("--save-workload", cmd.save_workload, "Also save the generated workload here (default: none)")
      ->type_name("FILE");
  replay->add_option("--report", cmd.replay_report, "Write the result as JSON here (default: none)")
      ->type_name("PATH");
  const option_set replay_set(replay, replay_defaults, replay_option_names);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    cmd.status = app.exit(e);
    return cmd;
  } catch (const CLI::CallForAllHelp& e) {
    cmd.status = app.exit(e);
    return cmd;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "apiary: %s (apiary --help lists the commands, apiary COMMAND --help their options)\n",
                 e.what());
    cmd.status = exit_usage;
    return cmd;
  }

  run_config& c = cmd.config;
  const auto fail = [&cmd](std::string_view name, const std::string& problem) {
    std::fprintf(stderr, "apiary %.*s: %s\n", static_cast<int>(name.size()), name.data(), problem.c_str());
    cmd.status = exit_usage;
    return cmd;
  };

  if (workload->parsed() || replay->parsed()) {
    const bool is_replay = replay->parsed();
    const std::string_view name = is_replay ? "replay" : "workload";
    cmd.which = is_replay ? subcommand::replay : subcommand::workload;
    c = replay_defaults;
    if (!(is_replay ? replay_set : workload_set).apply(c, name)) {
      cmd.status = exit_usage;
      return cmd;
    }
    if (cmd.transactions == 0) return fail(name, "--transactions 0: at least one transaction");
    if (is_replay && !cmd.workload_in.empty()) {
      for (std::string_view generation : workload_option_names)
        if (replay->count("--" + std::string(generation)) > 0)
          return fail(name, "--" + std::string(generation) + ": the workload was generated already (--workload " +
                                cmd.workload_in + "); drop one of the two");
      if (replay->count("--transactions") > 0 || !cmd.save_workload.empty())
        return fail(name, "--transactions and --save-workload only apply when the replay generates its workload "
                          "(without --workload)");
    }
    if (auto problem = validate(c)) return fail(name, *problem);
    cmd.run = true;
    return cmd;
  }

  const std::vector<std::string> given = run_set.given();
  if (!config_file.empty()) {
    c.config_file = config_file;
    c.name = std::filesystem::path(config_file).stem().string();
    if (auto problem = apply_config_file(config_file, c, given)) return fail("run", *problem);
  }
  if (!run_set.apply(c, "run")) {
    cmd.status = exit_usage;
    return cmd;
  }
  if (auto problem = validate(c)) return fail("run", *problem);
  c.fail_at_block = fail_at_block;
  cmd.print_config = print_config;
  cmd.run = true;
  return cmd;
}

}  // namespace apiary::harness
