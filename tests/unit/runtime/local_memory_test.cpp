// Executing operation streams on this node's copies: write and read, 32-bit truncation,
// sched/assign with the pending-read table (reads wait for the assign of the version they
// saw), messages and group operations handed to the sink, the history when tracing, pages
// in the window or on the heap, and an error naming the source for every malformed stream.
#include "runtime/smm/local_memory.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/window_memory.hpp"

namespace iso::runtime {
namespace {

using test::window_memory;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::uint32_t kPage = 8;

// Records what execution does outside memory.
class recording_sink : public execution_sink {
 public:
  struct result {
    node_id reader;
    std::uint32_t slot;
    std::uint32_t first;
    std::vector<std::uint64_t> values;
    bool operator==(const result&) const = default;
  };
  struct executed_op {
    std::uint64_t pulse;
    std::uint32_t pid;
    std::uint64_t rank;
    std::uint32_t op_index;
    op_code code;
    std::uint64_t address;
    std::uint64_t value;
    bool operator==(const executed_op&) const = default;
  };
  struct group {
    node_id source;
    op_code code;
    std::uint64_t address;
    std::vector<std::byte> payload;
    std::uint64_t instance;
  };

  void read_result(node_id reader, std::uint32_t slot, std::uint32_t first,
                   std::span<const std::uint64_t> values) override {
    results.push_back({reader, slot, first, {values.begin(), values.end()}});
  }
  absl::Status run_handler(node_id source, std::uint32_t handler,
                           std::span<const std::byte> payload) override {
    handlers.push_back({source, op_code::message, handler, {payload.begin(), payload.end()}, 0});
    return handler_status;
  }
  absl::Status group_op(node_id source, const op_header& op, std::span<const std::byte> payload,
                        std::uint64_t instance) override {
    groups.push_back({source, op.code, op.address, {payload.begin(), payload.end()}, instance});
    return absl::OkStatus();
  }
  void executed(const exec_position& at, std::uint32_t op_index, op_code code,
                std::uint64_t address, std::uint64_t value) override {
    history.push_back({at.pulse, at.pid, at.rank, op_index, code, address, value});
  }
  [[nodiscard]] bool tracing() const override { return trace; }

  bool trace = false;
  absl::Status handler_status;
  std::vector<result> results;
  std::vector<group> handlers;
  std::vector<group> groups;
  std::vector<executed_op> history;
};

// Builds a stream of records (no stream header: execute() takes what follows it).
class stream {
 public:
  stream& read(std::uint64_t address, std::uint32_t count, std::uint32_t slot,
               std::uint32_t first = 0, std::uint8_t width = 8, std::uint16_t index = 0) {
    out_.put(op_header{op_code::read, width, index, count, address});
    out_.put(read_body{slot, first});
    return *this;
  }
  stream& change(op_code code, std::uint64_t address, const std::vector<std::uint64_t>& values,
                 std::uint8_t width = 8, std::uint16_t index = 0) {
    out_.put(op_header{code, width, index, static_cast<std::uint32_t>(values.size()), address});
    for (std::uint64_t v : values) out_.put(v);
    return *this;
  }
  stream& sched(std::uint64_t address, std::uint32_t count, std::uint16_t index = 0) {
    out_.put(op_header{op_code::sched, 8, index, count, address});
    return *this;
  }
  stream& message(op_code code, std::uint64_t handler, const std::vector<std::byte>& payload) {
    out_.put(op_header{code, 0, 0, static_cast<std::uint32_t>(payload.size()), handler});
    out_.put_bytes(payload);
    return *this;
  }
  stream& header(const op_header& h) {
    out_.put(h);
    return *this;
  }
  template <typename T>
  stream& raw(const T& value) {
    out_.put(value);
    return *this;
  }
  [[nodiscard]] std::span<const std::byte> bytes() const { return buffer_.bytes(); }
  // The stream without its last `n` bytes.
  [[nodiscard]] std::span<const std::byte> cut(std::size_t n) const {
    return bytes().first(bytes().size() - n);
  }

 private:
  byte_buffer buffer_;
  op_writer out_{buffer_};
};

// Node 0 of 3 holds `mine` (16 64-bit variables, also on node 1) and `narrow` (8 32-bit);
// `theirs` (8 variables) is on node 2 only.
class LocalMemory : public testing::Test {
 protected:
  LocalMemory()
      : topo_(nicfw::topology::single_switch(3)),
        pages_(0, topo_, kPage),
        window_({}, kPage),
        memory_(pages_, window_) {
    mine_ = pages_.allocate(16, 8,
                            [](std::uint64_t) {
                              return std::vector<node_id>{0, 1};
                            })
                .value();
    narrow_ = pages_.allocate(8, 4, [](std::uint64_t) { return std::vector<node_id>{0}; }).value();
    theirs_ = pages_.allocate(8, 8, [](std::uint64_t) { return std::vector<node_id>{2}; }).value();
    memory_.grow();
  }

  absl::Status run(node_id source, const stream& s, exec_position at = {},
                   write_pass pass = write_pass::normal) {
    return memory_.execute(source, at, s.bytes(), sink_, pass);
  }

  nicfw::topology topo_;
  page_table pages_;
  copy_window window_;
  local_memory memory_;
  recording_sink sink_;
  std::uint64_t mine_ = 0, narrow_ = 0, theirs_ = 0;
};

using result = recording_sink::result;

TEST_F(LocalMemory, FreshVariablesReadZero) {
  ASSERT_TRUE(run(1, stream().read(mine_, 3, 4)).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{1, 4, 0, {0, 0, 0}}));
}

TEST_F(LocalMemory, ReadReturnsWhatWasWrittenToTheReader) {
  ASSERT_TRUE(run(1, stream().change(op_code::write, mine_ + 4, {60, 70, 80})).ok());
  ASSERT_TRUE(run(2, stream().read(mine_ + 3, 4, 9, 2)).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{2, 9, 2, {0, 60, 70, 80}}));
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_ + 5)->value, 70u);
}

TEST_F(LocalMemory, NarrowVariablesKeepTheLow32Bits) {
  ASSERT_TRUE(run(1, stream().change(op_code::write, narrow_, {0x1'0000'0002u}, 4)).ok());
  ASSERT_TRUE(run(1, stream().read(narrow_, 1, 0, 0, 4)).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{1, 0, 0, {2}}));
}

TEST_F(LocalMemory, ReadOfAScheduledVariableWaitsForItsAssign) {
  ASSERT_TRUE(run(1, stream().change(op_code::write, mine_, {5})).ok());
  ASSERT_TRUE(run(1, stream().sched(mine_, 1)).ok());
  ASSERT_TRUE(run(2, stream().read(mine_, 1, 3)).ok());
  EXPECT_THAT(sink_.results, IsEmpty());
  EXPECT_EQ(memory_.pending_reads(), 1u);
  ASSERT_TRUE(run(1, stream().change(op_code::assign, mine_, {42})).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{2, 3, 0, {42}}));
  EXPECT_EQ(memory_.pending_reads(), 0u);
  // Substantiated now: later reads return at once.
  ASSERT_TRUE(run(0, stream().read(mine_, 1, 4)).ok());
  EXPECT_EQ(sink_.results.back(), (result{0, 4, 0, {42}}));
}

TEST_F(LocalMemory, BlockReadReturnsSubstantiatedRunsAndWaitsForTheRest) {
  ASSERT_TRUE(run(1, stream().change(op_code::write, mine_, {1, 2, 3, 4, 5})).ok());
  ASSERT_TRUE(run(2, stream().sched(mine_ + 1, 1).sched(mine_ + 3, 1)).ok());
  ASSERT_TRUE(run(0, stream().read(mine_, 5, 6, 10)).ok());
  EXPECT_THAT(sink_.results,
              ElementsAre(result{0, 6, 10, {1}}, result{0, 6, 12, {3}}, result{0, 6, 14, {5}}));
  EXPECT_EQ(memory_.pending_reads(), 2u);
  sink_.results.clear();
  ASSERT_TRUE(run(2, stream().change(op_code::assign, mine_ + 1, {20, 30, 40})).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{0, 6, 11, {20}}, result{0, 6, 13, {40}}));
  EXPECT_EQ(memory_.pending_reads(), 0u);
}

TEST_F(LocalMemory, AssignCompletesTheReadsOfItsOwnVersionOnly) {
  ASSERT_TRUE(run(1, stream().sched(mine_, 1)).ok());
  ASSERT_TRUE(run(0, stream().read(mine_, 1, 1)).ok());  // waits for node 1's assign
  ASSERT_TRUE(run(2, stream().sched(mine_, 1)).ok());
  ASSERT_TRUE(run(0, stream().read(mine_, 1, 2)).ok());  // waits for node 2's assign
  EXPECT_EQ(memory_.pending_reads(), 2u);
  // Node 1's assign comes after node 2's sched: its read gets node 1's value, but the
  // variable stays unsubstantiated for node 2.
  ASSERT_TRUE(run(1, stream().change(op_code::assign, mine_, {11})).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{0, 1, 0, {11}}));
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_)->sched_by, 3u);
  ASSERT_TRUE(run(0, stream().read(mine_, 1, 3)).ok());
  EXPECT_EQ(memory_.pending_reads(), 2u);
  ASSERT_TRUE(run(2, stream().change(op_code::assign, mine_, {22})).ok());
  EXPECT_THAT(sink_.results,
              ElementsAre(result{0, 1, 0, {11}}, result{0, 2, 0, {22}}, result{0, 3, 0, {22}}));
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_)->value, 22u);
  EXPECT_EQ(memory_.pending_reads(), 0u);
}

TEST_F(LocalMemory, AssignWithoutASchedChangesNothing) {
  ASSERT_TRUE(run(1, stream().change(op_code::write, mine_, {7})).ok());
  ASSERT_TRUE(run(1, stream().change(op_code::assign, mine_, {8})).ok());
  ASSERT_TRUE(run(1, stream().read(mine_, 1, 0)).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{1, 0, 0, {7}}));
}

TEST_F(LocalMemory, WriteSubstantiatesButLeavesReadsWaitingForTheirAssign) {
  ASSERT_TRUE(run(1, stream().sched(mine_, 1)).ok());
  ASSERT_TRUE(run(0, stream().read(mine_, 1, 5)).ok());
  ASSERT_TRUE(run(2, stream().change(op_code::write, mine_, {9})).ok());
  ASSERT_TRUE(run(0, stream().read(mine_, 1, 6)).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{0, 6, 0, {9}}));
  EXPECT_EQ(memory_.pending_reads(), 1u);
  // Node 1's late assign still answers the read that saw its sched, without changing the
  // value the write stored.
  ASSERT_TRUE(run(1, stream().change(op_code::assign, mine_, {4})).ok());
  EXPECT_EQ(sink_.results.back(), (result{0, 5, 0, {4}}));
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_)->value, 9u);
}

TEST_F(LocalMemory, MessagesAndGroupOperationsGoToTheSink) {
  const std::vector<std::byte> hello{std::byte{'h'}, std::byte{'i'}};
  const std::vector<std::byte> nine(9, std::byte{7});
  ASSERT_TRUE(run(2, stream()
                         .message(op_code::message, 33, hello)
                         .message(op_code::queued, 0, nine)
                         .header({op_code::signal, 0, 0, 0, 5})
                         .header({op_code::barrier, 1, 0, 0, 6})
                         .raw(std::uint64_t{12}))
                  .ok());
  ASSERT_EQ(sink_.handlers.size(), 1u);
  EXPECT_EQ(sink_.handlers[0].source, 2u);
  EXPECT_EQ(sink_.handlers[0].address, 33u);
  EXPECT_EQ(sink_.handlers[0].payload, hello);
  ASSERT_EQ(sink_.groups.size(), 3u);
  EXPECT_EQ(sink_.groups[0].code, op_code::queued);
  EXPECT_EQ(sink_.groups[0].payload, nine);
  EXPECT_EQ(sink_.groups[1].code, op_code::signal);
  EXPECT_EQ(sink_.groups[1].address, 5u);
  EXPECT_EQ(sink_.groups[2].code, op_code::barrier);
  EXPECT_EQ(sink_.groups[2].address, 6u);
  EXPECT_EQ(sink_.groups[2].instance, 12u);
}

TEST_F(LocalMemory, HandlerErrorStopsTheStream) {
  sink_.handler_status = absl::AbortedError("handler 33 threw");
  EXPECT_EQ(run(2, stream().message(op_code::message, 33, {}).change(op_code::write, mine_, {1})),
            absl::AbortedError("handler 33 threw"));
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_)->value, 0u);
}

TEST_F(LocalMemory, TracingRecordsEveryVariableAtItsPosition) {
  sink_.trace = true;
  const exec_position at{.pulse = 8, .pid = 1, .rank = 3};
  ASSERT_TRUE(
      run(1, stream().change(op_code::write, mine_, {4, 5}, 8, 0).sched(mine_ + 1, 1, 1), at).ok());
  const exec_position later{.pulse = 9, .pid = 2, .rank = 0};
  ASSERT_TRUE(run(2, stream().read(mine_, 2, 0, 0, 8, 2), later).ok());
  const exec_position last{.pulse = 10, .pid = 1, .rank = 4};
  ASSERT_TRUE(run(1, stream().change(op_code::assign, mine_ + 1, {6}, 8, 0), last).ok());
  using op = recording_sink::executed_op;
  EXPECT_THAT(sink_.history,
              ElementsAre(op{8, 1, 3, 0, op_code::write, mine_, 4},
                          op{8, 1, 3, 0, op_code::write, mine_ + 1, 5},
                          op{8, 1, 3, 1, op_code::sched, mine_ + 1, 0},
                          op{9, 2, 0, 2, op_code::read, mine_, 4},
                          op{10, 1, 4, 0, op_code::assign, mine_ + 1, 6},
                          // The waiting read is recorded where it sat, with the value it got.
                          op{9, 2, 0, 2, op_code::read, mine_ + 1, 6}));
}

TEST_F(LocalMemory, NothingIsRecordedWhenNotTracing) {
  ASSERT_TRUE(run(1, stream().change(op_code::write, mine_, {4}).read(mine_, 1, 0)).ok());
  EXPECT_THAT(sink_.history, IsEmpty());
}

TEST_F(LocalMemory, ChangesOpenAChangeSectionAndReadsDoNot) {
  const window_memory memory(sizeof(window_header) + 4 * kPage * sizeof(shared_variable));
  copy_window window(memory.span(), kPage);
  local_memory local(pages_, window);
  local.grow();
  ASSERT_TRUE(local.execute(1, {}, stream().read(mine_, 2, 0).bytes(), sink_).ok());
  EXPECT_FALSE(window.changing());
  ASSERT_TRUE(
      local.execute(1, {}, stream().change(op_code::write, mine_ + 9, {77}).bytes(), sink_).ok());
  EXPECT_TRUE(window.changing());
  window.end_change();
  // The copy lives in the window, where same-host readers find it.
  EXPECT_EQ(window.page(1)[1].value, 77u);
}

TEST_F(LocalMemory, PagesBeyondTheWindowLiveOnTheHeap) {
  // Room for one page: node 0's first page is in the window, its second and the narrow
  // page are not.
  const window_memory memory(sizeof(window_header) + kPage * sizeof(shared_variable));
  copy_window window(memory.span(), kPage);
  local_memory local(pages_, window);
  local.grow();
  const std::vector<page_info>& pages = pages_.pages();
  EXPECT_EQ(local.copy_of(pages[0], mine_), window.page(0));
  const shared_variable* second = local.copy_of(pages[1], mine_ + 8);
  const auto* at = reinterpret_cast<const std::byte*>(second);
  EXPECT_TRUE(std::less<>()(at, memory.data()) ||
              !std::less<>()(at, memory.data() + memory.size()));
  ASSERT_TRUE(
      local.execute(1, {}, stream().change(op_code::write, mine_ + 8, {3, 4}).bytes(), sink_).ok());
  EXPECT_EQ(second[0].value, 3u);
  EXPECT_EQ(second[1].value, 4u);
  ASSERT_TRUE(local.execute(1, {}, stream().read(mine_ + 8, 2, 0).bytes(), sink_).ok());
  EXPECT_EQ(sink_.results.back(), (result{1, 0, 0, {3, 4}}));
}

TEST_F(LocalMemory, GrowMakesRoomForPagesAllocatedLater) {
  const std::uint64_t later =
      pages_.allocate(8, 8, [](std::uint64_t) { return std::vector<node_id>{0}; }).value();
  memory_.grow();
  ASSERT_TRUE(run(1, stream().change(op_code::write, later + 7, {99})).ok());
  ASSERT_TRUE(run(1, stream().read(later + 7, 1, 0)).ok());
  EXPECT_THAT(sink_.results, ElementsAre(result{1, 0, 0, {99}}));
}

// The malformed-stream cases: each is InvalidArgument and names the source.
void expect_malformed(const absl::Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), "malformed operation stream from node 2: " + what);
}

TEST_F(LocalMemory, TruncatedStreamsAreMalformed) {
  expect_malformed(memory_.execute(2, {}, stream().raw(std::uint32_t{1}).bytes(), sink_),
                   "truncated header");
  expect_malformed(memory_.execute(2, {}, stream().read(mine_, 1, 0).cut(1), sink_),
                   "truncated read");
  expect_malformed(
      memory_.execute(2, {}, stream().change(op_code::write, mine_, {1, 2}).cut(8), sink_),
      "truncated values");
  expect_malformed(
      memory_.execute(
          2, {}, stream().message(op_code::message, 0, std::vector<std::byte>(3)).cut(8), sink_),
      "truncated message");
  expect_malformed(
      memory_.execute(2, {}, stream().message(op_code::queued, 0, std::vector<std::byte>(9)).cut(1),
                      sink_),
      "truncated message");
  expect_malformed(
      memory_.execute(2, {},
                      stream().header({op_code::barrier, 0, 0, 0, 0}).raw(std::uint32_t{0}).bytes(),
                      sink_),
      "truncated barrier arrival");
  EXPECT_THAT(sink_.results, IsEmpty());
  EXPECT_THAT(sink_.groups, IsEmpty());
  EXPECT_THAT(sink_.handlers, IsEmpty());
}

TEST_F(LocalMemory, UnknownOperationIsMalformed) {
  expect_malformed(run(2, stream().header({static_cast<op_code>(99), 8, 0, 1, mine_})),
                   "unknown operation code");
}

TEST_F(LocalMemory, CountThatDoesNotFitOnePageIsMalformed) {
  expect_malformed(run(2, stream().header({op_code::sched, 8, 0, 0, mine_})),
                   "operation count does not fit one page");
  expect_malformed(run(2, stream().sched(mine_ + 7, 2)), "operation count does not fit one page");
  expect_malformed(run(2, stream().sched(mine_, kPage + 1)),
                   "operation count does not fit one page");
  // The largest count that fits: a whole page.
  EXPECT_TRUE(run(2, stream().sched(mine_ + 8, kPage)).ok());
}

TEST_F(LocalMemory, OperationOnAVariableWithoutACopyHereIsInvalidNamingTheSource) {
  EXPECT_EQ(run(2, stream().read(theirs_ + 1, 1, 0)),
            absl::InvalidArgumentError("node 2 sent an operation on address " +
                                       std::to_string(theirs_ + 1) +
                                       ", of which this node holds no copy"));
}

TEST_F(LocalMemory, OperationOfTheWrongWidthIsInvalidNamingTheSource) {
  EXPECT_EQ(run(1, stream().change(op_code::write, narrow_, {1}, 8)),
            absl::InvalidArgumentError("node 1 sent a 8-byte operation on address " +
                                       std::to_string(narrow_) + ", a 4-byte variable"));
  EXPECT_EQ(run(1, stream().read(mine_, 1, 0, 0, 4)).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LocalMemory, OperationOutsideMemoryIsInvalidNamingTheSource) {
  // Outside every page is a variable this node holds no copy of, sent by a broken peer.
  const std::uint64_t outside = theirs_ + 2 * kPage;
  const absl::Status s = run(2, stream().sched(outside, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("node 2 sent an operation on address " + std::to_string(outside)));
}

TEST_F(LocalMemory, OperationsBeforeAMalformedOneHaveRun) {
  // Streams execute in order; the error stops the rest, but what ran stays (the node fails).
  const absl::Status s = run(2, stream()
                                    .change(op_code::write, mine_, {5})
                                    .header({static_cast<op_code>(0), 8, 0, 1, mine_}));
  expect_malformed(s, "unknown operation code");
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_)->value, 5u);
}

// Relaxed mode's passes: a stream's plain writes early, alone; then everything at its
// logical time, the writes again but recorded only the first time.
TEST_F(LocalMemory, EarlyPassAppliesOnlyThePlainWrites) {
  sink_.trace = true;
  const std::vector<std::byte> payload(5, std::byte{7});
  stream s;
  s.read(mine_ + 2, 1, 3, 0, 8, 0)
      .change(op_code::write, mine_, {4, 5}, 8, 1)
      .message(op_code::message, 33, payload)
      .sched(mine_ + 3, 1, 3)
      .message(op_code::queued, 0, payload)
      .change(op_code::write, mine_ + 2, {9}, 8, 5);
  const exec_position at{.pulse = 8, .pid = 1, .rank = 3};
  ASSERT_TRUE(run(1, s, at, write_pass::early).ok());
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_)->value, 4u);
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_ + 2)->value, 9u);
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_ + 3)->sched_by, 0u);
  EXPECT_THAT(sink_.results, IsEmpty());
  EXPECT_THAT(sink_.handlers, IsEmpty());
  EXPECT_THAT(sink_.groups, IsEmpty());
  using op = recording_sink::executed_op;
  EXPECT_THAT(sink_.history, ElementsAre(op{8, 1, 3, 1, op_code::write, mine_, 4},
                                         op{8, 1, 3, 1, op_code::write, mine_ + 1, 5},
                                         op{8, 1, 3, 5, op_code::write, mine_ + 2, 9}));

  // At its logical time the rest runs, and the writes are applied once more, unrecorded.
  sink_.history.clear();
  ASSERT_TRUE(run(1, stream().change(op_code::write, mine_, {77})).ok());  // arrived later
  sink_.history.clear();
  ASSERT_TRUE(run(1, s, at, write_pass::again).ok());
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_)->value, 4u);
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_ + 3)->sched_by, 2u);
  EXPECT_THAT(sink_.results, ElementsAre(result{1, 3, 0, {9}}));
  EXPECT_EQ(sink_.handlers.size(), 1u);
  EXPECT_EQ(sink_.groups.size(), 1u);
  EXPECT_THAT(sink_.history, ElementsAre(op{8, 1, 3, 0, op_code::read, mine_ + 2, 9},
                                         op{8, 1, 3, 3, op_code::sched, mine_ + 3, 0}));
}

TEST_F(LocalMemory, EarlyPassFindsATruncatedOperation) {
  stream s;
  s.change(op_code::write, mine_, {4}).read(mine_, 1, 0);
  expect_malformed(memory_.execute(2, {}, s.cut(4), sink_, write_pass::early),
                   "truncated operation");
  // The write before it was applied, as in the pass at logical time.
  EXPECT_EQ(memory_.copy_of(pages_.pages()[0], mine_)->value, 4u);
}

}  // namespace
}  // namespace iso::runtime
