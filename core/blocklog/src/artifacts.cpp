#include "apiary/core/blocklog/artifacts.hpp"

#include <cstring>

#include "apiary/core/blocklog/block_log_error.hpp"

namespace apiary::core::blocklog {

namespace {

constexpr std::size_t revision_offset = 4;
constexpr std::size_t revision_size = 41;
constexpr std::size_t major_offset = 45;
constexpr std::size_t minor_offset = 46;
constexpr std::size_t dirty_offset = 47;
constexpr std::size_t tail_offset = 48;
constexpr std::size_t interrupted_offset = 52;

template <class T>
T load(std::span<const std::uint8_t> b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

template <class T>
void store(std::vector<std::uint8_t>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

}  // namespace

artifacts parse_artifacts(std::span<const std::uint8_t> bytes, const std::string& file) {
  artifacts a;
  artifacts_header& h = a.header;
  if (bytes.size() < 48)
    throw block_log_error(file, std::nullopt, bytes.size(),
                          "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than a header");
  h.major = bytes[major_offset];
  h.minor = bytes[minor_offset];
  if (h.major != 1 || h.minor > 1)
    throw block_log_error(
        file, std::nullopt, major_offset,
        "artifacts format " + std::to_string(h.major) + "." + std::to_string(h.minor) + ", not 1.0 or 1.1");
  if (bytes.size() < h.size())
    throw block_log_error(file, std::nullopt, bytes.size(),
                          "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than a v1.1 header");
  h.head_block_num = load<std::uint32_t>(bytes, 0);
  const auto* revision = reinterpret_cast<const char*>(bytes.data() + revision_offset);
  h.git_revision.assign(revision, strnlen(revision, revision_size));
  h.dirty_close = bytes[dirty_offset] != 0;
  if (h.minor == 1) {
    h.tail_block_num = load<std::uint32_t>(bytes, tail_offset);
    h.generating_interrupted_at_block = load<std::uint32_t>(bytes, interrupted_offset);
  }
  const std::size_t body = bytes.size() - h.size();
  if (body % artifacts_entry_size != 0)
    throw block_log_error(
        file, std::nullopt, bytes.size() - body % artifacts_entry_size,
        "truncated: " + std::to_string(body % artifacts_entry_size) + " bytes after the last whole entry");
  a.entries.resize(body / artifacts_entry_size);
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    const std::size_t at = h.size() + i * artifacts_entry_size;
    a.entries[i].position = load<std::uint64_t>(bytes, at);
    std::memcpy(a.entries[i].id.begin(), bytes.data() + at + 8, stripped_id::size());
  }
  return a;
}

std::vector<std::uint8_t> format_artifacts(const artifacts_header& header, std::span<const artifacts_entry> entries) {
  constexpr std::size_t header_size = 56;
  std::vector<std::uint8_t> out(header_size + entries.size() * artifacts_entry_size, 0);
  store(out, 0, header.head_block_num);
  std::memcpy(out.data() + revision_offset, header.git_revision.data(),
              std::min(header.git_revision.size(), revision_size - 1));
  out[major_offset] = 1;
  out[minor_offset] = 1;
  out[dirty_offset] = header.dirty_close ? 1 : 0;
  store(out, tail_offset, header.tail_block_num);
  store(out, interrupted_offset, header.generating_interrupted_at_block);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t at = header_size + i * artifacts_entry_size;
    store(out, at, entries[i].position);
    std::memcpy(out.data() + at + 8, entries[i].id.begin(), stripped_id::size());
  }
  return out;
}

}  // namespace apiary::core::blocklog
