// options: the command-line options of `apiary run`, `workload`, `replay` and `snapshot`, each bound by
// CLI11 straight to its field in run_config, with its validator. bind_run_options() holds one
// line per option; everything else about an option (its config-file key, --help, its default,
// --print-config, the report's "config" section) is derived from that line, so adding a
// switch is: its field, its option line, its use.
//
// Config files are TOML files whose keys are the option names (underscores accepted for
// hyphens), each value read as the option reads its text; the command line overrides them;
// an unknown key or a table is an error. Reading them is config_file.hpp's (over toml++;
// CLI11 reads the command line alone); to_toml here writes one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiary/core/base/named_enum.hpp"
#include "apiary/harness/config/run_config.hpp"

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace apiary::harness {

// How a value is written in TOML and JSON.
enum class value_kind : std::uint8_t {
  number,  // a bare number
  text,    // a string
  toggle,  // "on" / "off" in TOML; a boolean in JSON
};

// Which subcommands take an option (a bit mask).
enum option_scope : unsigned {
  scope_run = 1u,
  scope_workload = 2u,
  scope_replay = 4u,
  scope_snapshot = 8u,
  scope_rc_params = 16u,  // apiary rc-params: the RC parameter options alone
  scope_generation = scope_run | scope_workload | scope_replay | scope_snapshot,  // shapes the transactions
  scope_chain = scope_run | scope_replay | scope_snapshot,                        // shapes the chain and its blocks
};

// One option's effective value, in the form the option reads back.
struct config_entry {
  std::string name;  // without the dashes: the config-file key
  value_kind kind;
  std::string text;          // empty: not set
  std::string default_text;  // what an unset value means
  unsigned scope;            // option_scope: the subcommands that take it
  // Whether the value shapes the state `apiary snapshot` makes with it, rather than only how
  // the chain runs or where its state lives (the state cache's key: replay/state_cache.hpp).
  bool shapes_state = true;
};

// Registers options on one CLI11 subcommand, bound to fields of one run_config, and keeps
// how to print each back. Registers only the options whose scope includes the subcommand's.
class option_binder {
 public:
  option_binder(CLI::App& app, unsigned command_scope);
  ~option_binder();
  option_binder(const option_binder&) = delete;
  option_binder& operator=(const option_binder&) = delete;

  // The --help group and the scope of the options that follow; they shape the state.
  void section(std::string group, unsigned scope);
  // Whether the options that follow, until the next section(), shape the state a snapshot
  // makes (config_entry::shapes_state).
  void shaping(bool shapes_state) { shapes_state_ = shapes_state; }

  void count(std::string_view name, std::uint32_t& field, std::uint32_t min, std::uint32_t max, std::string_view help);
  void count(std::string_view name, std::uint64_t& field, std::uint64_t min, std::uint64_t max, std::string_view help);
  // A byte size ("64KiB", "2MiB-256") in [min, max]; default_text replaces the number in --help.
  void size(std::string_view name, std::uint32_t& field, std::uint32_t min, std::uint32_t max, std::string_view help,
            std::string_view default_text = {});
  // A duration in seconds ("90", "500ms", "2m") in [0, max_s].
  void duration(std::string_view name, double& field, double max_s, std::string_view help);
  void toggle(std::string_view name, bool& field, std::string_view help);
  template <class E, std::size_t N>
  void choice(std::string_view name, E& field, const std::array<core::enum_name<E>, N>& table, std::string_view help);
  // A path or name; `check` (optional) says what is wrong with a value, or returns "".
  void text(std::string_view name, std::string& field, std::string_view placeholder, std::string_view help,
            std::string_view default_text = {}, std::function<std::string(const std::string&)> check = {});
  // Anything else: `set` parses the text into the config (an error message, or ""), `get`
  // prints it back.
  void custom(std::string_view name, std::string_view placeholder, value_kind kind, std::string_view help,
              std::function<std::string(const std::string&)> set, std::function<std::string()> get,
              std::string_view default_text = {});

  // Every registered option's value now.
  std::vector<config_entry> values() const;
  // The names of the registered options in `scope` that were given (command line or file).
  std::vector<std::string> given(unsigned scope) const;

  // The registered option named `name` (a config file's key, hyphens only), or nullopt.
  struct option_ref {
    CLI::Option* cli;
    value_kind kind;
  };
  std::optional<option_ref> find(std::string_view name) const;

 private:
  struct bound;
  CLI::Option* add(std::string_view name, std::string_view placeholder, value_kind kind, std::string_view help,
                   std::function<std::string()> get, std::string_view default_text,
                   const std::function<CLI::Option*(const std::string&, const std::string&)>& make);
  CLI::Option* add_choice(std::string_view name, const std::string& placeholder, std::string_view help,
                          std::function<std::string()> get, std::vector<std::pair<std::string, int>> names,
                          std::function<void(int)> assign);

  CLI::App& app_;
  unsigned command_scope_;
  unsigned scope_ = scope_generation;
  bool shapes_state_ = true;
  std::string group_ = "Options";
  std::vector<std::unique_ptr<bound>> bound_;
};

template <class E, std::size_t N>
void option_binder::choice(std::string_view name, E& field, const std::array<core::enum_name<E>, N>& table,
                           std::string_view help) {
  std::vector<std::pair<std::string, int>> names;
  names.reserve(N);
  for (const auto& entry : table) names.emplace_back(std::string(entry.name), static_cast<int>(entry.value));
  add_choice(
      name, core::names_text(table, "|"), help, [&field, &table] { return std::string(core::name_of(table, field)); },
      std::move(names), [&field](int v) { field = static_cast<E>(v); });
}

// A count's validator, for options outside bind_run_options(): a whole number from min to max
// (digit groups allowed), the error stating both and echoing the value shortened (shown()).
CLI::Validator count_check(std::uint64_t min, std::uint64_t max);

// A path's validator, for options outside bind_run_options(): an empty path or "-" is refused
// as the path options of bind_run_options() refuse it.
CLI::Validator path_check();

// Every option of `apiary run`, bound to c; workload and replay take those in their scope.
void bind_run_options(option_binder& b, run_config& c);

// The options of `scope` and their values in c, in option order (for --print-config and the
// report's "config" section).
std::vector<config_entry> describe(const run_config& c, unsigned scope = scope_run);

// The entries as a config file that --config reads back.
std::string to_toml(const std::vector<config_entry>& entries);

// Parses `args` ("--name", "value", ...) into c as `apiary run` would, without resolve() or
// validate(): the error line, or "" (for the tests and for tools that set options by name).
std::string apply_options(run_config& c, const std::vector<std::string>& args);

}  // namespace apiary::harness
