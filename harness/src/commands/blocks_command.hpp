// `apiary blocks verify FILE...`: reads real Hive blocks and verifies each whole (block id,
// transaction merkle root, transaction ids, signatures, the witness's key; block_verify.hpp),
// printing per file its blocks, transactions and operations per kind, then a summary. A
// file's kind is told by its name and content: a Hive block_log (core/blocklog), or block_api
// JSON (get_block or get_block_range results, block_api_json.hpp); every block reaches the
// verifier as packed bytes (io/block_file.hpp is the one place that tells kinds apart).
// Thread safety: the main thread's.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace apiary::harness {

class blocks_command {
 public:
  // Adds the subcommand and its options to `parent`.
  void setup(CLI::App& parent);
  // Whether the command line named this subcommand.
  bool parsed() const;
  // After parsing: the exit status.
  int run();

 private:
  std::vector<std::string> files_;
  std::string dictionary_dir_;
  std::string chain_text_ = "mainnet";
  CLI::App* app_ = nullptr;
  CLI::App* verify_ = nullptr;
};

}  // namespace apiary::harness
