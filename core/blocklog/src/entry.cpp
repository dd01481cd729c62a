#include "apiary/core/blocklog/entry.hpp"

#include <cstring>

#include "apiary/core/protocol/hash.hpp"
#include "apiary/core/protocol/serialize.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::core::blocklog {

namespace {

constexpr std::uint64_t compressed_bit = std::uint64_t{1} << 63;
constexpr std::uint64_t dictionary_bit = std::uint64_t{1} << 56;
constexpr int dictionary_shift = 48;
constexpr std::uint64_t known_bits =
    compressed_bit | dictionary_bit | (std::uint64_t{0xff} << dictionary_shift) | max_offset;

// Hive's block_header_extensions: a static variant of void_t, version (a uint32) and
// hardfork_version_vote (a version and a time, two uint32).
void skip_header_extensions(byte_reader& r) {
  const std::uint32_t n = unpack_varint(r, "header extension count");
  for (std::uint32_t i = 0; i < n; ++i) {
    switch (unpack_varint(r, "header extension kind")) {
      case 0: break;
      case 1: r.take(4, "version extension"); break;
      case 2: r.take(8, "hardfork vote extension"); break;
      default: r.fail("unknown header extension kind");
    }
  }
}

// A block id's first 4 bytes: the block's number, big-endian.
void put_block_num(block_id& id, std::uint32_t num) {
  for (std::size_t i = 0; i < 4; ++i) id.data[i] = static_cast<std::uint8_t>(num >> (24 - 8 * i));
}

}  // namespace

std::uint64_t pack_position(const position_word& p) {
  std::uint64_t w = p.offset & max_offset;
  if (p.attributes.compressed) w |= compressed_bit;
  if (p.attributes.dictionary) w |= dictionary_bit | (std::uint64_t{*p.attributes.dictionary} << dictionary_shift);
  return w;
}

std::optional<position_word> unpack_position(std::uint64_t word) {
  if ((word & ~known_bits) != 0) return std::nullopt;
  position_word p;
  p.offset = word & max_offset;
  p.attributes.compressed = (word & compressed_bit) != 0;
  const auto number = static_cast<std::uint8_t>((word >> dictionary_shift) & 0xff);
  if ((word & dictionary_bit) != 0) {
    if (!p.attributes.compressed) return std::nullopt;
    p.attributes.dictionary = number;
  } else if (number != 0) {
    return std::nullopt;
  }
  return p;
}

std::optional<std::uint32_t> packed_block_num(std::span<const std::uint8_t> packed) {
  if (packed.size() < block_id::size()) return std::nullopt;
  block_id previous;
  std::memcpy(previous.begin(), packed.data(), block_id::size());
  return block_num_from_id(previous) + 1;
}

block_id packed_block_id(std::span<const std::uint8_t> packed) {
  byte_reader r(packed);
  r.take(block_id::size(), "previous");
  r.take(4, "timestamp");
  r.take(unpack_varint(r, "witness length"), "witness");
  r.take(ripemd160_digest::size(), "transaction merkle root");
  skip_header_extensions(r);
  r.take(65, "witness signature");
  const sha224_digest h = sha224(packed.data(), r.offset());
  block_id id;
  std::memcpy(id.begin(), h.begin(), block_id::size());
  put_block_num(id, *packed_block_num(packed));
  return id;
}

stripped_id strip_id(const block_id& id) {
  stripped_id s;
  std::memcpy(s.begin(), id.begin() + 4, stripped_id::size());
  return s;
}

block_id unstrip_id(std::uint32_t block_num, const stripped_id& s) {
  block_id id;
  put_block_num(id, block_num);
  std::memcpy(id.begin() + 4, s.begin(), stripped_id::size());
  return id;
}

std::string part_file_name(std::uint32_t part) {
  std::string digits = std::to_string(part);
  if (digits.size() < 4) digits.insert(0, 4 - digits.size(), '0');
  return "block_log_part." + digits;
}

std::uint32_t part_of_file_name(const std::string& name) {
  static constexpr std::string_view stem = "block_log_part.";
  if (name.size() != stem.size() + 4 || name.compare(0, stem.size(), stem) != 0) return 0;
  std::uint32_t part = 0;
  for (std::size_t i = stem.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    part = part * 10 + static_cast<std::uint32_t>(name[i] - '0');
  }
  return part;
}

}  // namespace apiary::core::blocklog
