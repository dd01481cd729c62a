// Fuzz target: a custom_json payload, the free-form text a node validates before it lets a
// custom_json operation (three quarters of the typical mix) into the chain.
//
// Properties (any failure aborts, and libFuzzer keeps the input):
//   - is_valid_json never crashes, throws or leaks, whatever the bytes;
//   - its answer matches the independent grammar in json_grammar.hpp (skipped only for
//     numbers whose exponent is near INT_MAX, see there);
//   - an operation carrying the payload packs, decodes back to itself, and writes JSON that
//     is well-formed whatever the payload holds; when the payload is valid JSON, the
//     operation's JSON is itself valid by is_valid_json, so escaping never breaks a text
//     that was fine.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "apiary/core/base/check.hpp"
#include "apiary/core/protocol/custom_json.hpp"
#include "apiary/core/protocol/json.hpp"
#include "apiary/core/protocol/operations.hpp"
#include "json_grammar.hpp"

using namespace apiary::core;
using apiary::fuzz::json_grammar;
using apiary::fuzz::verdict;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool valid = is_valid_json(text);
  const verdict expected = json_grammar::check(text);
  if (expected != verdict::undecided) APIARY_CHECK(valid == (expected == verdict::valid));

  custom_json_operation op;
  op.required_posting_auths = {"alice"};
  op.id = "follow";
  op.json = std::string(text);
  const operation wrapped = op;

  out_buffer packed;
  pack_into(packed, wrapped);
  APIARY_CHECK(unpack_from<operation>(packed.span()) == wrapped);

  out_buffer json;
  json_writer w(json);
  write_json(w, wrapped);
  APIARY_CHECK(json_grammar::check(json.view(), {.check_utf8 = false}) == verdict::valid);
  if (valid) APIARY_CHECK(is_valid_json(json.view()));
  return 0;
}
