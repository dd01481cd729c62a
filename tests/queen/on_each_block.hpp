// A block observer that calls a function: each writer test says what it does with a block.
#pragma once

#include <functional>
#include <string_view>
#include <utility>

#include "apiary/queen/block_observer.hpp"

namespace apiary::queen {

class on_each_block final : public block_observer {
 public:
  using function = std::function<bool(const block_record&, const core::chain&)>;
  explicit on_each_block(function f) : f_(std::move(f)) {}
  std::string_view name() const override { return "test"; }
  bool on_block(const block_record& r, const core::chain& c) override { return f_(r, c); }

 private:
  function f_;
};

}  // namespace apiary::queen
