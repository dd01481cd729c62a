// Hive's legacy JSON form, streamed straight into one out_buffer: no DOM, no temporary
// string per field, hex written two characters at a time.
//
// Form (the one hived's condenser API and dhive use): operations as ["vote", {...}] pairs,
// comment_options extensions as [0, {"beneficiaries": [...]}], assets as "1.000 HIVE" and
// "0.001 HBD", times as "2016-08-08T12:24:17", hashes and signatures as lower-case hex.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::core {

class json_writer {
 public:
  explicit json_writer(out_buffer& out) : out_(out) {}

  void put(char c) { out_.put(c); }
  void raw(std::string_view s) { out_.append(s); }
  // A quoted string with JSON escapes; runs that need none are copied whole.
  void string(std::string_view s);
  // "key":
  void key(std::string_view k);
  void number(std::int64_t v);
  void number(std::uint64_t v);
  void boolean(bool v) { raw(v ? "true" : "false"); }
  void hex(const std::uint8_t* p, std::size_t n);
  void time(time_point_sec t);
  void amount(const asset& a);

  out_buffer& buffer() { return out_; }

 private:
  out_buffer& out_;
};

void write_json(json_writer& w, const operation& op);
void write_json(json_writer& w, const transaction& tx);
void write_json(json_writer& w, const signed_transaction& tx);
void write_json(json_writer& w, const signed_block& b);
// A block as hived's block API shows it: the signed block plus "block_id" and
// "transaction_ids".
void write_json(json_writer& w, const signed_block& b, const block_id& id,
                std::span<const transaction_id> transaction_ids);

// Convenience for tests and tools, not for hot paths.
template <class T>
std::string to_json(const T& v) {
  out_buffer buf;
  json_writer w(buf);
  write_json(w, v);
  return std::string(buf.view());
}

}  // namespace apiary::core
