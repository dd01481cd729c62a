#include "apiary/harness/io/state_file.hpp"

#include <algorithm>

#include "apiary/core/base/clock.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/chain_snapshot.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/output_file.hpp"

namespace apiary::harness {

std::unique_ptr<core::chain> load_state_file(const std::string& path, const core::chain_options& options,
                                             std::uint64_t max_bytes, state_source& source) {
  const std::string named = "--state " + shown_path(path) + ": ";
  const std::int64_t t0 = core::steady_now_ns();
  try {
    const binary_input_file file(path, max_bytes, "state snapshot");
    core::snapshot_info info;
    std::unique_ptr<core::chain> chain = core::chain::from_snapshot(options, file.bytes(), &info);
    source = {path, core::to_hex(info.state_digest), info.head_block_num, info.file_size, core::steady_now_ns() - t0};
    return chain;
  } catch (const input_error& e) {
    throw state_file_error(named + e.what());
  } catch (const core::snapshot_error& e) {
    throw state_file_error(named + e.what());
  }
}

std::optional<state_source> save_state_file(const std::string& path, const core::chain& chain,
                                            const std::function<bool()>& cancelled) {
  const std::int64_t t0 = core::steady_now_ns();
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
  return state_source{path, core::to_hex(info.state_digest), info.head_block_num, info.file_size,
                      core::steady_now_ns() - t0};
}

}  // namespace apiary::harness
