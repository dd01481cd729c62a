#include "apiary/harness/io/state_file.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "apiary/core/base/clock.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/chain_snapshot.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/state/state_region.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/output_file.hpp"

namespace apiary::harness {

namespace {

constexpr std::string_view state_file_magic = "APIARYMS";

std::unique_ptr<core::chain> open_mapped(const std::string& path, core::chain_options options, const state_open& how,
                                         state_source& source) {
  const std::int64_t t0 = core::steady_now_ns();
  options.memory = core::state_memory::mapped;
  core::snapshot_info info;
  std::unique_ptr<core::chain> chain = core::chain::open_state(options, path, {.prefault = how.prefault}, &info);
  const core::state_region& region = *chain->region();
  std::int64_t verify_ns = 0;
  if (how.verify) {
    const std::int64_t t = core::steady_now_ns();
    if (std::string problem = region.verify_content(); !problem.empty()) throw core::state_region_error(problem);
    verify_ns = core::steady_now_ns() - t;
  }
  source = {.path = path,
            .format = "state file",
            .state_digest = core::to_hex(info.state_digest),
            .head_block_num = info.head_block_num,
            .bytes = region.opened().file_bytes + core::state_region::header_bytes,
            .load_ns = core::steady_now_ns() - t0,
            .open_ns = region.opened().map_time.count(),
            .prefault_ns = region.opened().prefault_time.count(),
            .verify_ns = verify_ns};
  return chain;
}

}  // namespace

bool is_state_file(const std::string& path) {
  // Only a regular file is read (a FIFO would block): anything else is for the snapshot's
  // reader to refuse by its kind.
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  std::array<char, state_file_magic.size()> head{};
  return in.read(head.data(), head.size()) && std::string_view(head.data(), head.size()) == state_file_magic;
}

std::unique_ptr<core::chain> load_state_file(const std::string& path, const core::chain_options& options,
                                             std::uint64_t max_bytes, const state_open& how, state_source& source) {
  const std::string named = "--state " + shown_path(path) + ": ";
  try {
    if (is_state_file(path)) return open_mapped(path, options, how, source);
    const std::int64_t t0 = core::steady_now_ns();
    const binary_input_file file(path, max_bytes, "state snapshot");
    core::snapshot_info info;
    std::unique_ptr<core::chain> chain = core::chain::from_snapshot(options, file.bytes(), &info);
    source = {.path = path,
              .format = "snapshot",
              .state_digest = core::to_hex(info.state_digest),
              .head_block_num = info.head_block_num,
              .bytes = info.file_size,
              .load_ns = core::steady_now_ns() - t0};
    return chain;
  } catch (const input_error& e) {
    throw state_file_error(named + e.what());
  } catch (const core::snapshot_error& e) {
    throw state_file_error(named + e.what());
  } catch (const core::state_region_error& e) {
    // The region names the file itself; the option comes first as everywhere.
    throw state_file_error("--state: " + std::string(e.what()));
  }
}

verified_state verify_state_file(const std::string& path, std::uint64_t max_bytes) {
  try {
    const std::int64_t t0 = core::steady_now_ns();
    verified_state v;
    if (is_state_file(path)) {
      v.info = core::chain::verify_state(path);
      v.format = "state file";
    } else {
      const binary_input_file file(path, max_bytes, "state snapshot");
      v.info = core::check_snapshot(file.bytes());
      v.format = "snapshot";
    }
    v.check_ns = core::steady_now_ns() - t0;
    return v;
  } catch (const input_error& e) {
    throw state_file_error(shown_path(path) + ": " + e.what());
  } catch (const core::snapshot_error& e) {
    throw state_file_error(shown_path(path) + ": " + e.what());
  } catch (const core::state_region_error& e) {
    throw state_file_error(e.what());  // it names the file
  }
}

std::optional<state_source> save_state_file(const std::string& path, core::chain& chain,
                                            const std::function<bool()>& cancelled) {
  const std::int64_t t0 = core::steady_now_ns();
  if (chain.region() != nullptr) {
    if (cancelled()) return std::nullopt;
    const core::sha256_digest digest = chain.write_state(path);
    std::error_code ec;
    const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
    return state_source{.path = path,
                        .format = "state file",
                        .state_digest = core::to_hex(digest),
                        .head_block_num = chain.head_block_num(),
                        .bytes = ec ? 0 : bytes,
                        .load_ns = core::steady_now_ns() - t0};
  }
  core::out_buffer content;
  chain.write_snapshot(content);
  const core::snapshot_info info = core::check_snapshot(content.span());  // a bug if it throws
  if (cancelled()) return std::nullopt;
  output_file out(path);
  // Chunks of 16 MiB: a few milliseconds each, so a signal stops the write at once.
  constexpr std::size_t chunk = std::size_t{16} << 20;
  for (std::size_t at = 0; at < content.size(); at += chunk) {
    if (cancelled()) return std::nullopt;  // out's destructor removes the temporary file
    out.write(content.data() + at, std::min(chunk, content.size() - at));
  }
  if (cancelled()) return std::nullopt;
  out.commit();
  return state_source{.path = path,
                      .format = "snapshot",
                      .state_digest = core::to_hex(info.state_digest),
                      .head_block_num = info.head_block_num,
                      .bytes = info.file_size,
                      .load_ns = core::steady_now_ns() - t0};
}

}  // namespace apiary::harness
