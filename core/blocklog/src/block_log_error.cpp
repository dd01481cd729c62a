#include "apiary/core/blocklog/block_log_error.hpp"

namespace apiary::core::blocklog {

namespace {

std::string message(const std::string& file, std::optional<std::uint32_t> block, std::optional<std::uint64_t> offset,
                    const std::string& what) {
  std::string m = file + ":";
  if (block) m += " block " + std::to_string(*block);
  if (offset) m += " at byte " + std::to_string(*offset);
  return m + ": " + what;
}

}  // namespace

block_log_error::block_log_error(const std::string& file, std::optional<std::uint32_t> block,
                                 std::optional<std::uint64_t> offset, const std::string& what)
    : std::runtime_error(message(file, block, offset, what)), file_(file), block_(block), offset_(offset) {}

}  // namespace apiary::core::blocklog
