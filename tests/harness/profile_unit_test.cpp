// The parts of `apiary run --profile` that need no perf: the folded stacks split by thread,
// the functions' self and total samples, the files' text, and the child processes that run
// the tools (profile_stacks.hpp, child_process.hpp). tests/harness/profile_test.py runs the
// whole of it with the real perf.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <map>
#include <string>

#include "apiary/harness/cycle/profile_stacks.hpp"
#include "apiary/harness/io/child_process.hpp"

namespace apiary::harness {
namespace {

const std::map<int, std::string> names{{101, "writer"}, {102, "producer-0"}, {103, "producer-1"}};

TEST(ProfileStacks, ThreadNamesComeFromTheRunThenFromPerf) {
  EXPECT_EQ(thread_name_of("apiary-100/100", names, 100), "main");
  EXPECT_EQ(thread_name_of(":101-100/101", names, 100), "writer");
  // A comm with dashes and slashes of its own: the numbers are the last two fields.
  EXPECT_EQ(thread_name_of("a-b/c-100/102", names, 100), "producer-0");
  EXPECT_EQ(thread_name_of("log-100/104", names, 100), "log");
  EXPECT_EQ(thread_name_of(":105-?/105", names, 100), "thread-105");
  EXPECT_EQ(thread_name_of("no-numbers", names, 100), "no-numbers");
}

TEST(ProfileStacks, StacksAreCountedPerThreadName) {
  const std::string folded =
      ":101-100/101;clone3;loop;push 7\n"
      ":101-100/101;clone3;loop;produce_block 3\n"
      "apiary-100/100;main;wait 2\n"
      ":102-100/102;clone3;std::tuple<int const&, long> make 5\n"
      "broken line\n"
      ":103-100/103;clone3;make x\n"
      "\n";
  const window_stacks w = stacks_by_thread(folded, names, 100);
  EXPECT_EQ(w.samples, 17u);
  EXPECT_EQ(w.malformed_lines, 2u);
  EXPECT_EQ(w.thread_samples.at("writer"), 10u);
  EXPECT_EQ(w.thread_samples.at("main"), 2u);
  // A frame with spaces keeps them: the count is after the last one.
  EXPECT_EQ(w.stacks.at("producer-0;clone3;std::tuple<int const&, long> make"), 5u);
  EXPECT_EQ(folded_text(w),
            "main;main;wait 2\n"
            "producer-0;clone3;std::tuple<int const&, long> make 5\n"
            "writer;clone3;loop;produce_block 3\n"
            "writer;clone3;loop;push 7\n");
  EXPECT_EQ(thread_folded_text(w, "writer"), "clone3;loop;produce_block 3\nclone3;loop;push 7\n");
  EXPECT_EQ(thread_folded_text(w, "write"), "");
}

TEST(ProfileStacks, ThreadsOfOneNameAreOne) {
  const window_stacks w = stacks_by_thread(":201-100/201;run;a 1\n:202-100/202;run;a 2\n", {}, 100);
  EXPECT_EQ(w.stacks.at("thread-201;run;a"), 1u);
  const window_stacks same = stacks_by_thread("pool-100/201;run;a 1\npool-100/202;run;a 2\n", {}, 100);
  EXPECT_EQ(same.stacks.at("pool;run;a"), 3u);
  EXPECT_EQ(same.thread_samples.size(), 1u);
}

TEST(ProfileStacks, SelfIsTheLeafAndTotalCountsARecursionOnce) {
  const window_stacks w = stacks_by_thread(
      "writer-1/2;loop;push;find 6\n"
      "writer-1/2;loop;push 2\n"
      "writer-1/2;loop;walk;walk;walk 4\n"
      "producer-0-1/3;make;find 1\n",
      {}, 1);
  const std::vector<function_samples> f = functions_by_self(w);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0].name, "find");
  EXPECT_EQ(f[0].self, 7u);
  EXPECT_EQ(f[0].total, 7u);
  EXPECT_EQ(f[1].name, "walk");
  EXPECT_EQ(f[1].self, 4u);
  EXPECT_EQ(f[1].total, 4u);  // not 12: once per stack
  EXPECT_EQ(f[2].name, "push");
  EXPECT_EQ(f[2].total, 8u);
  EXPECT_EQ(f[3].name, "loop");  // no self samples: after those with some, by total
  EXPECT_EQ(f[3].total, 12u);
  EXPECT_EQ(f[4].name, "make");
  // The thread frames are not functions.
  for (const function_samples& x : f) EXPECT_NE(x.name, "writer");
  EXPECT_EQ(top_tsv({f[0]}, w.samples),
            "function\tself_share\ttotal_share\tself_samples\ttotal_samples\nfind\t0.538462\t0.538462\t7\t7\n");
}

TEST(ProfileStacks, NamesForFilesAndForTheSummary) {
  EXPECT_EQ(thread_file_name("producer-1"), "producer-1");
  EXPECT_EQ(thread_file_name("a/b"), "a_b");
  EXPECT_EQ(thread_file_name(".hidden"), "_hidden");
  EXPECT_EQ(thread_file_name(""), "thread");
  EXPECT_EQ(short_function_name("apiary::core::undo_index<a, std::less<int> >::create<f(x)>"),
            "apiary::core::undo_index<…>::create<…>");
  EXPECT_EQ(short_function_name("std::operator<< <char>"), "std::operator<< <…>");
  EXPECT_EQ(short_function_name("apiary::core::chain::push"), "apiary::core::chain::push");
}

TEST(ChildProcess, FindsProgramsOnThePath) {
  EXPECT_FALSE(find_program("sh").empty());
  EXPECT_EQ(find_program("apiary-no-such-program"), "");
}

TEST(ChildProcess, RunsAPipelineAndSaysWhichStageFailed) {
  const std::string sh = find_program("sh");
  const pipeline_result ok =
      run_pipeline({{sh, "-c", "printf 'a\\nb\\n'"}, {sh, "-c", "tr a-z A-Z"}}, std::chrono::seconds(30));
  EXPECT_EQ(ok.error, "");
  EXPECT_EQ(ok.out, "A\nB\n");
  const pipeline_result failed =
      run_pipeline({{sh, "-c", "echo 'no such file' >&2; exit 3"}, {sh, "-c", "cat"}}, std::chrono::seconds(30));
  EXPECT_EQ(failed.error, "sh: exit status 3: no such file");
  EXPECT_EQ(failed.out, "");
}

TEST(ChildProcess, AChildOverItsTimeIsKilled) {
  const std::string sh = find_program("sh");
  const auto t0 = std::chrono::steady_clock::now();
  const pipeline_result late = run_pipeline({{sh, "-c", "sleep 30"}}, std::chrono::milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_NE(late.error.find("sh: "), std::string::npos) << late.error;
  child_process c;
  ASSERT_EQ(c.start({{sh, "-c", "exit 0"}, -1, -1, -1, {}, false}), std::nullopt);
  const child_exit e = c.wait(std::chrono::seconds(30));
  EXPECT_TRUE(e.exited_ok()) << e.describe();
}

TEST(ChildProcess, ABatchChildIsScheduledSo) {
  child_process c;
  ASSERT_EQ(c.start({{find_program("sleep"), "5"}, -1, -1, -1, {}, false, true}), std::nullopt);
  EXPECT_EQ(sched_getscheduler(c.pid()), SCHED_BATCH);
  c.signal(SIGKILL);
  EXPECT_TRUE(c.wait(std::chrono::seconds(30)).killed_by(SIGKILL));
}

TEST(ChildProcess, PassesDescriptorsAtFixedNumbersAndClosesTheRest) {
  const std::string sh = find_program("sh");
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  child_text out;
  child_process c;
  // fd 3 is the passed pipe; fd 4 (and every other) is closed in the child.
  ASSERT_EQ(c.start({{sh, "-c", "echo passed >&3; echo 4 >&4 || echo closed"}, -1, out.fd(), -1, {p[1]}, false}),
            std::nullopt);
  close(p[1]);
  EXPECT_TRUE(c.wait(std::chrono::seconds(30)).exited_ok());
  char buf[32] = {};
  EXPECT_EQ(read(p[0], buf, sizeof buf - 1), 7);
  EXPECT_STREQ(buf, "passed\n");
  close(p[0]);
  EXPECT_EQ(out.last_line(), "closed");
}

}  // namespace
}  // namespace apiary::harness
