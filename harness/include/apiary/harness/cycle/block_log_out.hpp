// block_log_out: what `apiary run --block-log FILE` writes: every block the run applied, from
// block 1 on (the warm-up's too), as a Hive block_log with its .artifacts beside it
// (core/blocklog), so Hive's tools read the run's chain.
//
// A reader of the settled stream (settled.hpp): it runs on the main thread as the stream is
// drained, never on the writer or a producer. Each block is rebuilt as the dump rebuilds it
// (its header signed again; its id checked against the chain's), packed and appended to a
// temporary file beside FILE (output_file.hpp); finish() writes the artifacts and renames both
// into place. Per block that is a signature, the merkle root, a copy and a write on the main
// thread (not yet measured against a run without it). A process killed before finish() leaves
// no file.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "apiary/core/blocklog/block_log_writer.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/cycle/settled.hpp"
#include "apiary/harness/io/output_file.hpp"

namespace apiary::harness {

class block_log_out final : public settled_reader {
 public:
  // Opens the temporary file beside `path`. Throws std::runtime_error naming it.
  block_log_out(const std::string& path, const core::chain& chain);
  void read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block> blocks) override;
  // Writes the artifacts and renames both files into place: the blocks written. Throws
  // std::runtime_error naming the file: the first error of read(), or the write's.
  std::uint64_t finish();

 private:
  class sink final : public core::blocklog::byte_sink {
   public:
    explicit sink(output_file& f) : f_(f) {}
    void write(const void* data, std::size_t size) override { f_.write(data, size); }

   private:
    output_file& f_;
  };

  std::string path_;
  const core::chain& chain_;
  output_file file_;
  sink sink_;
  core::blocklog::block_log_writer writer_;
  std::string error_;  // the first failure; the blocks after it are not written
};

}  // namespace apiary::harness
