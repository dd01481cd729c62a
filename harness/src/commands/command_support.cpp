#include "commands/command_support.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/harness/replay/state_cache.hpp"
#include "cycle/signals.hpp"

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
          {"--state-blocks (its state in the cache)", c.state_blocks == 0 || state_cache_dir().empty()
                                                          ? std::string()
                                                          : cached_state_path(c, c.state_blocks, state_cache_dir())},
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

namespace {

std::unique_ptr<core::chain> open_state(const std::string& path, const run_config& config,
                                        const core::chain_options& options, state_source& source) {
  std::unique_ptr<core::chain> chain =
      load_state_file(path, options, available_memory() / 4,
                      {.prefault = config.state_prefault, .verify = config.state_verify}, source);
  source.resident_bytes = current_rss_bytes();
  return chain;
}

// --state-blocks: the cached state, found or made (under its own signal guard: making takes
// minutes), then opened; a cached state that does not open is made again once.
std::unique_ptr<core::chain> open_cached_state(std::string_view command, const run_config& config,
                                               const core::chain_options& options, state_source& source, int& status) {
  const interrupt_guard signals;
  const std::function<bool()> cancelled = [] { return interrupt_signal() != 0; };
  const auto say = [command](const std::string& line) {
    std::fprintf(stderr, "apiary %.*s: %s\n", static_cast<int>(command.size()), command.data(), line.c_str());
  };
  for (bool again = false;; again = true) {
    const std::optional<cached_state> cached = find_or_make_state(config, config.state_blocks, cancelled, say);
    if (!cached) {
      const int sig = interrupt_signal();
      error_line(command, "interrupted by " + signal_name(sig) + " while the state was made: nothing kept");
      status = 128 + sig;
      return nullptr;
    }
    try {
      std::unique_ptr<core::chain> chain = open_state(cached->path, config, options, source);
      source.made_ns = cached->make_ns;
      return chain;
    } catch (const state_file_error& e) {
      if (again || cached->made) throw;
      say("the cached state cannot be used (" + std::string(e.what()) + "): making it again");
      if (!forget_cached_state(cached->path)) throw;
    }
  }
}

}  // namespace

std::unique_ptr<core::chain> load_state(std::string_view command, const run_config& config,
                                        const core::chain_options& options, state_source& source, int& status) {
  try {
    if (config.state_blocks != 0) return open_cached_state(command, config, options, source, status);
    if (config.state.empty()) return nullptr;
    return open_state(config.state, config, options, source);
  } catch (const state_file_error& e) {
    status = usage_error(command, e.what());
  } catch (const state_cache_error& e) {
    status = usage_error(command, "--state-blocks: " + std::string(e.what()));
  }
  return nullptr;
}

std::string transactions_help(std::uint64_t transactions) {
  return "Normal transactions to generate, taking turns between the --threads streams; --faults companions come "
         "on top (default: " +
         std::to_string(transactions) + ")";
}

}  // namespace apiary::harness
