#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "apiary/colony/colony.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/slot_schedule.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/audit.hpp"
#include "apiary/harness/cycle/dump.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"
#include "apiary/harness/cycle/settled.hpp"
#include "apiary/harness/replay/replay.hpp"
#include "apiary/harness/replay/snapshot.hpp"
#include "apiary/harness/replay/workload_file.hpp"
#include "apiary/harness/report/statistics.hpp"

namespace apiary::harness {
namespace {

TEST(Statistics, EmptySeriesHasOnlyACount) {
  const series_stats s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.avg, 0.0);
}

TEST(Statistics, OddSeries) {
  const std::vector<double> v = {5, 1, 4, 2, 3};
  const series_stats s = summarize(v);
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.min_at, 1u);
  EXPECT_EQ(s.max, 5);
  EXPECT_EQ(s.max_at, 0u);
  EXPECT_DOUBLE_EQ(s.avg, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.population_stddev, std::sqrt(2.0));  // population: sum of squares 10 / 5
  EXPECT_EQ(s.p90, 5);                                    // rank ceil(4.5) = 5
  EXPECT_EQ(s.p99, 5);
}

TEST(Statistics, EvenMedianIsTheMeanOfTheMiddleTwo) {
  const std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(summarize(v).median, 2.5);
}

TEST(Statistics, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 200; ++i) v.push_back(i);
  const series_stats s = summarize(v);
  EXPECT_EQ(s.p90, 180);  // rank 180
  EXPECT_EQ(s.p99, 198);  // rank 198
  EXPECT_EQ(nearest_rank(std::vector<double>{7}, 99), 7);
}

TEST(Statistics, FirstExtremeWins) {
  const std::vector<double> v = {2, 1, 3, 1, 3};
  const series_stats s = summarize(v);
  EXPECT_EQ(s.min_at, 1u);
  EXPECT_EQ(s.max_at, 2u);
}

TEST(Parsers, Sizes) {
  EXPECT_EQ(parse_size("65536"), 65536u);
  EXPECT_EQ(parse_size("64KiB"), 65536u);
  EXPECT_EQ(parse_size("64k"), 65536u);
  EXPECT_EQ(parse_size("2MiB"), 2097152u);
  EXPECT_EQ(parse_size("2MiB-256"), 2096896u);
  EXPECT_EQ(parse_size(" 1 MiB + 1 "), 1048577u);
  EXPECT_EQ(parse_size("2_097_152"), 2097152u);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("-1"));
  EXPECT_FALSE(parse_size("2GB"));
  EXPECT_FALSE(parse_size("1KiB-2KiB"));
  EXPECT_FALSE(parse_size("99999999999999999999"));
}

TEST(Parsers, Durations) {
  EXPECT_EQ(parse_duration("90"), 90.0);
  EXPECT_EQ(parse_duration("90s"), 90.0);
  EXPECT_EQ(parse_duration("1.5m"), 90.0);
  EXPECT_EQ(parse_duration("500ms"), 0.5);
  EXPECT_EQ(parse_duration("1h"), 3600.0);
  EXPECT_FALSE(parse_duration("soon"));
  EXPECT_FALSE(parse_duration("inf"));
  EXPECT_FALSE(parse_duration(""));
}

TEST(Parsers, TogglesAndCounts) {
  EXPECT_EQ(parse_toggle("on"), true);
  EXPECT_EQ(parse_toggle("OFF"), false);
  EXPECT_EQ(parse_toggle("true"), true);
  EXPECT_FALSE(parse_toggle("maybe"));
  EXPECT_EQ(parse_count("100_000"), 100000u);
  EXPECT_FALSE(parse_count("-3"));
  EXPECT_FALSE(parse_count("3.5"));
}

// The value `name` prints back in c, as --print-config and the report show it.
std::string option_text(const run_config& c, std::string_view name) {
  for (const config_entry& e : describe(c))
    if (e.name == name) return e.text;
  ADD_FAILURE() << "no option " << name;
  return {};
}

// Sets one option from its text as the command line would: the error, or "".
std::string set_option(run_config& c, std::string_view name, const std::string& text) {
  return apply_options(c, {"--" + std::string(name), text});
}

TEST(RunConfig, EveryOptionReadsBackWhatItPrints) {
  run_config c;
  ASSERT_EQ(set_option(c, "rate", "1234.5"), "");
  c.stop.duration_s = 1.5;
  c.out.report = "x.json";
  c.colony.sign = false;
  for (const config_entry& e : describe(c)) {
    if (e.text.empty()) continue;
    run_config d = c;
    EXPECT_EQ(set_option(d, e.name, e.text), "") << e.name << " = " << e.text;
    EXPECT_EQ(option_text(d, e.name), e.text) << e.name;
  }
}

// An empty file, for the options that read one (--rc-params takes it as the built-in values).
const std::string& empty_file() {
  static const std::string path = [] {
    std::string p =
        (std::filesystem::temp_directory_path() / ("apiary-empty-" + std::to_string(::getpid()) + ".toml")).string();
    std::ofstream{p};
    return p;
  }();
  return path;
}

// A value other than the default that an option takes, found by trying a few: so that a new
// option needs no entry here.
std::string other_value(const config_entry& e) {
  const std::vector<std::string> candidates = {
      "off",     "on",      "1",     "2",         "65536",   "1048576",   "block",  "async",
      "bounded", "unified", "state", "volatile",  "recover", "debug",     "vote=1", "duplicate=0.5",
      "x.json",  "other",   "clock", "vesting:1", "mapped",  empty_file()};
  for (const std::string& v : candidates) {
    run_config c;
    if (set_option(c, e.name, v).empty() && option_text(c, e.name) != e.text) return v;
  }
  return {};
}

TEST(RunConfig, EveryOptionSetsItsOwnField) {
  // Each option, set to a value other than its default, changes what it prints and nothing
  // else: no two options share a field, and none is lost.
  const std::vector<config_entry> defaults = describe(run_config{});
  for (const config_entry& e : defaults) {
    const std::string value = other_value(e);
    ASSERT_FALSE(value.empty()) << "no other value found for --" << e.name;
    run_config c;
    ASSERT_EQ(set_option(c, e.name, value), "") << e.name;
    for (const config_entry& after : describe(c)) {
      const auto before =
          std::find_if(defaults.begin(), defaults.end(), [&](const config_entry& d) { return d.name == after.name; });
      if (after.name == e.name)
        EXPECT_NE(after.text, before->text) << "--" << e.name << " did not change its value";
      else
        EXPECT_EQ(after.text, before->text) << "--" << e.name << " also changed --" << after.name;
    }
  }
  std::filesystem::remove(empty_file());
}

TEST(RunConfig, RateForms) {
  run_config c;
  ASSERT_EQ(set_option(c, "rate", "block"), "");
  EXPECT_EQ(c.colony.rate, colony::rate_mode::block_budget);
  ASSERT_EQ(set_option(c, "rate", "5000tps"), "");
  EXPECT_EQ(c.colony.rate, colony::rate_mode::tps);
  EXPECT_EQ(c.colony.tps_limit, 5000);
  EXPECT_NE(set_option(c, "rate", "0"), "");
}

TEST(RunConfig, BadValuesNameTheOptionAndWhatIsAllowed) {
  run_config c;
  EXPECT_NE(set_option(c, "threads", "0").find("from 1 to 128"), std::string::npos);
  EXPECT_NE(set_option(c, "dedup", "both").find("split or unified"), std::string::npos);
  EXPECT_NE(set_option(c, "sign", "maybe").find("on or off"), std::string::npos);
  EXPECT_NE(set_option(c, "block-size", "lots").find("--block-size"), std::string::npos);
  EXPECT_EQ(c.colony.threads, run_config{}.colony.threads) << "a bad value changed the field";
}

TEST(RunConfig, ResolveTiesTheChainToTheColony) {
  run_config c;
  c.colony.sign = false;
  c.chain.genesis_accounts = 1234;
  c.writer.block_size = 65536;
  resolve(c);
  EXPECT_FALSE(c.chain.check_authority);
  EXPECT_EQ(c.colony.genesis_accounts, 1234u);
  EXPECT_EQ(c.colony.block_size, 65536u);
}

// On the chain's clock the colony and the writer get the one schedule, seeded with the run's
// --seed: the colony's per-block budget and the writer's block cut agree on every slot. By size
// neither has one, and the colony keeps its rate.
TEST(RunConfig, ResolveGivesTheColonyAndTheWriterOneSlotSchedule) {
  run_config c;
  ASSERT_EQ(set_option(c, "blocks-by", "clock"), "");
  ASSERT_EQ(set_option(c, "slot-transactions", "uniform:10..20"), "");
  ASSERT_EQ(set_option(c, "seed", "42"), "");
  resolve(c);
  EXPECT_EQ(validate(c), std::nullopt);
  EXPECT_EQ(c.colony.rate, colony::rate_mode::block_budget);
  ASSERT_TRUE(c.colony.slots && c.writer.clock);
  EXPECT_EQ(*c.colony.slots, *c.writer.clock);
  EXPECT_EQ(c.writer.clock->seed, 42u);
  EXPECT_EQ(c.writer.block_transactions, 0u);
  run_config sized;
  resolve(sized);
  EXPECT_FALSE(sized.colony.slots || sized.writer.clock);
  EXPECT_EQ(sized.colony.rate, colony::rate_mode::infinite);
}

// A slot's count depends on the schedule, the seed and the block's number alone, within the
// distribution's range, and reads back from its text.
TEST(SlotSchedule, DrawsAreDeterministicPerBlockAndWithinRange) {
  for (const char* text : {"700", "poisson:300", "uniform:5..9"}) {
    core::slot_schedule_parse parsed = core::parse_slot_schedule(text);
    ASSERT_TRUE(parsed.schedule) << text << ": " << parsed.problem;
    core::slot_schedule s = *parsed.schedule;
    EXPECT_EQ(core::to_string(s), text);
    s.seed = 7;
    core::slot_schedule again = s;
    std::uint64_t sum = 0;
    std::uint32_t low = UINT32_MAX, high = 0;
    for (std::uint32_t b = 1; b <= 2000; ++b) {
      const std::uint32_t n = s.count(b);
      EXPECT_EQ(n, again.count(b));
      sum += n;
      low = std::min(low, n);
      high = std::max(high, n);
    }
    const double mean = static_cast<double>(sum) / 2000;
    if (s.form == core::slot_schedule::shape::constant) {
      EXPECT_EQ(low, high);
    }
    if (s.form == core::slot_schedule::shape::uniform) {
      EXPECT_EQ(low, 5u);
      EXPECT_EQ(high, 9u);
    }
    if (s.form == core::slot_schedule::shape::poisson) {
      EXPECT_NEAR(mean, 300, 3);  // the mean of 2,000 draws: a standard error of 0.4
      EXPECT_LT(low, high);
    }
    again.seed = 8;
    if (s.form != core::slot_schedule::shape::constant) {
      std::uint32_t same = 0;
      for (std::uint32_t b = 1; b <= 100; ++b) same += s.count(b) == again.count(b);
      EXPECT_LT(same, 60u) << text << ": another seed draws the same counts";
    }
  }
  for (const char* bad : {"", "-1", "poisson:0", "poisson:x", "uniform:9..5", "uniform:5", "12x", "10000001"})
    EXPECT_FALSE(core::parse_slot_schedule(bad).schedule) << bad;
}

// The comments' table is sized for the run's blocks of the mix's articles and replies (with
// a tenth to spare), an hour's blocks when the run is not counted in blocks, none without
// comments in the mix; the chain reserves it at genesis.
TEST(RunConfig, SizedChainSizesTheCommentsForTheRun) {
  run_config c;
  c.chain.genesis_accounts = 1000;
  resolve(c);
  const std::uint64_t per_block = colony::estimate_block_transactions(c.colony);
  const colony::mix_config& mix = c.colony.mix;
  const std::uint64_t per_block_comments =
      per_block * (mix[colony::op_kind::article].weight + mix[colony::op_kind::reply].weight) / mix.total_weight();
  ASSERT_GT(per_block_comments, 0u);
  EXPECT_EQ(sized_chain(c).expected_comments, per_block_comments * (c.stop.blocks + c.stop.warmup_blocks) * 11 / 10);
  c.stop.blocks = 0;
  EXPECT_EQ(sized_chain(c).expected_comments, per_block_comments * core::chain_limits::expiration_blocks * 11 / 10);
  c.chain.cashout_blocks = 10;
  EXPECT_EQ(sized_chain(c).expected_comments, per_block_comments * 10 * 11 / 10) << "they pay out and leave";
  c.colony.mix[colony::op_kind::article].weight = 0;
  c.colony.mix[colony::op_kind::reply].weight = 0;
  EXPECT_EQ(sized_chain(c).expected_comments, 0u);

  core::chain_options o = c.chain;
  o.genesis_accounts = 10;
  o.expected_comments = 5000;
  const core::chain chain(o);
  EXPECT_GE(chain.db().get_index<core::comment_index>().get<core::by_permlink>().bucket_count(), 5000u);
}

TEST(RunConfig, BlockSizeAboveTheChainMaximumNeedsAnExplicitMaximum) {
  run_config c;
  c.writer.block_size = 4 * 1024 * 1024;
  auto problem = validate(c);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("--block-size"), std::string::npos) << *problem;
  c.max_block_size = 8 * 1024 * 1024;
  EXPECT_EQ(validate(c), std::nullopt);
}

TEST(RunConfig, DefaultsAreValid) { EXPECT_EQ(validate(run_config{}), std::nullopt); }

// A small signed workload, saved next to the test binary.
class WorkloadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    run_config c;
    c.chain.genesis_accounts = 50;
    c.colony.seed = 11;
    w_ = generate_saved_workload(c, 60);
    path_ = (std::filesystem::temp_directory_path() / ("apiary-workload-test-" + std::to_string(::getpid()))).string();
    save_workload(path_, w_);
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  void TearDown() override { std::filesystem::remove(path_); }

  void write(const std::vector<char>& content) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  }

  saved_workload w_;
  std::string path_;
  std::vector<char> bytes_;
};

TEST_F(WorkloadFile, LoadsBackTheSameBytesKeysAndMeta) {
  const saved_workload back = load_workload(path_);
  EXPECT_EQ(back.meta.seed, 11u);
  EXPECT_EQ(back.meta.accounts, 50u);
  EXPECT_EQ(back.meta.streams, w_.meta.streams);
  EXPECT_TRUE(back.meta.sign);
  EXPECT_EQ(back.meta.chain, w_.meta.chain);
  ASSERT_EQ(back.transactions.size(), w_.transactions.size());
  for (std::size_t i = 0; i < back.transactions.size(); ++i) {
    const auto& a = *w_.transactions[i];
    const auto& b = *back.transactions[i];
    ASSERT_TRUE(std::equal(a.packed().begin(), a.packed().end(), b.packed().begin(), b.packed().end())) << i;
    EXPECT_EQ(a.id(), b.id());
    EXPECT_EQ(a.sig_digest(), b.sig_digest());
    EXPECT_EQ(a.signer_keys(), b.signer_keys());
    EXPECT_EQ(b.signer_keys().size(), 1u);
  }
}

TEST_F(WorkloadFile, TheSameOptionsGiveTheSameFile) {
  run_config c;
  c.chain.genesis_accounts = 50;
  c.colony.seed = 11;
  save_workload(path_, generate_saved_workload(c, 60));
  std::ifstream in(path_, std::ios::binary);
  const std::vector<char> again((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(again, bytes_);
}

TEST_F(WorkloadFile, EveryTruncationIsAnError) {
  for (std::size_t n = 0; n < bytes_.size(); n += (n < 200 ? 1 : 97)) {
    write(std::vector<char>(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(n)));
    EXPECT_THROW(load_workload(path_), workload_error) << n << " bytes";
  }
}

TEST_F(WorkloadFile, EveryFlippedByteIsAnError) {
  for (std::size_t i = 0; i < bytes_.size(); i += 13) {
    std::vector<char> damaged = bytes_;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x20);
    write(damaged);
    EXPECT_THROW(load_workload(path_), workload_error) << "byte " << i;
  }
}

TEST_F(WorkloadFile, AMissingFileNamesItself) {
  std::filesystem::remove(path_);
  try {
    load_workload(path_);
    FAIL() << "no error";
  } catch (const workload_error& e) {
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
}

TEST(Replay, TheSameWorkloadGivesTheSameChainUnderEverySwitch) {
  run_config c;
  c.chain.genesis_accounts = 200;
  c.writer.block_size = 16 * 1024;
  const saved_workload w = generate_saved_workload(c, 600);
  const replay_result base = replay_workload(c, w);
  ASSERT_TRUE(base.error.empty()) << base.error;
  EXPECT_EQ(base.accepted, 600u);
  EXPECT_GE(base.blocks.size(), 5u);
  // The switches change how the core gets there, never where it ends up.
  run_config slow = c;
  slow.chain.db.keep_alive = slow.chain.db.pool_objects = slow.chain.db.pool_undo = false;
  slow.chain.dedup = core::dedup_mode::unified;
  slow.chain.custom_ops = core::counter_mode::state;
  slow.chain.signers = core::signer_source::recover;
  slow.chain.rc = core::rc_mode::volatile_charges;
  for (const run_config& variant : {c, slow}) {
    const replay_result r = replay_workload(variant, w);
    EXPECT_EQ(r.state_digest, base.state_digest);
    EXPECT_EQ(r.head_block_id, base.head_block_id);
    EXPECT_EQ(r.accepted, base.accepted);
  }
}

// A state's blocks are made in rounds generated at once, yet its ids expire as a live chain's
// do: empty blocks after it prune about a block's worth each, the last one an hour after the
// block it went in, never a whole round in one block.
TEST(Snapshot, AStatesIdsExpireABlockAtATime) {
  run_config c;
  c.chain.genesis_accounts = 200;
  c.colony.sign = false;
  c.writer.block_size = 16 * 1024;
  resolve(c);
  const std::unique_ptr<core::chain> chain = make_genesis_chain(sized_chain(c));
  const std::uint32_t blocks = 12;
  const advance_result made = advance_chain(
      c, *chain, blocks, [] { return false; }, [](std::uint32_t) {});
  ASSERT_TRUE(made.error.empty()) << made.error;
  ASSERT_EQ(made.rounds, 1u) << "the blocks of one round share its generation";
  ASSERT_EQ(made.rejected, 0u) << "no transaction expires too far ahead of the block it lands in";
  chain->clear_pending();
  const std::uint64_t per_block = made.in_blocks / blocks;
  std::uint64_t pruned = 0;
  std::uint32_t pruning_blocks = 0;
  std::uint32_t largest = 0;
  for (std::uint32_t i = 0; i < core::chain_limits::expiration_blocks + blocks + 2; ++i) {
    const core::block_result r = chain->apply_block(chain->generate_block());
    pruned += r.pruned;
    pruning_blocks += r.pruned != 0 ? 1 : 0;
    largest = std::max(largest, r.pruned);
  }
  EXPECT_EQ(pruned, made.in_blocks) << "every id of the state expired";
  EXPECT_GE(pruning_blocks, blocks - 1) << "the round's ids expire over its blocks";
  EXPECT_LE(largest, per_block * 12 / 10 + 1) << "no block prunes much more than a block's worth";
}

// Every fault kind alone, under the switches that change how the chain keeps what a
// rejection must not leave behind (dedup index, custom-op counters, RC charges, signer keys): each
// companion is rejected for its own reason, nothing else is, and the chain ends in the state
// it reaches without faults.
// ---- the settled stream -----------------------------------------------------------------

// A distinct unsigned transaction (its reference block number tells it apart).
core::full_transaction_ptr numbered_transaction(std::uint16_t n) {
  core::signed_transaction t;
  t.ref_block_num = n;
  return std::make_shared<const core::full_transaction>(std::move(t), core::chain_id{});
}

// What a reader was given, call by call.
class reading_log final : public settled_reader {
 public:
  void read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block> blocks) override {
    calls.push_back({});
    for (const queen::tx_timing& t : transactions) calls.back().first.push_back(t.tx);
    for (const queen::settled_block& b : blocks) calls.back().second.push_back(b.num);
  }
  std::vector<std::pair<std::vector<core::full_transaction_ptr>, std::vector<std::uint32_t>>> calls;
};

// Blocks 1..n of one transaction each, every one accepted, handed over as the writer does:
// the batch of pushes, then each block after its push.
void hand_over_blocks(queen::timing_outbox& out, const std::vector<core::full_transaction_ptr>& txs) {
  std::vector<queen::queued_tx> batch;
  std::vector<queen::push_outcome> outcomes;
  for (std::size_t i = 0; i < txs.size(); ++i) {
    batch.push_back({txs[i], {}, {}, static_cast<std::int64_t>(i)});
    outcomes.push_back({core::reject::none, static_cast<std::int64_t>(10 + i)});
  }
  out.hand_over(batch, outcomes);
  for (std::size_t i = 0; i < txs.size(); ++i) {
    queen::settled_block b;
    b.num = static_cast<std::uint32_t>(i + 1);
    b.transactions = {txs[i]};
    out.hand_over_block(i + 1, std::move(b), {});
  }
}

TEST(SettledStream, EveryReaderSeesEverythingOnceInOrder) {
  std::vector<core::full_transaction_ptr> txs;
  for (std::uint16_t n = 1; n <= 5; ++n) txs.push_back(numbered_transaction(n));
  settled_stream stream;
  reading_log a, b;
  transaction_sample sample(3);
  block_capture capture(2, 2);  // blocks 2 and 3
  stream.add(a);
  stream.add(sample);
  stream.add(capture);
  stream.add(b);
  hand_over_blocks(stream.outbox(), txs);
  stream.drain();
  stream.drain();  // nothing new: each reader is called with nothing
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(a.calls[0].first, txs);
  EXPECT_EQ(a.calls[0].second, (std::vector<std::uint32_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(a.calls[1].first.empty() && a.calls[1].second.empty());
  EXPECT_EQ(b.calls, a.calls);

  ASSERT_EQ(sample.records().size(), 3u) << "the first three to settle, no more";
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sample.records()[i].tx, txs[i]);
    EXPECT_TRUE(sample.records()[i].included());
  }
  ASSERT_EQ(capture.blocks().size(), 2u);
  EXPECT_EQ(capture.blocks()[0].num, 2u);
  EXPECT_EQ(capture.blocks()[1].transactions, std::vector<core::full_transaction_ptr>{txs[2]});
  EXPECT_EQ(txs[4].use_count(), 3) << "what no reader keeps is released: only the test and the two logs hold it";
}

TEST(Faults, EachKindIsRejectedForItsReasonAndLeavesNoTrace) {
  run_config base;
  base.chain.genesis_accounts = 300;
  base.writer.block_size = 16 * 1024;
  const saved_workload clean = generate_saved_workload(base, 800);
  const replay_result expected = replay_workload(base, clean);
  ASSERT_TRUE(expected.error.empty()) << expected.error;
  ASSERT_EQ(expected.rejections.rejected(), 0u);

  for (std::size_t i = 0; i < colony::fault_kind_count; ++i) {
    const auto kind = static_cast<colony::fault_kind>(i);
    run_config c = base;
    c.colony.faults[kind] = 0.1;
    const saved_workload w = generate_saved_workload(c, 800);
    const std::uint64_t injected = w.meta.faults[i];
    EXPECT_GT(injected, 40u) << colony::fault_kind_name(kind);
    EXPECT_EQ(w.transactions.size(), clean.transactions.size() + injected);

    for (int variant = 0; variant < 4; ++variant) {
      run_config v = c;
      if (variant & 1) {
        v.chain.dedup = core::dedup_mode::unified;
        v.chain.custom_ops = core::counter_mode::state;
        v.chain.rc = core::rc_mode::volatile_charges;
      }
      if (variant & 2) v.chain.signers = core::signer_source::recover;
      const replay_result r = replay_workload(v, w);
      SCOPED_TRACE(std::string(colony::fault_kind_name(kind)) + " variant " + std::to_string(variant));
      ASSERT_TRUE(r.error.empty()) << r.error;
      EXPECT_EQ(r.rejections[colony::expected_reject(kind)], injected);
      EXPECT_EQ(r.rejections.rejected(), injected);
      EXPECT_EQ(r.accepted, expected.accepted);
      EXPECT_EQ(r.state_digest, expected.state_digest);
      EXPECT_EQ(r.head_block_id, expected.head_block_id);
    }
  }
}

TEST(Faults, OptionTextRoundTripsAndBadTextIsNamed) {
  run_config c;
  ASSERT_EQ(set_option(c, "faults", "duplicate=0.01, oversize=0.5"), "");
  EXPECT_EQ(option_text(c, "faults"), "duplicate=0.01,oversize=0.5");
  ASSERT_EQ(set_option(c, "faults", "none"), "");
  EXPECT_FALSE(c.colony.faults.any());
  for (const char* bad : {"dupe=0.1", "duplicate=2", "duplicate", "duplicate=-0.1", "expired=0.6,oversize=0.6"})
    EXPECT_NE(set_option(c, "faults", bad), "") << bad;
  EXPECT_NE(set_option(c, "faults", "dupe=0.1").find("dupe"), std::string::npos);
  ASSERT_EQ(set_option(c, "faults", "missing-authority=0.1"), "");
  c.colony.sign = false;
  const auto problem = validate(c);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("--faults"), std::string::npos) << *problem;
}

TEST(Mix, OptionTextRoundTripsAndBadTextIsNamed) {
  run_config c;
  const std::string hive = option_text(c, "mix");
  ASSERT_EQ(set_option(c, "mix", hive), "");
  EXPECT_EQ(c.colony.mix, colony::mix_config{});
  ASSERT_EQ(set_option(c, "mix", "vote=1, custom_json=3:10-20"), "");
  EXPECT_EQ(c.colony.mix[colony::op_kind::vote].weight, 1u);
  EXPECT_EQ(c.colony.mix[colony::op_kind::custom_json].min, 10u);
  EXPECT_EQ(c.colony.mix[colony::op_kind::article].weight, 16u);  // not named: kept
  const struct {
    const char* text;
    const char* names;
  } bad[] = {
      {"poll=3", "poll"},
      {"article=0,reply=0,vote=0,transfer=0,custom_json=0", "no weight"},
      {"transfer=5:400-300", "min"},
      {"vote=x", "weight"},
      {"vote", "kind=weight"},
      {"reply=3:5", "range"},
      {"", "kind=weight"},
  };
  for (const auto& b : bad) {
    run_config d;
    const std::string problem = set_option(d, "mix", b.text);
    ASSERT_NE(problem, "") << b.text;
    EXPECT_NE(problem.find(b.names), std::string::npos) << b.text << ": " << problem;
    EXPECT_EQ(d.colony.mix, colony::mix_config{}) << "a bad --mix changed the mix";
  }
}

// A run's worth of blocks, acceptances and colony counts, made by hand on one thread, for
// audit_run() to pass, and then to fail once each is broken.
class Audit : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.chain.genesis_accounts = 100;
    c_.writer.block_size = 16 * 1024;
    const saved_workload w = generate_saved_workload(c_, 300);
    chain_ = std::make_unique<core::chain>(replay_chain_options(c_, w.meta));
    for (std::size_t i = 0; i < w.transactions.size(); ++i) {
      const core::full_transaction_ptr& tx = w.transactions[i];
      const core::reject r = chain_->push_transaction(tx);
      colony_.outcomes.add(r);
      if (r == core::reject::none) accepted_.push_back({tx->id(), tx->tx().expiration});
      if (i % 60 != 59) continue;
      const core::full_block b = chain_->generate_block(c_.writer.block_size);
      const core::block_id previous = chain_->head_block_id();
      const core::block_result applied = chain_->apply_block(b);
      queen::block_record rec;
      rec.num = chain_->head_block_num();
      rec.transactions = applied.applied;
      rec.size_bytes = static_cast<std::uint32_t>(b.packed_size());
      rec.dropped = applied.dropped;
      rec.id = chain_->head_block_id();
      rec.previous = previous;
      blocks_.push_back(rec);
    }
    ASSERT_GE(blocks_.size(), 4u);
    ASSERT_GT(chain_->pending_count(), 0u);
    // The settled stream's record: the acceptances that are no longer pending.
    std::erase_if(accepted_, [this](const accepted_id& a) {
      return std::any_of(chain_->pending().begin(), chain_->pending().end(),
                         [&a](const core::full_transaction_ptr& tx) { return tx->id() == a.id; });
    });
  }

  void expect_violation(const std::vector<queen::block_record>& blocks, const std::vector<accepted_id>& accepted,
                        const colony::colony_stats& k, std::string_view what) {
    const audit_result a = audit_run(c_, *chain_, blocks, accepted, k);
    ASSERT_FALSE(a.passed()) << what;
    bool named = false;
    for (const std::string& v : a.violations) named = named || v.find(what) != std::string::npos;
    EXPECT_TRUE(named) << what << " not in: " << a.violations.front();
  }

  run_config c_;
  std::unique_ptr<core::chain> chain_;
  std::vector<queen::block_record> blocks_;
  std::vector<accepted_id> accepted_;
  colony::colony_stats colony_;
};

TEST_F(Audit, PassesOnAConsistentRun) {
  const audit_result a = audit_run(c_, *chain_, blocks_, accepted_, colony_);
  EXPECT_TRUE(a.passed()) << a.violations.front();
  EXPECT_EQ(a.checks, 4u);
  EXPECT_EQ(a.known_transactions, accepted_.size() + chain_->pending_count());
}

TEST_F(Audit, NamesABrokenIdChain) {
  auto b = blocks_;
  b[2].previous = core::block_id{};
  expect_violation(b, accepted_, colony_, "previous");
}

TEST_F(Audit, NamesAnOversizeBlock) {
  auto b = blocks_;
  b[1].size_bytes = c_.writer.block_size + 1;
  expect_violation(b, accepted_, colony_, "above");
}

TEST_F(Audit, NamesAMissingBlock) {
  auto b = blocks_;
  b.erase(b.begin() + 2);
  expect_violation(b, accepted_, colony_, "follows");
}

TEST_F(Audit, NamesALedgerMismatch) {
  colony::colony_stats k = colony_;
  k.outcomes.add(core::reject::none);
  expect_violation(blocks_, accepted_, k, "ledger");
}

TEST_F(Audit, NamesAnAcceptanceTheStreamLost) {
  auto a = accepted_;
  a.erase(a.begin());
  expect_violation(blocks_, a, colony_, "the settled stream recorded");
}

TEST_F(Audit, NamesAnIdTheRunNeverAccepted) {
  // The chain knows an id the run's record lacks: counted as known beyond the accepted.
  auto a = accepted_;
  a.pop_back();
  colony::colony_stats k = colony_;
  k.outcomes.by_reason[0] -= 1;
  expect_violation(blocks_, a, k, "dedup");
}

}  // namespace
}  // namespace apiary::harness
