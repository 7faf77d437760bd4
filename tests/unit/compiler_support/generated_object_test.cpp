// The object API protoc-gen-iso generates (job_queue.proto): a user class filling in
// JobQueueBase, the runtime type make_object_type builds from it, and JobQueueProxy, through
// real nodes of inproc jobs under both placements. Results and final states match a one-node
// run, guarded calls resume once their guard holds, a single copy migrates (state saved and
// loaded by the generated marshaling), and a guard's or body's exception becomes the
// runtime's aborted error naming the object and the operation, with the state unchanged;
// the proxy's non-blocking calls may be outstanding many at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "iso/iso.hpp"
#include "job_queue.iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"

namespace {

namespace q = iso::test::queue::plain;
using iso::node_id;
using iso::object_placement;
using iso::test::run_inproc;

// The user's part: a FIFO of jobs that Get takes from, or reports done once closed.
class queue_impl final : public q::JobQueueBase {
 public:
  q::Count Put(q::Jobs& state, const q::Job& job) override {
    state.values.push_back(job.value);
    state.tags.push_back(job.tag);
    ++state.added;
    return {.n = static_cast<std::int64_t>(state.values.size())};
  }
  [[nodiscard]] bool Get_guard_has_job(const q::Jobs& state, const q::Empty&) const override {
    return !state.values.empty();
  }
  q::Taken Get_has_job(q::Jobs& state, const q::Empty&) override {
    q::Taken t{.value = state.values.front(), .done = false, .tag = state.tags.front()};
    state.values.erase(state.values.begin());
    state.tags.erase(state.tags.begin());
    ++state.taken;
    state.taken_sum += t.value;
    return t;
  }
  [[nodiscard]] bool Get_guard_closed(const q::Jobs& state, const q::Empty&) const override {
    return state.closed;
  }
  q::Taken Get_closed(q::Jobs&, const q::Empty&) override {
    return {.value = 0, .done = true, .tag = {}};
  }
  q::Empty Close(q::Jobs& state, const q::Empty&) override {
    state.closed = true;
    return {};
  }
  [[nodiscard]] bool AwaitAdded_guard_reached(const q::Jobs& state,
                                              const q::Count& arg) const override {
    return state.added >= arg.n;
  }
  q::Count AwaitAdded_reached(const q::Jobs& state, const q::Count&) override {
    return {.n = state.added};
  }
  q::Count Size(const q::Jobs& state, const q::Empty&) override {
    return {.n = static_cast<std::int64_t>(state.values.size())};
  }
  [[nodiscard]] bool Check_guard_picky(const q::Jobs&, const q::Count& arg) const override {
    if (arg.n < 0) throw std::runtime_error("negative n refused");
    return true;
  }
  q::Empty Check_picky(q::Jobs& state, const q::Count& arg) override {
    state.added += 1000;  // undone by the runtime when the body throws
    if (arg.n == 0) throw std::runtime_error("zero n fails half-way");
    state.added -= 1000;
    return {};
  }
};

q::Job job_of(node_id from, int i) {
  return {.value = static_cast<std::int64_t>(from) * 1000 + i,
          .tag = "job " + std::to_string(from) + "/" + std::to_string(i)};
}

struct run_result {
  std::vector<std::pair<std::int64_t, std::string>> taken;  // sorted
  std::vector<std::byte> final_state;
  bool done_after_close = false;
  std::int64_t awaited = 0;
};

// Nodes 1..n-1 (or the only node) each put kJobs jobs; node 0 takes all of them, waiting
// whenever the queue is empty, closes the queue and sees a Get report done; every node
// awaits the total added through the guarded read. With `migrate`, node 0 first moves the
// single copy to itself.
constexpr int kJobs = 20;

run_result run_queue(int nodes, object_placement placement, iso::order_kind order, bool migrate) {
  const iso::object_type type = q::make_object_type(std::make_shared<queue_impl>());
  const int producers = nodes == 1 ? 1 : nodes - 1;
  run_result out;
  std::mutex mu;
  const int status = run_inproc(nodes, iso::test::object_job_options(order), [&](iso::node& node) {
    q::JobQueueProxy jobs(iso::object(
        node, type, {.placement = placement, .owner = static_cast<node_id>(nodes - 1)}));
    EXPECT_EQ(jobs.object().type_name(), "iso.test.queue.JobQueue");
    if (migrate && node.id() == 0) jobs.object().migrate(0);
    if (nodes == 1 || node.id() != 0) {
      for (int i = 0; i < kJobs; ++i) EXPECT_GE(jobs.Put(job_of(node.id(), i)).n, 1);
    }
    if (node.id() == 0) {
      std::vector<std::pair<std::int64_t, std::string>> taken;
      for (int i = 0; i < producers * kJobs; ++i) {
        const q::Taken t = jobs.Get({});
        EXPECT_FALSE(t.done);
        taken.emplace_back(t.value, t.tag);
      }
      jobs.Close({});
      const bool done = jobs.Get({}).done;
      EXPECT_EQ(jobs.Size({}).n, 0);
      std::sort(taken.begin(), taken.end());
      std::lock_guard lock(mu);
      out.taken = std::move(taken);
      out.done_after_close = done;
    }
    const std::int64_t awaited = jobs.AwaitAdded({.n = producers * kJobs}).n;
    node.barrier();  // the queue is closed: every node's Get below reports done
    // A write returns once this replica applied it, so every write before it in the job-wide
    // order (all of them) is applied here too: the state is final on this node.
    EXPECT_TRUE(jobs.Get({}).done) << "node " << node.id();
    if (jobs.object().owner() == node.id()) {
      std::lock_guard lock(mu);
      const std::vector<std::byte> state = jobs.object().state_bytes();
      if (out.final_state.empty()) out.final_state = state;
      EXPECT_EQ(state, out.final_state) << "replicas differ on node " << node.id();
    }
    std::lock_guard lock(mu);
    out.awaited = awaited;
    EXPECT_EQ(awaited, producers * kJobs) << "node " << node.id();
  });
  EXPECT_EQ(status, 0);
  return out;
}

// Every case runs for a replicated object and a single copy, under both objects orders.
class GeneratedObjects : public iso::test::placement_order_test {};

INSTANTIATE_TEST_SUITE_P(PlacementsAndOrders, GeneratedObjects,
                         testing::Combine(testing::Values(object_placement::replicated,
                                                          object_placement::single_copy),
                                          iso::test::both_object_orders()),
                         iso::test::placement_order_name);

TEST_P(GeneratedObjects, TwoNodesGiveTheResultsAndStateOfOneNode) {
  // With two nodes node 1 is the only producer and node 0 the consumer; the reference
  // puts and takes the same jobs (node 1's) in a one-node job.
  const iso::object_type type = q::make_object_type(std::make_shared<queue_impl>());
  std::vector<std::byte> reference_state;
  std::vector<std::pair<std::int64_t, std::string>> reference_taken;
  ASSERT_EQ(run_inproc(1, opts(),
                       [&](iso::node& node) {
                         q::JobQueueProxy jobs(iso::object(node, type, {}));
                         for (int i = 0; i < kJobs; ++i) jobs.Put(job_of(1, i));
                         for (int i = 0; i < kJobs; ++i) {
                           const q::Taken t = jobs.Get({});
                           reference_taken.emplace_back(t.value, t.tag);
                         }
                         jobs.Close({});
                         EXPECT_TRUE(jobs.Get({}).done);
                         reference_state = jobs.object().state_bytes();
                       }),
            0);
  std::sort(reference_taken.begin(), reference_taken.end());

  const run_result two = run_queue(2, placement(), order(), false);
  EXPECT_EQ(two.taken, reference_taken);
  EXPECT_EQ(two.final_state, reference_state);
  EXPECT_TRUE(two.done_after_close);
}

TEST_P(GeneratedObjects, ThreeNodesTakeEveryJobOnceAndAwaitedCallsResume) {
  const run_result three = run_queue(3, placement(), order(), false);
  std::vector<std::pair<std::int64_t, std::string>> expected;
  for (node_id from = 1; from <= 2; ++from) {
    for (int i = 0; i < kJobs; ++i) {
      const q::Job j = job_of(from, i);
      expected.emplace_back(j.value, j.tag);
    }
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(three.taken, expected);
  EXPECT_TRUE(three.done_after_close);
  EXPECT_EQ(three.awaited, 2 * kJobs);

  q::Jobs final_state;
  ASSERT_TRUE(iso::unmarshal(three.final_state, final_state).ok());
  EXPECT_EQ(final_state.added, 2 * kJobs);
  EXPECT_EQ(final_state.taken, 2 * kJobs);
  EXPECT_TRUE(final_state.values.empty());
  EXPECT_TRUE(final_state.closed);
  std::int64_t sum = 0;
  for (const auto& [value, tag] : expected) sum += value;
  EXPECT_EQ(final_state.taken_sum, sum);
}

TEST(GeneratedObjectsMigration, ASingleCopyMovesWithItsStateAndGivesTheSameResults) {
  const run_result moved =
      run_queue(3, object_placement::single_copy, iso::order_kind::sequencer, true);
  const run_result stayed =
      run_queue(3, object_placement::single_copy, iso::order_kind::sequencer, false);
  EXPECT_EQ(moved.taken, stayed.taken);
  EXPECT_EQ(moved.final_state, stayed.final_state);
}

void expect_aborted(const std::string& fragment, const std::function<void()>& call) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one containing: " << fragment;
  } catch (const iso::error& e) {
    EXPECT_EQ(e.code(), iso::error_code::aborted) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// The proxy's non-blocking form: every node starts a guarded AwaitAddedAsync before its
// puts, then many PutAsync calls at once, and drops a SizeAsync; node 0 then takes every job
// with GetAsync calls all outstanding together. Each job is taken once, with its tag, and the
// awaited call resumes with the total.
TEST_P(GeneratedObjects, AsyncProxyCallsMayBeOutstandingTogether) {
  constexpr int kNodes = 3;
  const iso::object_type type = q::make_object_type(std::make_shared<queue_impl>());
  std::mutex mu;
  std::vector<std::pair<std::int64_t, std::string>> taken;
  std::vector<std::int64_t> awaited(kNodes, -1);
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    q::JobQueueProxy jobs(
        iso::object(node, type, {.placement = placement(), .owner = kNodes - 1, .initial = {}}));
    iso::pending<q::Count> all_added = jobs.AwaitAddedAsync({.n = kNodes * kJobs});
    std::vector<iso::pending<q::Count>> puts;
    puts.reserve(kJobs);
    for (int i = 0; i < kJobs; ++i) puts.push_back(jobs.PutAsync(job_of(node.id(), i)));
    (void)jobs.SizeAsync({});  // dropped: its result is discarded
    for (auto& p : puts) EXPECT_GE(p.get().n, 1);
    const std::int64_t total = all_added.get().n;
    node.barrier();
    if (node.id() == 0) {
      std::vector<iso::pending<q::Taken>> gets;
      gets.reserve(kNodes * kJobs);
      for (int i = 0; i < kNodes * kJobs; ++i) gets.push_back(jobs.GetAsync({}));
      std::vector<std::pair<std::int64_t, std::string>> got;
      got.reserve(gets.size());
      for (auto& g : gets) {
        const q::Taken t = g.get();
        EXPECT_FALSE(t.done);
        got.emplace_back(t.value, t.tag);
      }
      std::sort(got.begin(), got.end());
      std::lock_guard lock(mu);
      taken = std::move(got);
    }
    std::lock_guard lock(mu);
    awaited[node.id()] = total;
  });
  EXPECT_EQ(status, 0);
  for (std::int64_t a : awaited) EXPECT_EQ(a, kNodes * kJobs);
  std::vector<std::pair<std::int64_t, std::string>> want;
  for (int n = 0; n < kNodes; ++n) {
    for (int i = 0; i < kJobs; ++i) {
      const q::Job j = job_of(static_cast<node_id>(n), i);
      want.emplace_back(j.value, j.tag);
    }
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(taken, want);
}

TEST_P(GeneratedObjects, AGuardOrBodyExceptionIsAbortedNamingObjectAndOperation) {
  const iso::object_type type = q::make_object_type(std::make_shared<queue_impl>());
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    q::JobQueueProxy jobs(iso::object(node, type, {.placement = placement(), .owner = 1}));
    expect_aborted(
        "object 0 (iso.test.queue.JobQueue), operation 5 (Check): a guard threw: "
        "negative n refused",
        [&] { jobs.Check({.n = -1}); });
    expect_aborted(
        "object 0 (iso.test.queue.JobQueue), operation 5 (Check): the body threw: "
        "zero n fails half-way",
        [&] { jobs.Check({.n = 0}); });
    jobs.Check({.n = 1});  // a call that does not throw still runs
    node.barrier();
    // The failed body's change was undone on every replica.
    EXPECT_EQ(jobs.AwaitAdded({.n = 0}).n, 0);
  });
  EXPECT_EQ(status, 0);
}

// The proxy's isochron form (unguarded writes only): two queues' Puts and a shared counter
// in one isochron take one place in the order: the queues' lengths after them are the same,
// and one more than the counter before it, for every isochron of every node.
TEST(GeneratedObjectsInIsochrons, PutsOfTwoQueuesAndACounterTakeEffectTogether) {
  constexpr int kNodes = 3;
  constexpr int kEach = 15;
  const iso::object_type type = q::make_object_type(std::make_shared<queue_impl>());
  const int status = run_inproc(
      kNodes, iso::test::object_job_options(iso::order_kind::isotach), [&](iso::node& node) {
        q::JobQueueProxy first(iso::object(node, type, {}));
        q::JobQueueProxy second(iso::object(node, type, {}));
        const iso::shared_var<std::int64_t> count = node.allocate<std::int64_t>(1)[0];
        node.barrier();
        for (int i = 0; i < kEach; ++i) {
          iso::pending<q::Count> a;
          iso::pending<q::Count> b;
          iso::value<std::int64_t> before;
          {
            iso::isochron in(node);
            a = first.PutAsync(in, job_of(node.id(), i));
            b = second.PutAsync(in, job_of(node.id(), i));
            before = in.fetch_add(count, 1);
          }
          const std::int64_t c = before.get();
          EXPECT_EQ(a.get().n, c + 1) << "node " << node.id() << ", isochron " << i;
          EXPECT_EQ(b.get().n, c + 1) << "node " << node.id() << ", isochron " << i;
        }
        node.barrier();
        EXPECT_EQ(first.Size({}).n, kNodes * kEach);
        EXPECT_EQ(first.object().state_bytes(), second.object().state_bytes());
      });
  EXPECT_EQ(status, 0);
}

TEST(GeneratedObjectType, ANullImplementationIsInvalidArgument) {
  try {
    (void)q::make_object_type(nullptr);
    ADD_FAILURE() << "a type without an implementation was made";
  } catch (const iso::error& e) {
    EXPECT_EQ(e.code(), iso::error_code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("make_object_type(iso.test.queue.JobQueue): no "
                                         "implementation"),
              std::string::npos)
        << e.what();
  }
}

TEST(GeneratedObjectType, BadArgumentOrInitialBytesAreInvalidArgument) {
  const iso::object_type type = q::make_object_type(std::make_shared<queue_impl>());
  const iso::operation* put = type.find(0);
  ASSERT_NE(put, nullptr);
  EXPECT_EQ(put->name, "Put");
  EXPECT_EQ(put->kind, iso::operation_kind::write);
  EXPECT_EQ(type.find(3)->kind, iso::operation_kind::read);
  EXPECT_EQ(type.find(1)->alternatives.size(), 2u);
  const std::byte three[3] = {};
  try {
    (void)put->unmarshal(three);
    ADD_FAILURE() << "three bytes unmarshaled as a Job";
  } catch (const iso::error& e) {
    EXPECT_EQ(e.code(), iso::error_code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("iso.test.queue.JobQueue.Put argument: unmarshal:"),
              std::string::npos)
        << e.what();
  }
  try {
    type.state().create(three);
    ADD_FAILURE() << "three bytes made a state";
  } catch (const iso::error& e) {
    EXPECT_EQ(e.code(), iso::error_code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("iso.test.queue.JobQueue state: unmarshal:"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
