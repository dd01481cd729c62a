#include "apiary/harness/workload_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "apiary/core/buffer.hpp"
#include "apiary/core/hash.hpp"
#include "apiary/core/serialize.hpp"
#include "apiary/harness/report.hpp"

namespace apiary::harness {

namespace {

constexpr char magic[8] = {'A', 'P', 'I', 'A', 'R', 'Y', 'W', 'L'};
constexpr std::uint32_t format_version = 1;
constexpr std::size_t checksum_size = 32;

}  // namespace

void save_workload(const std::string& path, const saved_workload& w) {
  std::size_t bytes = 128;
  for (const auto& tx : w.transactions) bytes += tx->packed_size() + 5 + 1 + 33 * tx->signer_keys().size();
  core::out_buffer out(bytes);
  {
    core::byte_writer b(out);
    b.write(magic, sizeof magic);
    core::pack(b, format_version);
    core::pack(b, w.meta.seed);
    core::pack(b, w.meta.streams);
    core::pack(b, w.meta.accounts);
    core::pack(b, w.meta.sign);
    for (std::uint64_t n : w.meta.faults) core::pack(b, n);
    core::pack(b, w.meta.account_prefix);
    core::pack(b, w.meta.key_password);
    core::pack(b, w.meta.chain);
    core::pack(b, static_cast<std::uint64_t>(w.transactions.size()));
    for (const auto& tx : w.transactions) {
      core::pack_varint(b, tx->packed_size());
      b.write(tx->packed().data(), tx->packed_size());
      core::pack(b, tx->signer_keys());
    }
  }
  const core::sha256_digest sum = core::sha256(out.data(), out.size());
  out.append(sum.data.data(), sum.data.size());
  save_file(path, out);
}

saved_workload load_workload(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw workload_error("cannot read the workload " + path + ": " + std::strerror(errno));
  const std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw workload_error("cannot read the workload " + path);

  const auto fail = [&](const std::string& what) -> workload_error {
    return workload_error("workload " + path + ": " + what);
  };
  if (file.size() < sizeof magic || std::memcmp(file.data(), magic, sizeof magic) != 0)
    throw fail("not an apiary workload file (it does not start with APIARYWL)");
  if (file.size() < sizeof magic + 4 + checksum_size) throw fail("truncated: " + std::to_string(file.size()) + " bytes");
  const std::size_t body = file.size() - checksum_size;
  const core::sha256_digest sum = core::sha256(file.data(), body);
  const bool intact = std::memcmp(sum.data.data(), file.data() + body, checksum_size) == 0;

  saved_workload w;
  core::byte_reader r(std::span(file.data(), body));
  std::uint64_t count = 0;
  try {
    r.take(sizeof magic, "magic");
    std::uint32_t version = 0;
    core::unpack(r, version);
    if (version != format_version)
      throw fail("format version " + std::to_string(version) + ", this apiary reads version " +
                 std::to_string(format_version) + " (generate it again with this binary)");
    if (!intact) throw fail("damaged or truncated (the checksum does not match its contents)");
    core::unpack(r, w.meta.seed);
    core::unpack(r, w.meta.streams);
    core::unpack(r, w.meta.accounts);
    core::unpack(r, w.meta.sign);
    for (std::uint64_t& n : w.meta.faults) core::unpack(r, n);
    core::unpack(r, w.meta.account_prefix);
    core::unpack(r, w.meta.key_password);
    core::unpack(r, w.meta.chain);
    core::unpack(r, count);
    // Every transaction takes at least a few bytes: a count beyond the input is damage, not a
    // reason to reserve gigabytes.
    if (count > r.remaining()) throw fail("claims " + std::to_string(count) + " transactions in " +
                                          std::to_string(r.remaining()) + " bytes");
    w.transactions.reserve(count);
    std::vector<core::public_key> keys;
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint32_t size = core::unpack_varint(r, "transaction length");
      const std::uint8_t* p = r.take(size, "transaction");
      core::signed_transaction tx;
      try {
        tx = core::unpack_from<core::signed_transaction>(std::span(p, size));
      } catch (const core::decode_error& e) {
        throw fail("transaction " + std::to_string(i) + ": " + e.what());
      }
      keys.clear();
      core::unpack(r, keys);
      w.transactions.push_back(std::make_shared<const core::full_transaction>(std::move(tx), w.meta.chain, keys));
    }
  } catch (const core::decode_error& e) {
    throw fail(e.what());
  }
  if (!r.at_end()) throw fail(std::to_string(r.remaining()) + " unexpected bytes after the last transaction");
  return w;
}

}  // namespace apiary::harness
