#include "commands/blocks_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>

#include "apiary/core/protocol/block_verify.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/io/block_file.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "commands/command_support.hpp"

namespace apiary::harness {

namespace {

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
      block_file blocks(path, dictionary_dir_);
      blocks.read([&](std::span<const std::uint8_t> packed, const core::block_expectations& expected) {
        file.add(verifier.verify(packed, expected), expected.signing_key.has_value());
      });
    } catch (const input_error& e) {
      return usage_error("blocks", shown_path(path) + ": " + e.what());
    } catch (const std::runtime_error& e) {  // block_file_error, block_error (a JSON file's)
      if (!print_out("blocks", out)) return exit_failed;
      out.clear();
      // A block_log_error names its file first: the path given unless it is a directory's part.
      std::string problem = one_line(e.what());
      if (!problem.starts_with(path + ": ")) problem.insert(0, shown_path(path) + ": ");
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
