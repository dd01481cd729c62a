#include "commands/command_support.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"
#include "apiary/harness/io/error_text.hpp"

namespace apiary::harness {

void error_line(std::string_view command, const std::string& problem) {
  std::fprintf(stderr, "apiary%s%.*s: %s\n", command.empty() ? "" : " ", static_cast<int>(command.size()),
               command.data(), one_line(problem).c_str());
}

int usage_error(std::string_view command, const std::string& problem) {
  error_line(command, problem);
  return exit_usage;
}

bool writable(std::string_view command, const named_path& out) {
  if (out.path.empty()) return true;
  if (auto problem = check_output(out.path, out.use)) {
    usage_error(command, out.option + ": " + *problem);
    return false;
  }
  return true;
}

std::vector<named_path> config_inputs(const run_config& c) {
  return {{"--config", c.config_file},
          {"--state", c.state},
          {"--rc-params", c.rc_params_file},
          {"the genesis key cache ($APIARY_KEY_CACHE)", key_cache_file(c.chain, key_cache_dir())}};
}

bool outputs_usable(std::string_view command, const std::vector<named_path>& inputs,
                    const std::vector<named_path>& outputs) {
  if (auto problem = check_distinct(inputs, outputs)) {
    usage_error(command, *problem);
    return false;
  }
  for (const named_path& out : outputs)
    if (!writable(command, out)) return false;
  return true;
}

bool print_out(std::string_view command, const std::string& text) {
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  if (ok) return true;
  error_line(command, std::string("cannot write to stdout: ") + std::strerror(errno == 0 ? EIO : errno));
  std::clearerr(stdout);
  return false;
}

std::unique_ptr<core::chain> load_state(std::string_view command, const run_config& config,
                                        const core::chain_options& options, state_source& source, int& status) {
  if (config.state.empty()) return nullptr;
  try {
    return load_state_file(config.state, options, available_memory() / 4,
                           {.prefault = config.state_prefault, .verify = config.state_verify}, source);
  } catch (const state_file_error& e) {
    status = usage_error(command, e.what());
    return nullptr;
  }
}

std::string transactions_help(std::uint64_t transactions) {
  return "Normal transactions to generate, taking turns between the --threads streams; --faults companions come "
         "on top (default: " +
         std::to_string(transactions) + ")";
}

}  // namespace apiary::harness
