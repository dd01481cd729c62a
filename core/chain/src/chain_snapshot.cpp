// chain::write_snapshot, chain::from_snapshot and check_snapshot (chain_snapshot.hpp has the
// format). The objects are written field by field through their fields() lists, the leaves in
// Hive's wire encoding (serialize.hpp), and loaded back through undo_index's public API
// (insert_saved in id order, set_next_id): nothing here depends on how an index is built.
#include "apiary/core/chain/chain_snapshot.hpp"

#include <xxhash.h>

#include <boost/version.hpp>

#include <array>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <typeinfo>

#include "apiary/core/base/check.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/state_fields.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/serialize.hpp"

namespace apiary::core {

namespace {

constexpr std::array<char, 8> magic{'A', 'P', 'I', 'A', 'R', 'Y', 'S', 'T'};
constexpr std::size_t checksum_size = sizeof(std::uint64_t);
// magic, version, file size: what is read before the checksum is known to hold.
constexpr std::size_t fixed_header_size = magic.size() + sizeof(std::uint32_t) + sizeof(std::uint64_t);

// Every index of the chain's database, in the order of the file, with its section's name.
template <class F>
void for_each_section(F&& f) {
  f("accounts", std::type_identity<account_index>{});
  f("comments", std::type_identity<comment_index>{});
  f("votes", std::type_identity<comment_vote_index>{});
  f("block_summaries", std::type_identity<block_summary_index>{});
  f("global_properties", std::type_identity<global_properties_index>{});
  f("transactions", std::type_identity<transaction_index>{});
  f("custom_op_counters", std::type_identity<custom_op_counter_index>{});
}
constexpr std::uint32_t section_count = 7;

// ---- the objects' encoding --------------------------------------------------------------

template <class V>
constexpr bool is_std_array = false;
template <class T, std::size_t N>
constexpr bool is_std_array<std::array<T, N>> = true;
template <class V>
constexpr bool is_fixed_bytes = false;
template <std::size_t N>
constexpr bool is_fixed_bytes<fixed_bytes<N>> = true;

template <class P>
struct member_of;
template <class T, class M>
struct member_of<M T::*> {
  using type = M;
};

// A state object field by field, nested objects' fields inline, fixed arrays element by
// element, everything else (integers, times, names, strings, keys, ids, beneficiary lists) in
// the wire encoding.
template <class V>
void put(byte_writer& w, const V& v) {
  if constexpr (state_fields<V>) {
    V::fields([&w, &v](const char*, auto member) { put(w, v.*member); });
  } else if constexpr (is_std_array<V>) {
    for (const auto& e : v) put(w, e);
  } else if constexpr (std::is_same_v<V, state_string>) {
    pack(w, std::string(v.view()));
  } else {
    pack(w, v);
  }
}

template <class V>
void get(byte_reader& r, V& v) {
  if constexpr (state_fields<V>) {
    V::fields([&r, &v](const char*, auto member) { get(r, v.*member); });
  } else if constexpr (is_std_array<V>) {
    for (auto& e : v) get(r, e);
  } else if constexpr (std::is_same_v<V, state_string>) {
    std::string text;
    unpack(r, text);
    v = text;
  } else {
    unpack(r, v);
  }
}

// The layout id's text of a type: names and types of every field, nested ones included.
template <class V>
void describe(std::string& out) {
  if constexpr (state_fields<V>) {
    out += '{';
    V::fields([&out](const char* name, auto member) {
      out += name;
      out += ':';
      describe<typename member_of<decltype(member)>::type>(out);
      out += ';';
    });
    out += '}';
  } else if constexpr (is_std_array<V>) {
    out += "array" + std::to_string(std::tuple_size_v<V>) + '<';
    describe<typename V::value_type>(out);
    out += '>';
  } else if constexpr (std::is_same_v<V, bool>) {
    out += "bool";
  } else if constexpr (std::is_integral_v<V>) {
    out += (std::is_signed_v<V> ? 'i' : 'u') + std::to_string(8 * sizeof(V));
  } else if constexpr (std::is_same_v<V, time_point_sec>) {
    out += "time";
  } else if constexpr (std::is_same_v<V, account_name>) {
    out += "name";
  } else if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, state_string>) {
    out += "string";
  } else if constexpr (sequence<V>) {
    out += "list<";
    describe<typename V::value_type>(out);
    out += '>';
  } else if constexpr (reflected<V>) {
    V v{};
    out += '{';
    V::fields(v, [&out](const char* name, auto& m) {
      out += name;
      out += ':';
      describe<std::remove_cvref_t<decltype(m)>>(out);
      out += ';';
    });
    out += '}';
  } else if constexpr (is_fixed_bytes<V>) {
    out += "bytes" + std::to_string(V::size());
  } else {
    static_assert(sizeof(V) == 0, "a snapshot has no encoding for this type");  // false, but only when reached
  }
}

// ---- the options --------------------------------------------------------------------------

template <class V>
std::string option_text(const V& v) {
  if constexpr (std::is_same_v<V, std::string>)
    return v;
  else if constexpr (std::is_integral_v<V>)
    return std::to_string(v);
  else if constexpr (std::is_same_v<V, vesting_spec>)
    return to_string(v);  // a constant as the digits alone, as before distributions
  else
    return to_hex(v);  // the chain id
}

std::vector<std::pair<std::string, std::string>> state_option_values(const chain_options& o) {
  std::vector<std::pair<std::string, std::string>> out;
  chain_options::state_options([&](const char* name, auto member) { out.emplace_back(name, option_text(o.*member)); });
  return out;
}

// One line naming the first option that differs, or nothing.
void check_options(const snapshot_info& info, const chain_options& o) {
  const auto here = state_option_values(o);
  for (std::size_t i = 0; i < std::max(here.size(), info.options.size()); ++i) {
    if (i >= info.options.size())
      throw snapshot_error(snapshot_problem::options, "it records no chain option " + here[i].first);
    const auto& [name, value] = info.options[i];
    if (i >= here.size() || name != here[i].first)
      throw snapshot_error(snapshot_problem::options,
                           "it records a chain option " + name + " this build does not know");
    if (value != here[i].second) {
      std::string what = "it was made with ";
      what.append(name).append("=").append(value).append(", this chain has ");
      what.append(name).append("=").append(here[i].second);
      throw snapshot_error(snapshot_problem::options, what);
    }
  }
}

// What both headers hold after their layout id: the head block, the state digest and the
// state options (chain_snapshot.hpp).
struct header_head {
  std::uint32_t num;
  block_id id;
  time_point_sec time;
  sha256_digest digest;
};

void pack_head(byte_writer& w, const header_head& h, const chain_options& o) {
  pack(w, h.num);
  pack(w, h.id);
  pack(w, h.time);
  pack(w, h.digest);
  const auto options = state_option_values(o);
  pack_varint(w, static_cast<std::uint32_t>(options.size()));
  for (const auto& [name, value] : options) pack(w, std::string(name).append("=").append(value));
}

// Throws decode_error.
void unpack_head(byte_reader& r, snapshot_info& info) {
  unpack(r, info.head_block_num);
  unpack(r, info.head_block_id);
  unpack(r, info.head_block_time);
  unpack(r, info.state_digest);
  const std::uint32_t options = unpack_varint(r, "option count");
  if (options > r.remaining()) r.fail("option count " + std::to_string(options) + " exceeds the file");
  for (std::uint32_t i = 0; i < options; ++i) {
    std::string text;
    unpack(r, text);
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos) r.fail("option '" + text.substr(0, 40) + "' is not name=value");
    info.options.emplace_back(text.substr(0, eq), text.substr(eq + 1));
  }
}

[[noreturn]] void malformed(const std::string& what) {
  throw snapshot_error(snapshot_problem::malformed, "its contents are malformed: " + what);
}

std::string bytes_of(std::uint64_t n) { return std::to_string(n) + " bytes"; }

// The fixed part: magic, version, size; a refusal for each.
std::uint64_t check_fixed_header(std::span<const std::uint8_t> file) {
  const auto too_short = [&file] {
    return snapshot_error(snapshot_problem::truncated,
                          "truncated: " + bytes_of(file.size()) + ", shorter than a snapshot's header");
  };
  if (file.size() < magic.size()) throw too_short();
  if (std::memcmp(file.data(), magic.data(), magic.size()) != 0)
    throw snapshot_error(snapshot_problem::magic, "not an apiary state snapshot (its first bytes are not APIARYST)");
  if (file.size() < fixed_header_size) throw too_short();
  std::uint32_t version = 0;
  std::memcpy(&version, file.data() + magic.size(), sizeof version);
  if (version != snapshot_format_version)
    throw snapshot_error(snapshot_problem::version, "format version " + std::to_string(version) +
                                                        "; this apiary reads version " +
                                                        std::to_string(snapshot_format_version));
  std::uint64_t size = 0;
  std::memcpy(&size, file.data() + magic.size() + sizeof version, sizeof size);
  if (file.size() < size)
    throw snapshot_error(snapshot_problem::truncated,
                         "truncated: " + bytes_of(file.size()) + " of the " + bytes_of(size) + " its header says");
  if (file.size() > size || size < fixed_header_size + checksum_size)
    throw snapshot_error(snapshot_problem::size, "its header says " + bytes_of(size) + ", the file has " +
                                                     bytes_of(file.size()) + ": damaged, or more than a snapshot");
  return size;
}

void check_checksum(std::span<const std::uint8_t> file) {
  const std::size_t body = file.size() - checksum_size;
  std::uint64_t recorded = 0;
  std::memcpy(&recorded, file.data() + body, sizeof recorded);
  if (XXH3_64bits(file.data(), body) != recorded)
    throw snapshot_error(snapshot_problem::corrupted, "corrupted: its checksum does not match its contents");
}

}  // namespace

std::uint64_t snapshot_layout_id() {
  static const std::uint64_t id = [] {
    std::string text;
    for_each_section([&text](std::string_view name, auto index) {
      text += name;
      describe<typename decltype(index)::type::value_type>(text);
      text += '\n';
    });
    return XXH3_64bits(text.data(), text.size());
  }();
  return id;
}

snapshot_info check_snapshot(std::span<const std::uint8_t> file) {
  snapshot_info info;
  info.file_size = check_fixed_header(file);
  check_checksum(file);
  info.format_version = snapshot_format_version;
  byte_reader r(file.first(file.size() - checksum_size));
  r.take(fixed_header_size, "the header");
  try {
    unpack(r, info.layout_id);
    if (info.layout_id != snapshot_layout_id())
      throw snapshot_error(snapshot_problem::layout, "written by a build whose state objects differ (layout id " +
                                                         std::to_string(info.layout_id) + ", this build's " +
                                                         std::to_string(snapshot_layout_id()) + ")");
    unpack_head(r, info);
  } catch (const decode_error& e) {
    malformed(std::string("header: ") + e.what());
  }
  info.header_size = r.offset();
  return info;
}

// ---- writing ------------------------------------------------------------------------------

void chain::write_snapshot(out_buffer& out) const {
  APIARY_CHECK(pending_.empty() && !last_session_.active());  // clear_pending() first
  const std::size_t start = out.size();
  byte_writer w(out);
  w.write(magic.data(), magic.size());
  pack(w, snapshot_format_version);
  const std::size_t size_at = out.size();
  pack(w, std::uint64_t{0});  // the file size, known at the end
  pack(w, snapshot_layout_id());
  pack_head(w, {head_block_num(), head_block_id(), head_block_time(), state_digest()}, options_);
  pack_varint(w, section_count);
  for_each_section([&](std::string_view name, auto type) {
    const auto& index = db_.get_index<typename decltype(type)::type>();
    pack(w, name);
    pack(w, static_cast<std::uint64_t>(index.size()));
    pack(w, static_cast<std::uint64_t>(index.next_id()));
    for (const auto& object : index.indices()) put(w, object);
  });
  const std::uint64_t size = out.size() - start + checksum_size;
  std::memcpy(out.data() + size_at, &size, sizeof size);
  pack(w, static_cast<std::uint64_t>(XXH3_64bits(out.data() + start, out.size() - start)));
}

// ---- loading ------------------------------------------------------------------------------

namespace {

// A hashed index that outgrows its buckets rehashes every object at once: for the millions of
// votes of a mainnet-scale state, a stop of the writer of over half a second, in whichever
// block crosses the line. So a state, loaded or written, holds room for the comments and the
// votes to double: a run of it does not meet that stop (the chain meets it much later, as a
// node would).
constexpr std::size_t room_to_grow = 2;

// Sizes an index's hashed indexes for n objects, so loading them never rehashes; the ones
// that grow with the chain for room_to_grow times n, and the two every push looks up with
// account_buckets and state_id_buckets buckets an object (state_objects.hpp).
void reserve_for(account_index& index, std::size_t n) { index.reserve<by_name>(account_buckets * n); }
void reserve_for(transaction_index& index, std::size_t n) { index.reserve<by_trx_id>(state_id_buckets * n); }
void reserve_for(comment_index& index, std::size_t n) { index.reserve<by_permlink>(room_to_grow * n); }
void reserve_for(comment_vote_index& index, std::size_t n) {
  index.reserve<by_comment_voter>(room_to_grow * n);
  index.reserve<by_comment>(room_to_grow * n);
}
void reserve_for(custom_op_counter_index& index, std::size_t n) { index.reserve<by_account>(n); }
template <class Index>
void reserve_for(Index& /*ordered only*/, std::size_t /*n*/) {}

// The fewest bytes an object of this type takes in a snapshot: a default one's (empty
// strings and lists), so a count can be checked against the bytes left before reserving.
template <class Object>
std::size_t smallest_encoding() {
  out_buffer b;
  byte_writer w(b);
  put(w, Object{});
  return b.size();
}

// The first object in the hashed index's bucket a key falls in, fetched into the cache ahead of
// the insert that compares the key with it. Loading, those two memory reads (the bucket, the
// object) at random places in a table of millions are most of an insert's time; asked for a
// batch of objects back to back, they overlap (the object's fetch is only a prefetch).
template <class Hashed, class Key>
void prefetch_bucket(const Hashed& index, const Key& key) {
  const auto n = index.bucket(key);
  const auto first = index.begin(n);
  if (first != index.end(n)) __builtin_prefetch(&*first);
}
void prefetch_for(const account_index& index, const account_object& o) {
  prefetch_bucket(index.get<by_name>(), o.name);
}
void prefetch_for(const transaction_index& index, const transaction_object& o) {
  prefetch_bucket(index.get<by_trx_id>(), o.trx_id);
}
void prefetch_for(const custom_op_counter_index& index, const custom_op_counter_object& o) {
  prefetch_bucket(index.get<by_account>(), o.account);
}
template <class Index>
void prefetch_for(const Index& /*ordered only*/, const typename Index::value_type& /*o*/) {}

// Out of line: inlined into the decoding, GCC 12 warns (-Wstringop-overread) of a copy out of a
// comment's beneficiary list's inline buffer longer than the buffer, one that boost::container
// never makes (chain_evaluators.hpp has the same case).
template <class Index>
[[gnu::noinline]] void insert_decoded(Index& index, typename Index::value_type&& o) {
  index.insert_saved(std::move(o));
}

// One section into its index: every object in ascending id order below the next id.
template <class Index>
void load_section(byte_reader& r, std::string_view name, Index& index) {
  using object = typename Index::value_type;
  using id_type = typename Index::id_type;
  std::string found;
  unpack(r, found);
  if (found != name) r.fail("section '" + found.substr(0, 40) + "' where " + std::string(name) + " belongs");
  std::uint64_t count = 0;
  std::uint64_t next_id = 0;
  unpack(r, count);
  unpack(r, next_id);
  const std::string where = "section " + std::string(name) + ": ";
  if (count > r.remaining() / smallest_encoding<object>())
    r.fail(where + std::to_string(count) + " objects cannot fit in the bytes left");
  if constexpr (sizeof(id_type) < sizeof next_id)
    if (next_id > std::numeric_limits<id_type>::max())
      r.fail(where + "next id " + std::to_string(next_id) + " too large");
  if (count > next_id)
    r.fail(where + "next id " + std::to_string(next_id) + " for " + std::to_string(count) + " objects");
  reserve_for(index, count);
  // A batch of objects is decoded, their buckets fetched back to back, then they are inserted.
  constexpr std::size_t batch = 16;
  std::array<object, batch> decoded{};
  for (std::uint64_t start = 0; start < count; start += batch) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(batch, count - start));
    for (std::size_t i = 0; i < n; ++i) {
      decoded[i] = object{};
      get(r, decoded[i]);
    }
    for (std::size_t i = 0; i < n; ++i) prefetch_for(index, decoded[i]);
    for (std::size_t i = 0; i < n; ++i) {
      object& o = decoded[i];
      if (o.id < index.next_id() || o.id >= next_id)
        r.fail(where + "object id " + std::to_string(o.id) + " out of order or not below the next id");
      try {
        insert_decoded(index, std::move(o));
      } catch (const unique_key_violation&) {
        r.fail(where + "two objects with the same key");
      }
    }
  }
  index.set_next_id(static_cast<id_type>(next_id));
}

}  // namespace

std::unique_ptr<chain> chain::from_snapshot(chain_options options, std::span<const std::uint8_t> file,
                                            snapshot_info* info) {
  snapshot_info header = check_snapshot(file);
  check_options(header, options);
  std::unique_ptr<chain> c(new chain(std::move(options), empty_state{}));
  c->load_snapshot(header, file);
  if (info != nullptr) *info = std::move(header);
  return c;
}

void chain::load_snapshot(const snapshot_info& info, std::span<const std::uint8_t> file) {
  byte_reader r(file.first(file.size() - checksum_size));
  r.take(info.header_size, "the header");
  try {
    const std::uint32_t sections = unpack_varint(r, "section count");
    if (sections != section_count) r.fail(std::to_string(sections) + " sections, not " + std::to_string(section_count));
    for_each_section([&](std::string_view name, auto type) {
      load_section(r, name, db_.get_index<typename decltype(type)::type>());
    });
    if (!r.at_end()) r.fail(std::to_string(r.remaining()) + " bytes after the last section");
  } catch (const decode_error& e) {
    malformed(e.what());
  }
  // What the chain reads without looking: the single global object, every TaPoS summary.
  if (globals_.size() != 1 || globals_.find(0) == nullptr) malformed("not one global properties object");
  if (summaries_.size() != 0x10000 || summaries_.next_id() != 0x10000) malformed("not 65,536 block summaries");
  if (head_block_num() != info.head_block_num || head_block_id() != info.head_block_id ||
      head_block_time() != info.head_block_time)
    malformed("the header's head block is not the state's");
  first_block_ = head_block_num();
  // Block n's undo session has revision n (the blocks applied next commit as they would have).
  db_.set_revision(head_block_num());
  start_pending();
}

// ---- state files ----------------------------------------------------------------------------

void chain::make_room_to_grow() {
  reserve_for(comments_, comments_.size());
  reserve_for(votes_, votes_.size());
  reserve_for(db_.get_index<transaction_index>(), dedup_.index().size());
}

std::uint64_t state_file_layout_id() {
  static const std::uint64_t id = [] {
    std::string text = "snapshot layout " + std::to_string(snapshot_layout_id());
    for_each_section([&text](std::string_view name, auto index) {
      using index_type = typename decltype(index)::type;
      text.append("\n").append(name);
      text.append(" body ").append(std::to_string(index_type::body_size()));
      text.append(" container ").append(std::to_string(sizeof(typename index_type::container_type)));
      text.append(" object ").append(std::to_string(sizeof(typename index_type::value_type)));
      text.append(" type ").append(typeid(index_type).name());  // its indexes: kinds and keys
    });
    text.append("\nbuckets an object ")
        .append(std::to_string(account_buckets))
        .append(" ")
        .append(std::to_string(state_id_buckets));
    text.append("\ncompiler " __VERSION__ " libstdc++ ").append(std::to_string(_GLIBCXX_RELEASE));
    text.append(" boost ").append(std::to_string(BOOST_VERSION));
    text.append(" base ").append(std::to_string(state_region::base_address()));
    return XXH3_64bits(text.data(), text.size());
  }();
  return id;
}

sha256_digest chain::write_state(const std::filesystem::path& file) {
  APIARY_CHECK(region_ != nullptr && pending_.empty() && !last_session_.active());  // clear_pending() first
  pending_session_.undo();
  db_.commit(db_.revision());
  make_room_to_grow();
  out_buffer payload;
  byte_writer w(payload);
  pack(w, state_file_layout_id());
  const sha256_digest digest = state_digest();
  pack_head(w, {head_block_num(), head_block_id(), head_block_time(), digest}, options_);
  if (payload.size() > state_region::max_payload_bytes)
    throw state_region_error(file.string() + ": the chain options are too long for a state file's header");
  first_block_ = head_block_num();  // every block before is permanent now
  try {
    region_->write(file, std::as_bytes(std::span(payload.data(), payload.size())));
  } catch (...) {
    start_pending();
    throw;
  }
  start_pending();
  return digest;
}

namespace {

// The chain's header in a state file's payload (chain_snapshot.hpp), checked against this
// build and, when given, these options.
snapshot_info read_state_header(std::span<const std::byte> payload, const chain_options* options) {
  snapshot_info info;
  byte_reader r(std::span(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()));
  try {
    unpack(r, info.layout_id);
    if (info.layout_id != state_file_layout_id())
      throw snapshot_error(snapshot_problem::layout, "made by a build whose state layout differs (layout id " +
                                                         std::to_string(info.layout_id) + ", this build's " +
                                                         std::to_string(state_file_layout_id()) +
                                                         "): make the state again with this build");
    unpack_head(r, info);
  } catch (const decode_error& e) {
    malformed(std::string("header: ") + e.what());
  }
  if (options != nullptr) check_options(info, *options);
  return info;
}

}  // namespace

std::unique_ptr<chain> chain::open_state(chain_options options, const std::filesystem::path& file,
                                         const state_region::open_options& how, snapshot_info* info) {
  APIARY_CHECK(options.memory == state_memory::mapped);
  std::unique_ptr<state_region> region = state_region::open(file, how);
  snapshot_info header = read_state_header(region->payload(), &options);
  std::unique_ptr<chain> c(new chain(std::move(options), std::move(region)));
  if (c->globals_.size() != 1 || c->head_block_num() != header.head_block_num ||
      c->head_block_id() != header.head_block_id)
    malformed("the header's head block is not the state's");
  c->first_block_ = c->head_block_num();
  c->start_pending();
  if (info != nullptr) *info = std::move(header);
  return c;
}

snapshot_info chain::verify_state(const std::filesystem::path& file) {
  const std::unique_ptr<state_region> region = state_region::open(file, {.prefault = false});
  snapshot_info header = read_state_header(region->payload(), nullptr);
  if (std::string problem = region->verify_content(); !problem.empty()) throw state_region_error(problem);
  header.file_size = region->opened().file_bytes + state_region::header_bytes;
  return header;
}

}  // namespace apiary::core
