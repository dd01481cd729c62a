#include "commands/blocks_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <span>

#include "apiary/core/blocklog/block_log_error.hpp"
#include "apiary/core/blocklog/block_log_reader.hpp"
#include "apiary/core/blocklog/entry.hpp"
#include "apiary/core/protocol/block_api_json.hpp"
#include "apiary/core/protocol/block_verify.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "commands/command_support.hpp"

namespace apiary::harness {

namespace {

// A block_api JSON file's tree takes several times the file in memory: a generous bound.
constexpr std::uint64_t most_file_bytes = std::uint64_t{1} << 30;

// What one file held.
struct file_totals {
  std::uint64_t blocks = 0;
  std::uint64_t transactions = 0;
  std::uint64_t signatures = 0;
  std::uint64_t witness_keys = 0;  // blocks whose witness key was compared with a stated one
  std::uint64_t first_block = 0;
  std::uint64_t last_block = 0;
  std::vector<std::uint64_t> per_kind = std::vector<std::uint64_t>(core::operation_kinds().size());

  void add(const core::verified_block& v, bool key_compared) {
    if (blocks == 0) first_block = v.block_num;
    witness_keys += key_compared;
    last_block = v.block_num;
    ++blocks;
    transactions += v.transactions;
    signatures += v.signatures;
    for (std::uint32_t id : v.operation_ids) ++per_kind[id];
  }
  void add(const file_totals& f) {
    blocks += f.blocks;
    transactions += f.transactions;
    signatures += f.signatures;
    witness_keys += f.witness_keys;
    for (std::size_t i = 0; i < per_kind.size(); ++i) per_kind[i] += f.per_kind[i];
  }
};

using block_visitor = std::function<void(std::span<const std::uint8_t> packed, const core::block_expectations&)>;

// Whether the regular file at `path` ends in a position word that points back into it, as a
// block_log does. Its last byte, the word's top byte, is then 0x00, 0x01, 0x80 or 0x81: never
// the closing brace or whitespace that ends JSON.
bool ends_in_position_word(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const std::streamoff size = in.tellg();
  unsigned char bytes[sizeof(std::uint64_t)];
  if (size <= static_cast<std::streamoff>(sizeof bytes)) return false;
  if (!in.seekg(size - static_cast<std::streamoff>(sizeof bytes)) ||
      !in.read(reinterpret_cast<char*>(bytes), sizeof bytes))
    return false;
  std::uint64_t word = 0;
  for (std::size_t i = sizeof bytes; i-- > 0;) word = word << 8 | bytes[i];
  const auto p = core::blocklog::unpack_position(word);
  return p && p->offset < static_cast<std::uint64_t>(size) - sizeof bytes;
}

// Whether `path` is read as a Hive block_log: a directory (of block_log_part files, or holding a
// block_log), a file named block_log or block_log_part.NNNN, or a file ending in a position word.
bool is_block_log(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return true;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // read_input_file says what it is
  const std::string name = std::filesystem::path(path).filename().string();
  return name == "block_log" || core::blocklog::part_of_file_name(name) != 0 || ends_in_position_word(path);
}

// `dictionary_dir`: Hive's compression dictionaries; empty: none.
void read_block_log(const std::string& path, const std::filesystem::path& dictionary_dir, const block_visitor& visit) {
  core::blocklog::block_log_reader log(path, {.dictionary_dir = dictionary_dir});
  for (std::uint64_t num = log.first_block_num(); num <= log.head_block_num(); ++num) {
    const core::blocklog::block_data b = log.read_block(static_cast<std::uint32_t>(num));
    core::block_expectations expected;
    expected.id = log.artifacts_id(b.num);
    try {
      visit(b.packed, expected);
    } catch (const core::block_error& e) {  // the block's own message names it
      throw core::blocklog::block_log_error(b.file, std::nullopt, b.offset, e.what());
    }
  }
}

// Hands each block of the file at `path` to `visit` as packed bytes with what the file states
// about it. The one place that tells the kinds of block files apart: a Hive block_log
// (is_block_log), else block_api JSON, by its content. Throws input_error when the file cannot
// be read, block_json_error, block_error or block_log_error when it is damaged.
void read_blocks(const std::string& path, const std::filesystem::path& dictionary_dir, const block_visitor& visit) {
  if (is_block_log(path)) {
    read_block_log(path, dictionary_dir, visit);
    return;
  }
  const std::string content = read_input_file(path, most_file_bytes, "block file");
  if (!core::looks_like_json_object(content))
    throw core::block_json_error(
        "neither block_api JSON (a get_block or get_block_range result) nor a Hive block_log (named block_log "
        "or block_log_part.NNNN, or ending in a position word): apiary reads no other kind of block file");
  core::out_buffer buf;
  for (const core::json_block& b : core::read_block_api_json(content)) {
    buf.clear();
    core::pack_into(buf, b.block);
    visit(buf.span(), b.expected);
  }
}

// --chain-id: "mainnet" (nullopt: main net's by block time), "testnet", "mirrornet" (hived's
// defaults for those builds) or 64 hex digits. The error text, empty when `text` is one.
std::string parse_chain(const std::string& text, std::optional<core::chain_id>& chain) {
  if (text == "mainnet") {
    chain.reset();
  } else if (text == "testnet") {
    chain = core::testnet_chain_id();
  } else if (text == "mirrornet") {
    chain = core::mirrornet_chain_id();
  } else if (auto id = core::fixed_from_hex<32>(text)) {
    chain = *id;
  } else {
    return "'" + text + "': expected mainnet, testnet, mirrornet or a chain id of 64 hex digits";
  }
  return {};
}

// What the signatures' digests were computed with, and what that leaves unchecked.
std::string chain_text(const std::string& text, const std::optional<core::chain_id>& chain) {
  const std::string unchecked =
      "; a signature recovers some key under any chain id, so the chain id is used, not checked";
  if (!chain) return "main net's by block time (Steem's before hardfork 24, Hive's after)" + unchecked;
  const std::string hex = core::to_hex(*chain);
  return (text == hex ? hex : text + " " + hex) + unchecked;
}

// What was verified of a file's blocks: the witness keys only where the file states them.
std::string verified_text(const file_totals& t) {
  std::string out = "  verified: block ids, merkle roots, transaction ids, signatures";
  if (t.witness_keys == t.blocks) return out + ", witness keys\n";
  out += t.witness_keys ? ", " + grouped(t.witness_keys) + " witness keys" : std::string();
  return out + "; witness keys not compared for " + grouped(t.blocks - t.witness_keys) +
         " blocks (the file states none: each witness signature recovers a key)\n";
}

// "82 operations: pow 49, feed_publish 13, ..." (the most frequent first), or "no operations".
std::string kinds_text(const file_totals& t) {
  std::vector<std::size_t> order;
  std::uint64_t all = 0;
  for (std::size_t i = 0; i < t.per_kind.size(); ++i)
    if (t.per_kind[i]) {
      order.push_back(i);
      all += t.per_kind[i];
    }
  if (order.empty()) return "no operations";
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return t.per_kind[a] > t.per_kind[b]; });
  std::string out = grouped(all) + (all == 1 ? " operation: " : " operations: ");
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i) out += ", ";
    out += std::string(core::operation_kinds()[order[i]].name) + " " + grouped(t.per_kind[order[i]]);
  }
  return out;
}

// With the range of block numbers for one file's blocks (`range`), not for the summary.
std::string counts_text(const file_totals& t, bool range) {
  std::string out = grouped(t.blocks) + (t.blocks == 1 ? " block" : " blocks");
  if (range && t.blocks) out += " (" + grouped(t.first_block) + "-" + grouped(t.last_block) + ")";
  return out + ", " + grouped(t.transactions) + " transactions, " + grouped(t.signatures) + " signatures; " +
         kinds_text(t);
}

}  // namespace

bool blocks_command::parsed() const { return app_->parsed(); }

void blocks_command::setup(CLI::App& parent) {
  app_ = parent.add_subcommand("blocks", "Read real Hive blocks (docs/protocol.md#real-blocks)");
  app_->require_subcommand(1, 1);
  verify_ = app_->add_subcommand(
      "verify",
      "Verify every block of each FILE: recompute each block id, transaction merkle root and transaction id from "
      "the blocks packed in Hive's legacy serialization, recover every signature's key from its transaction's "
      "signature digest (with --chain-id) and the witness's key from the header, and compare with what the file "
      "states (block_api's block_id, signing_key and transaction_ids; a block_log's artifacts' ids). Prints per "
      "file its blocks, transactions, signatures and operations per kind, then a summary. A FILE is a Hive "
      "block_log (a directory of block_log_part files or holding a block_log, a file named block_log or "
      "block_log_part.NNNN, or one ending in a position word; it states no signing key, so the witness "
      "signature must recover a key and is compared with none) or else block_api JSON: a get_block result "
      "{\"block\": {...}} or a get_block_range result {\"blocks\": [...]}, bare or as a JSON-RPC response, in "
      "the legacy or the HF26 form");
  verify_->footer(
      "Exit status: 0 every block of every file verified; 1 a block did not verify, or a file is damaged (one "
      "line names the file, the block and transaction, or the position); 2 bad command line or a FILE that "
      "cannot be read.");
  verify_
      ->add_option("FILE", files_, "block_api JSON files, Hive block_log files or directories of block_log_part files")
      ->required()
      ->check(path_check());
  verify_
      ->add_option("--dictionaries", dictionary_dir_,
                   "the directory of Hive's compression dictionaries (NNNM.dict.zst) for block_log entries "
                   "compressed with one; default none: such an entry is an error")
      ->check(CLI::ExistingDirectory);
  verify_
      ->add_option("--chain-id", chain_text_,
                   "the chain id of the signatures' digests: mainnet (Steem's before hardfork 24, Hive's after, "
                   "by the block's time), testnet (sha256 of \"testnet\"), mirrornet (42 and 31 zero bytes), "
                   "hived's defaults for those builds, or 64 hex digits. A signature recovers some key under any "
                   "chain id: without the accounts' keys the chain id is used, not checked")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& v) {
            std::optional<core::chain_id> chain;
            return parse_chain(v, chain);
          },
          "ID"));
}

int blocks_command::run() {
  std::optional<core::chain_id> chain;
  if (const std::string bad = parse_chain(chain_text_, chain); !bad.empty())
    return usage_error("blocks", "--chain-id " + bad);  // the option's check said so already
  file_totals all;
  std::uint64_t failed = 0;
  std::string out;
  for (const std::string& path : files_) {
    file_totals file;
    core::block_verifier verifier(chain);
    try {
      read_blocks(path, dictionary_dir_,
                  [&](std::span<const std::uint8_t> packed, const core::block_expectations& expected) {
                    file.add(verifier.verify(packed, expected), expected.signing_key.has_value());
                  });
    } catch (const input_error& e) {
      return usage_error("blocks", shown_path(path) + ": " + e.what());
    } catch (const std::runtime_error& e) {  // block_json_error, block_error, block_log_error
      if (!print_out("blocks", out)) return exit_failed;
      out.clear();
      // A block_log_error names its file first: the path given unless it is a directory's part.
      std::string problem = one_line(e.what());
      if (!problem.starts_with(path + ": ")) problem = shown_path(path) + ": " + problem;
      error_line("blocks", problem + " (after " + grouped(file.blocks) + " verified blocks)");
      ++failed;
      continue;
    }
    out += shown_path(path) + ": " + counts_text(file, true) + "\n" + verified_text(file);
    all.add(file);
  }
  const std::size_t files = files_.size();
  out += "Summary: " + grouped(files - failed) + " of " + grouped(files) + (files == 1 ? " file" : " files") +
         " verified; " + counts_text(all, false) + "\n" + "  signatures' chain id: " + chain_text(chain_text_, chain) +
         "\n";
  if (!print_out("blocks", out)) return exit_failed;
  return failed ? exit_failed : exit_ok;
}

}  // namespace apiary::harness
