// The seam between transaction producers (colony) and the node's writer (queen): a sink
// that takes a transaction and, once the writer has processed it, calls a completion on the
// writer thread with the outcome. colony and queen both depend on this, not on each other.
#pragma once

#include <cstdint>
#include <utility>

#include "apiary/core/chain/reject.hpp"
#include "apiary/core/protocol/full_transaction.hpp"

namespace apiary::core {

// A plain function pointer and context, so submitting allocates nothing. Called exactly
// once per submitted transaction, on the writer thread, with the transaction and
// reject::none on acceptance, the chain's reason on rejection, or reject::shutdown when the
// sink stopped before pushing it. It must be quick: it runs inside the writer loop.
struct tx_completion {
  void (*fn)(void* ctx, const full_transaction& tx, reject outcome) = nullptr;
  void* ctx = nullptr;
  void operator()(const full_transaction& tx, reject outcome) const {
    if (fn != nullptr) fn(ctx, tx, outcome);
  }
};

// What a producer says of a transaction besides its content, for the latency records: when
// its rate schedule meant to send it (core::steady_now_ns; 0: when it is submitted) and a
// small tag the records are grouped by (the colony's operation kind).
struct tx_intent {
  std::int64_t intended_ns = 0;
  std::uint8_t kind = 0;
};

class transaction_sink {
 public:
  virtual ~transaction_sink() = default;
  // Hands the transaction over and returns: fire-and-forget. May block only when the sink
  // is a bounded queue that is full. Returns false when the sink is closed (shutting down);
  // the completion is then not called. Once it has returned true, the completion will be
  // called, also when the sink shuts down before pushing the transaction (reject::shutdown).
  virtual bool submit(full_transaction_ptr tx, tx_completion done, tx_intent intent) = 0;
  // The same, for a caller without a rate schedule: intended when submitted, kind 0.
  bool submit(full_transaction_ptr tx, tx_completion done) { return submit(std::move(tx), done, tx_intent{}); }
};

}  // namespace apiary::core
