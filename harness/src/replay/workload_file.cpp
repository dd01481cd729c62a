#include "apiary/harness/replay/workload_file.hpp"

#include <cstring>
#include <optional>

#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/hash.hpp"
#include "apiary/core/protocol/serialize.hpp"
#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/output_file.hpp"

namespace apiary::harness {

namespace {

constexpr char magic[8] = {'A', 'P', 'I', 'A', 'R', 'Y', 'W', 'L'};
constexpr std::uint32_t format_version = 2;  // 2: nine fault kinds (no-rc)
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

namespace {

// The smallest record a transaction takes in the file: its length (1 byte), the smallest
// signed transaction (13 bytes: TaPoS 6, expiration 4, three empty lists) and an empty key
// list (1 byte).
constexpr std::uint64_t smallest_record = 15;

// What a header may say, checked before anything is built from it: the checksum only proves
// the file is what was written, not that a sane apiary wrote it.
std::optional<std::string> header_problem(const workload_meta& m) {
  const std::uint32_t most_streams = colony::colony_config::max_threads;
  if (m.streams < 1 || m.streams > most_streams)
    return "its header says " + std::to_string(m.streams) + " streams; allowed 1 to " + std::to_string(most_streams);
  if (m.accounts < m.streams || m.accounts > max_genesis_accounts)
    return "its header says " + std::to_string(m.accounts) + " accounts; allowed " + std::to_string(m.streams) +
           " (one per stream) to " + std::to_string(max_genesis_accounts);
  colony::colony_config k;
  k.threads = m.streams;
  k.genesis_accounts = m.accounts;
  k.account_prefix = m.account_prefix;
  if (auto problem = k.validate()) return "its header's genesis is not valid: " + shown(*problem);
  if (m.key_password.size() > 256)
    return "its header's key password is " + std::to_string(m.key_password.size()) + " bytes; at most 256";
  return std::nullopt;
}

// Decodes `count` transactions (their count already checked against the bytes left).
template <class Fail>
void read_transactions(core::byte_reader& r, std::uint64_t count, saved_workload& w, const Fail& fail) {
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
}

void read_header(core::byte_reader& r, workload_meta& m) {
  core::unpack(r, m.seed);
  core::unpack(r, m.streams);
  core::unpack(r, m.accounts);
  core::unpack(r, m.sign);
  for (std::uint64_t& n : m.faults) core::unpack(r, n);
  core::unpack(r, m.account_prefix);
  core::unpack(r, m.key_password);
  core::unpack(r, m.chain);
}

}  // namespace

saved_workload load_workload(const std::string& path) {
  const auto fail = [&](const std::string& what) -> workload_error {
    return workload_error("workload " + shown_path(path) + ": " + what);
  };
  // The file, then its decoded transactions, must fit: a file is read whole.
  std::string file;
  try {
    file = read_input_file(path, available_memory(), "workload file");
  } catch (const input_error& e) {
    throw workload_error("cannot read the workload " + shown_path(path) + ": " + e.what());
  }
  if (file.size() < sizeof magic || std::memcmp(file.data(), magic, sizeof magic) != 0)
    throw fail("not an apiary workload file (it does not start with APIARYWL)");
  if (file.size() < sizeof magic + 4 + checksum_size)
    throw fail("truncated: " + std::to_string(file.size()) + " bytes");
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
  const std::size_t body = file.size() - checksum_size;
  const core::sha256_digest sum = core::sha256(bytes, body);
  const bool intact = std::memcmp(sum.data.data(), bytes + body, checksum_size) == 0;

  saved_workload w;
  core::byte_reader r(std::span(bytes, body));
  try {
    r.take(sizeof magic, "magic");
    std::uint32_t version = 0;
    core::unpack(r, version);
    if (version != format_version)
      throw fail("format version " + std::to_string(version) + ", this apiary reads version " +
                 std::to_string(format_version) + " (generate it again with this binary)");
    if (!intact) throw fail("damaged or truncated (the checksum does not match its contents)");
    read_header(r, w.meta);
    if (auto problem = header_problem(w.meta)) throw fail(*problem);
    std::uint64_t count = 0;
    core::unpack(r, count);
    // A count beyond what the bytes can hold is damage, not a reason to reserve gigabytes.
    if (count > r.remaining() / smallest_record)
      throw fail("claims " + std::to_string(count) + " transactions in " + std::to_string(r.remaining()) + " bytes");
    if (auto problem = memory_problem(file.size() + count * bytes_per_transaction))
      throw fail(std::to_string(count) + " transactions need " + *problem);
    read_transactions(r, count, w, fail);
  } catch (const core::decode_error& e) {
    throw fail(e.what());
  }
  if (!r.at_end()) throw fail(std::to_string(r.remaining()) + " unexpected bytes after the last transaction");
  return w;
}

}  // namespace apiary::harness
