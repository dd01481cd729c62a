#include "commands/blocks_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>

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
  std::uint64_t first_block = 0;
  std::uint64_t last_block = 0;
  std::vector<std::uint64_t> per_kind = std::vector<std::uint64_t>(core::operation_kinds().size());

  void add(const core::verified_block& v) {
    if (blocks == 0) first_block = v.block_num;
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
    for (std::size_t i = 0; i < per_kind.size(); ++i) per_kind[i] += f.per_kind[i];
  }
};

using block_visitor = std::function<void(std::span<const std::uint8_t> packed, const core::block_expectations&)>;

// Hands each block of a file's content to `visit` as packed bytes with what the file states
// about it. The one place that tells the kinds of block files apart, by their content.
void read_blocks(std::string_view content, const block_visitor& visit) {
  if (!core::looks_like_json_object(content))
    throw core::block_json_error(
        "not block_api JSON (a get_block or get_block_range result): apiary reads no other kind of block file");
  core::out_buffer buf;
  for (const core::json_block& b : core::read_block_api_json(content)) {
    buf.clear();
    core::pack_into(buf, b.block);
    visit(buf.span(), b.expected);
  }
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
      "signature digest (Steem's chain id before hardfork 24, Hive's after) and the witness's key from the "
      "header, and compare with what the file states (block_api's block_id, signing_key and transaction_ids). "
      "Prints per file its blocks, transactions, signatures and operations per kind, then a summary. A FILE is "
      "block_api JSON, told by its content: a get_block result {\"block\": {...}} or a get_block_range result "
      "{\"blocks\": [...]}, bare or as a JSON-RPC response, in the legacy or the HF26 form");
  verify_->footer(
      "Exit status: 0 every block of every file verified; 1 a block did not verify, or a file is damaged (one "
      "line names the file, the block and transaction, or the position); 2 bad command line or a FILE that "
      "cannot be read.");
  verify_->add_option("FILE", files_, "block_api JSON files")->required()->check(path_check());
}

int blocks_command::run() {
  file_totals all;
  std::uint64_t failed = 0;
  std::string out;
  for (const std::string& path : files_) {
    std::string content;
    try {
      content = read_input_file(path, most_file_bytes, "block file");
    } catch (const input_error& e) {
      return usage_error("blocks", shown_path(path) + ": " + e.what());
    }
    file_totals file;
    core::block_verifier verifier;
    try {
      read_blocks(content, [&](std::span<const std::uint8_t> packed, const core::block_expectations& expected) {
        file.add(verifier.verify(packed, expected));
      });
    } catch (const std::runtime_error& e) {  // block_json_error, block_error
      if (!print_out("blocks", out)) return exit_failed;
      out.clear();
      error_line("blocks", shown_path(path) + ": " + one_line(e.what()) + " (after " + grouped(file.blocks) +
                               " verified blocks)");
      ++failed;
      continue;
    }
    out += shown_path(path) + ": " + counts_text(file, true) +
           "\n  verified: block ids, merkle roots, transaction ids, " + "signatures, witness keys\n";
    all.add(file);
  }
  const std::size_t files = files_.size();
  out += "Summary: " + grouped(files - failed) + " of " + grouped(files) + (files == 1 ? " file" : " files") +
         " verified; " + counts_text(all, false) + "\n";
  if (!print_out("blocks", out)) return exit_failed;
  return failed ? exit_failed : exit_ok;
}

}  // namespace apiary::harness
