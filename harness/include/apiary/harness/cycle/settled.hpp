// settled: the harness's end of the writer's timing outbox (queen/tx_timing.hpp), the one
// route by which it learns what became of each transaction and block.
//
// The main thread drains the outbox now and then (and once more after the writer is joined)
// and passes what it took, in order, to each reader: the latency histograms, the dumps'
// samples, the audit's record of acceptances. A reader runs on the main thread only, sees
// every settled transaction and every applied block exactly once, and keeps what it needs
// (a record or a block it keeps holds its transactions alive; the rest are released here,
// off the writer thread).
#pragma once

#include <span>
#include <vector>

#include "apiary/queen/tx_timing.hpp"

namespace apiary::harness {

class settled_reader {
 public:
  virtual ~settled_reader() = default;
  // The transactions settled since the last call (in the order the outbox settled them),
  // and the blocks applied since then, in order.
  virtual void read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block> blocks) = 0;

 protected:
  settled_reader() = default;
  settled_reader(const settled_reader&) = default;
  settled_reader& operator=(const settled_reader&) = default;
};

class settled_stream {
 public:
  // The writer hands over to this (queen::writer::record_timings).
  queen::timing_outbox& outbox() { return outbox_; }
  // Before the first drain: `r` reads everything from then on (it must outlive the stream's
  // last drain).
  void add(settled_reader& r) { readers_.push_back(&r); }
  // Main thread: takes what the writer handed over since the last call and passes it on.
  void drain();

 private:
  queen::timing_outbox outbox_;
  std::vector<settled_reader*> readers_;
  std::vector<queen::tx_timing> transactions_;  // capacity reused
  std::vector<queen::settled_block> blocks_;
};

}  // namespace apiary::harness
