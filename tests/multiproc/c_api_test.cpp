// The classic C API (iso/iso.h) in a real job of two processes. Each process calls iso_init
// once, before the first test (with a shmem map that places a few pages), and iso_deinit once,
// after the last (a global environment); the tests in between run in the same order on both
// nodes, so their barriers pair up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "iso/iso.h"
#include "runtime/job.hpp"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kHello = 7;  // registered before iso_init
constexpr int kLate = 8;   // registered after it
constexpr std::uint64_t kMemoryEnd = std::uint64_t{ISO_MEM64_BASE} + ISO_MEM64_SIZE;

// The map every node reads: page 3 (32-bit addresses 1536..2047) only on node 1, pages 130
// and 131 (64-bit addresses 66560..67583) only on node 0, everything else on both.
constexpr const char* kMap =
    "# c_api_test\n"
    "3   1 1\n"
    "130 2 0   # two 64-bit pages\n";

struct received {
  int source;
  std::string text;
  std::size_t size;
  bool data_null;
};
std::vector<received> g_received;
int g_start_in_handler = -1;

void on_message(int source, void* data, int length) {
  const auto size = static_cast<std::size_t>(length);
  g_received.push_back(
      {source, size == 0 ? "" : static_cast<const char*>(data), size, data == nullptr});
  g_start_in_handler = iso_start();  // handlers may not issue isochrons
}

void on_other(int, void*, int) {}

// What the process saw before and during iso_init.
struct start_up {
  bool done = false;
  int node_id_before = 0;
  int start_before = 0;
  std::string start_before_message;
  int barrier_before = 0;
  iso_handler* handler_before = nullptr;
  int init = -1;
  std::string init_message;
};
start_up g_start;

class CApi : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (g_start.done) return;
    g_start.done = true;
    g_start.node_id_before = iso_node_id();
    g_start.start_before = iso_start();
    g_start.start_before_message = iso_last_error();
    g_start.barrier_before = iso_barrier();
    g_start.handler_before = iso_set_handler(kHello, on_message);

    // Every node writes the same map; the file is per process only so that they do not race.
    const std::string path =
        ::testing::TempDir() + "c_api_test_" + std::to_string(::getpid()) + ".map";
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(kMap, f);
    std::fclose(f);
    ::setenv("ISO_SHMEM_MAP", path.c_str(), 1);
    g_start.init = iso_try_init();
    g_start.init_message = iso_last_error();
    std::remove(path.c_str());
  }

  void SetUp() override { ASSERT_EQ(g_start.init, ISO_SUCCESS) << g_start.init_message; }
};

class deinit_environment : public testing::Environment {
 public:
  void TearDown() override {
    if (g_start.init != ISO_SUCCESS) return;
    EXPECT_EQ(iso_deinit(), ISO_SUCCESS) << iso_last_error();
    EXPECT_EQ(iso_node_id(), -1);
    EXPECT_EQ(iso_node_count(), -1);
    EXPECT_EQ(iso_try_init(), ISO_E_FAILED_PRECONDITION);
    EXPECT_THAT(iso_last_error(), HasSubstr("a process joins once"));
    EXPECT_EQ(iso_start(), ISO_E_FAILED_PRECONDITION);
    EXPECT_THAT(iso_last_error(), HasSubstr("left the job"));
  }
};
testing::Environment* const g_deinit = testing::AddGlobalTestEnvironment(new deinit_environment);

// Checks a failed call's code and message (read right after the call).
void expect_failure(int got, int code, const std::string& text) {
  EXPECT_EQ(got, code) << text;
  EXPECT_THAT(iso_last_error(), HasSubstr(text));
}

TEST_F(CApi, BeforeInit) {
  EXPECT_EQ(g_start.node_id_before, -1);
  EXPECT_EQ(g_start.start_before, ISO_E_FAILED_PRECONDITION);
  EXPECT_EQ(g_start.start_before_message, "iso_start: called before iso_init; call iso_init first");
  EXPECT_EQ(g_start.barrier_before, ISO_E_FAILED_PRECONDITION);
  EXPECT_EQ(g_start.handler_before, nullptr);  // nothing was set before
}

TEST_F(CApi, IdentityAndSecondInit) {
  EXPECT_EQ(NUMNODES, 2);
  EXPECT_GE(NODEID, 0);
  EXPECT_LT(NODEID, 2);
  expect_failure(iso_try_init(), ISO_E_FAILED_PRECONDITION, "iso_try_init: already initialised");
}

TEST_F(CApi, MapPlacesNamedPagesAndTheRestIsEverywhere) {
  const auto copyset = [](std::uint64_t address) {
    absl::StatusOr<std::vector<std::uint32_t>> c = iso::runtime::c_api_copyset(address);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : std::vector<std::uint32_t>{};
  };
  EXPECT_THAT(copyset(0), ElementsAre(0, 1));
  EXPECT_THAT(copyset(3 * 512 - 1), ElementsAre(0, 1));
  EXPECT_THAT(copyset(3 * 512), ElementsAre(1));
  EXPECT_THAT(copyset(3 * 512 + 511), ElementsAre(1));
  EXPECT_THAT(copyset(4 * 512), ElementsAre(0, 1));
  EXPECT_THAT(copyset(ISO_MEM32_SIZE - 1), ElementsAre(0, 1));
  EXPECT_THAT(copyset(ISO_MEM64_BASE), ElementsAre(0, 1));
  EXPECT_THAT(copyset(130 * 512), ElementsAre(0));
  EXPECT_THAT(copyset(132 * 512 - 1), ElementsAre(0));
  EXPECT_THAT(copyset(132 * 512), ElementsAre(0, 1));
  EXPECT_THAT(copyset(kMemoryEnd - 1), ElementsAre(0, 1));
  EXPECT_EQ(iso::runtime::c_api_copyset(kMemoryEnd).status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(CApi, WriteThenReadRoundTripsOnBothWidths) {
  const int me = NODEID;
  const int peer = 1 - me;
  const std::uint64_t big = std::uint64_t{1} << 40;
  ASSERT_EQ(iso_start(), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_write32(100 + me, 1000 + me), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_write64(ISO_MEM64_BASE + 100 + me, big + me), ISO_SUCCESS) << iso_last_error();
  if (me == 0) {
    // The edges of both regions, and pages the map put on one node.
    ASSERT_EQ(iso_write32(ISO_MEM32_SIZE - 1, 0xfffffffeu), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_write64(kMemoryEnd - 1, ~std::uint64_t{0}), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_write32(3 * 512 + 5, 35), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_write64(130 * 512 + 5, big + 1305), ISO_SUCCESS) << iso_last_error();
  }
  ASSERT_EQ(iso_end(), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();

  iso_var32 mine = ISO_VAR32_INIT, theirs = ISO_VAR32_INIT, top = ISO_VAR32_INIT,
            one_node = ISO_VAR32_INIT;
  iso_var64 mine64 = ISO_VAR64_INIT, theirs64 = ISO_VAR64_INIT, top64 = ISO_VAR64_INIT,
            one_node64 = ISO_VAR64_INIT;
  ASSERT_EQ(iso_start(), ISO_SUCCESS);
  ASSERT_EQ(iso_read32(100 + me, &mine), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_read32(100 + peer, &theirs), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_read32(ISO_MEM32_SIZE - 1, &top), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_read32(3 * 512 + 5, &one_node), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_read64(ISO_MEM64_BASE + 100 + me, &mine64), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_read64(ISO_MEM64_BASE + 100 + peer, &theirs64), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_read64(kMemoryEnd - 1, &top64), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_read64(130 * 512 + 5, &one_node64), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_end(), ISO_SUCCESS);

  EXPECT_EQ(read_iso_var32(&mine), 1000 + me);
  EXPECT_EQ(read_iso_var(&theirs), 1000 + peer);  // the classic name
  EXPECT_EQ(read_iso_var32(&top), -2);            // 0xfffffffe, signed as in the report
  EXPECT_EQ(read_iso_var32(&one_node), 35);
  std::uint64_t value = 0;
  EXPECT_EQ(iso_var_wait64(&mine64, &value), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(value, big + me);
  EXPECT_EQ(static_cast<std::uint64_t>(read_iso_var64(&theirs64)), big + peer);
  EXPECT_EQ(read_iso_var64(&top64), -1);  // ~0, signed
  EXPECT_EQ(static_cast<std::uint64_t>(read_iso_var64(&one_node64)), big + 1305);

  // A done handle keeps its value.
  EXPECT_EQ(iso_var_ready32(&mine), 1);
  EXPECT_EQ(read_iso_var32(&mine), 1000 + me);
  EXPECT_EQ(iso_var_release32(&mine), ISO_SUCCESS);
  expect_failure(iso_var_ready32(&mine), -ISO_E_INVALID_ARGUMENT, "holds no read");
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();
}

// The atomic read-modify-writes: a counter both nodes increment, each in isochrons of its
// own, takes every value once; swap and compare_swap return the old value; misuse is refused.
TEST_F(CApi, ReadModifyWritesAreAtomicEverywhere) {
  constexpr int kEach = 100;
  constexpr std::uint64_t kCounter = ISO_MEM64_BASE + 400;
  const int me = NODEID;
  std::vector<long long> taken;
  for (int k = 0; k < kEach; ++k) {
    iso_var64 old = ISO_VAR64_INIT;
    ASSERT_EQ(iso_start(), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_fetch_add64(kCounter, 1, &old), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_end(), ISO_SUCCESS) << iso_last_error();
    taken.push_back(read_iso_var64(&old));
  }
  EXPECT_TRUE(std::is_sorted(taken.begin(), taken.end()));
  EXPECT_EQ(std::adjacent_find(taken.begin(), taken.end()), taken.end());
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();

  iso_var64 total = ISO_VAR64_INIT;
  iso_var32 a = ISO_VAR32_INIT, b = ISO_VAR32_INIT, c = ISO_VAR32_INIT;
  const std::uint64_t mine = 410 + me;  // a 32-bit variable of this node's own
  ASSERT_EQ(iso_start(), ISO_SUCCESS);
  ASSERT_EQ(iso_read64(kCounter, &total), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_write32(mine, -1), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_fetch_add32(mine, 2, &a), ISO_SUCCESS) << iso_last_error();        // wraps to 1
  ASSERT_EQ(iso_compare_swap32(mine, 5, 9, &b), ISO_SUCCESS) << iso_last_error();  // fails
  ASSERT_EQ(iso_swap32(mine, 7, &c), ISO_SUCCESS) << iso_last_error();
  ASSERT_EQ(iso_end(), ISO_SUCCESS);
  EXPECT_EQ(read_iso_var64(&total), 2 * kEach);
  EXPECT_EQ(read_iso_var32(&a), -1);
  EXPECT_EQ(read_iso_var32(&b), 1);
  EXPECT_EQ(read_iso_var32(&c), 1);

  iso_var64 w = ISO_VAR64_INIT;
  expect_failure(iso_fetch_add64(kCounter, 1, &w), ISO_E_FAILED_PRECONDITION,
                 "iso_fetch_add64: called outside an isochron");
  ASSERT_EQ(iso_start(), ISO_SUCCESS);
  expect_failure(iso_fetch_add64(kCounter, 1, nullptr), ISO_E_INVALID_ARGUMENT, "NULL");
  expect_failure(iso_swap32(kCounter, 1, &a), ISO_E_INVALID_ARGUMENT, "64-bit");
  expect_failure(iso_compare_swap64(kMemoryEnd, 0, 1, &w), ISO_E_OUT_OF_RANGE, "");
  ASSERT_EQ(iso_end(), ISO_SUCCESS);
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();
}

TEST_F(CApi, ReadAfterSchedWaitsForTheAssign) {
  constexpr std::uint32_t kX = 200;
  constexpr std::uint32_t kFlag = 201;
  constexpr std::uint64_t kY = ISO_MEM64_BASE + 200;
  if (NODEID == 0) {
    ASSERT_EQ(iso_start(), ISO_SUCCESS);
    ASSERT_EQ(iso_write32(kX, 5), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_sched(kX), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_write64(kY, 6), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_sched64(kY), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_end(), ISO_SUCCESS);
  }
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();  // the scheds have executed
  if (NODEID == 0) {
    // Assign only once node 1 has seen its reads wait.
    for (;;) {
      iso_var32 flag = ISO_VAR32_INIT;
      ASSERT_EQ(iso_start(), ISO_SUCCESS);
      ASSERT_EQ(iso_read32(kFlag, &flag), ISO_SUCCESS);
      ASSERT_EQ(iso_end(), ISO_SUCCESS);
      if (read_iso_var32(&flag) == 1) break;
      ASSERT_EQ(iso_poll(), ISO_SUCCESS);
    }
    ASSERT_EQ(iso_start(), ISO_SUCCESS);
    ASSERT_EQ(iso_assign(kX, 7), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_assign64(kY, std::uint64_t{1} << 50), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_end(), ISO_SUCCESS);
  } else {
    iso_var32 x = ISO_VAR32_INIT;
    iso_var64 y = ISO_VAR64_INIT;
    ASSERT_EQ(iso_start(), ISO_SUCCESS);
    ASSERT_EQ(iso_read32(kX, &x), ISO_SUCCESS);
    ASSERT_EQ(iso_read64(kY, &y), ISO_SUCCESS);
    ASSERT_EQ(iso_end(), ISO_SUCCESS);
    for (int i = 0; i < 200; ++i) {
      ASSERT_EQ(iso_var_ready32(&x), 0);
      ASSERT_EQ(iso_var_ready64(&y), 0);
      ASSERT_EQ(iso_poll(), ISO_SUCCESS);
    }
    ASSERT_EQ(iso_start(), ISO_SUCCESS);
    ASSERT_EQ(iso_write32(kFlag, 1), ISO_SUCCESS);
    ASSERT_EQ(iso_end(), ISO_SUCCESS);
    EXPECT_EQ(read_iso_var32(&x), 7u);  // the assign's value, not the 5 written before
    EXPECT_EQ(read_iso_var64(&y), std::uint64_t{1} << 50);
  }
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();
}

TEST_F(CApi, EveryMisuseHasItsCodeAndMessage) {
  const std::uint32_t var = 300 + static_cast<std::uint32_t>(NODEID);  // this node's own
  iso_var32 v = ISO_VAR32_INIT;
  iso_var64 w = ISO_VAR64_INIT;
  const std::string outside = "outside an isochron; call iso_start first";
  const int fp = ISO_E_FAILED_PRECONDITION;
  expect_failure(iso_read32(1, &v), fp, "iso_read32: called " + outside);
  expect_failure(iso_read64(ISO_MEM64_BASE, &w), fp, "iso_read64: called " + outside);
  expect_failure(iso_write32(1, 1), fp, "iso_write32: called " + outside);
  expect_failure(iso_write64(ISO_MEM64_BASE, 1), fp, "iso_write64: called " + outside);
  expect_failure(iso_sched(1), fp, "iso_sched: called " + outside);
  expect_failure(iso_sched64(ISO_MEM64_BASE), fp, "iso_sched64: called " + outside);
  expect_failure(iso_assign32(1, 1), fp, "iso_assign32: called " + outside);
  expect_failure(iso_assign64(ISO_MEM64_BASE, 1), fp, "iso_assign64: called " + outside);
  expect_failure(iso_send_msg(0, kHello, "x", 1), fp, "iso_send_msg: called " + outside);
  expect_failure(iso_end(), fp, "iso_end: no isochron is open; call iso_start first");

  ASSERT_EQ(iso_start(), ISO_SUCCESS) << iso_last_error();
  expect_failure(iso_start(), fp, "iso_start: an isochron is already open");
  expect_failure(iso_assign32(var, 1), fp, "iso_assign32: assign to address");
  EXPECT_THAT(iso_last_error(), HasSubstr("without a sched"));
  expect_failure(iso_assign64(ISO_MEM64_BASE + var, 1), fp, "without a sched");
  ASSERT_EQ(iso_sched(var), ISO_SUCCESS) << iso_last_error();
  expect_failure(iso_sched(var), fp, "iso_sched: node");
  EXPECT_THAT(iso_last_error(), HasSubstr("already has an outstanding sched"));
  // The wrong width is reported as such, also where a sched is outstanding (it was
  // failed_precondition there).
  expect_failure(iso_sched64(var), ISO_E_INVALID_ARGUMENT, "holds 32-bit variables, not 64-bit");

  const int oor = ISO_E_OUT_OF_RANGE;
  expect_failure(iso_write32(ISO_MEM64_BASE + ISO_MEM64_SIZE, 1), oor,
                 "iso_write32: address 131072 is outside isotach memory (32-bit variables at "
                 "0..65535, 64-bit at 65536..131071)");
  expect_failure(iso_read64(UINT64_MAX, &w), oor, "iso_read64: address 18446744073709551615");
  expect_failure(iso_sched64(kMemoryEnd), oor, "outside isotach memory");
  expect_failure(iso_read32(UINT32_MAX, &v), oor, "outside isotach memory");

  const int ia = ISO_E_INVALID_ARGUMENT;
  expect_failure(iso_read32(ISO_MEM64_BASE, &v), ia,
                 "iso_read32: address 65536 holds 64-bit variables, not 32-bit");
  expect_failure(iso_write64(5, 1), ia, "iso_write64: address 5 holds 32-bit variables, not 64");
  expect_failure(iso_sched(ISO_MEM64_BASE + 2), ia, "holds 64-bit variables");
  expect_failure(iso_read32(1, nullptr), ia, "iso_read32: the read handle is NULL");

  expect_failure(iso_send_msg(0, 999, "x", 1), ISO_E_NOT_FOUND,
                 "iso_send_msg: no handler is registered under id 999");
  expect_failure(iso_send_msg(2, kHello, "x", 1), ia, "message to node 2: the job has nodes 0..1");
  expect_failure(iso_send_msg(-1, kHello, "x", 1), ia, "message to node -1");
  expect_failure(iso_send_msg(0, -3, "x", 1), ia, "handler id -3 is outside 0..1023");
  expect_failure(iso_send_msg(0, kHello, nullptr, 4), ia, "NULL but the size is 4");

  // A read's value cannot arrive while its isochron is open.
  ASSERT_EQ(iso_read32(1, &v), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(iso_var_ready32(&v), 0);
  std::uint32_t early = 0;
  expect_failure(iso_var_wait32(&v, &early), fp,
                 "iso_var_wait32: the read's isochron is still open");
  expect_failure(iso_barrier(), fp, "iso_barrier: called inside an isochron; call iso_end first");
  expect_failure(iso_deinit(), fp, "iso_deinit: an isochron is open; call iso_end first");
  // The failures added nothing and left the isochron open: it issues fine.
  ASSERT_EQ(iso_end(), ISO_SUCCESS) << iso_last_error();
  std::uint32_t value = 99;
  EXPECT_EQ(iso_var_wait32(&v, &value), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(value, 0u);

  ASSERT_EQ(iso_start(), ISO_SUCCESS);
  ASSERT_EQ(iso_assign32(var, 3), ISO_SUCCESS) << iso_last_error();  // the sched above
  ASSERT_EQ(iso_end(), ISO_SUCCESS);
  iso_var32 check = ISO_VAR32_INIT;
  ASSERT_EQ(iso_start(), ISO_SUCCESS);
  ASSERT_EQ(iso_read32(var, &check), ISO_SUCCESS);
  ASSERT_EQ(iso_end(), ISO_SUCCESS);
  EXPECT_EQ(read_iso_var32(&check), 3);

  // Handles.
  iso_var32 empty = ISO_VAR32_INIT;
  std::uint32_t out = 0;
  expect_failure(iso_var_wait32(&empty, &out), ia, "iso_var_wait32: the handle holds no read");
  expect_failure(iso_var_ready32(&empty), -ia, "iso_var_ready32: the handle holds no read");
  EXPECT_EQ(iso_var_release32(&empty), ISO_SUCCESS);
  iso_var32 garbage;
  std::memset(&garbage, 0xab, sizeof(garbage));
  expect_failure(iso_var_wait32(&garbage, &out), ia, "not a read handle (uninitialised?)");
  expect_failure(iso_var_release32(&garbage), ia, "not a read handle");
  expect_failure(iso_var_wait32(nullptr, &out), ia, "the read handle is NULL");
  expect_failure(iso_var_wait32(&check, nullptr), ia, "the value pointer is NULL");

  iso_var64 a = ISO_VAR64_INIT;
  ASSERT_EQ(iso_start(), ISO_SUCCESS);
  ASSERT_EQ(iso_read64(ISO_MEM64_BASE + 7, &a), ISO_SUCCESS);
  ASSERT_EQ(iso_end(), ISO_SUCCESS);
  iso_var64 copy = a;
  EXPECT_EQ(read_iso_var64(&a), 0) << iso_last_error();
  std::uint64_t out64 = 0;
  expect_failure(iso_var_wait64(&copy, &out64), ia, "iso_var_wait64: stale read handle");
  EXPECT_EQ(iso_var_release64(&copy), ISO_SUCCESS);
  // A released read is gone; reusing the handle for a new read is fine.
  ASSERT_EQ(iso_start(), ISO_SUCCESS);
  ASSERT_EQ(iso_read64(ISO_MEM64_BASE + 7, &a), ISO_SUCCESS);
  ASSERT_EQ(iso_read64(ISO_MEM64_BASE + 8, &a), ISO_SUCCESS);  // drops the first read
  ASSERT_EQ(iso_end(), ISO_SUCCESS);
  EXPECT_EQ(iso_var_release64(&a), ISO_SUCCESS);
  expect_failure(iso_var_ready64(&a), -ia, "holds no read");

  EXPECT_EQ(iso_set_handler(-1, on_message), nullptr);
  EXPECT_THAT(iso_last_error(), HasSubstr("iso_set_handler: handler id -1 is outside 0..1023"));
  EXPECT_EQ(iso_set_handler(MAX_ISO_HANDLERS, on_message), nullptr);
  EXPECT_THAT(iso_last_error(), HasSubstr("handler id 1024 is outside"));
  // Set, replace and clear: each call returns the function set before.
  EXPECT_EQ(iso_set_handler(5, on_message), nullptr);
  EXPECT_EQ(iso_set_handler(5, on_other), on_message);
  EXPECT_EQ(iso_set_handler(5, nullptr), on_other);
  EXPECT_EQ(iso_set_handler(5, nullptr), nullptr);
}

TEST_F(CApi, IsochronousMessagesReachTheirHandlers) {
  const int me = NODEID;
  const int peer = 1 - me;
  // Cleared before a barrier: a peer's message may run here inside any iso_* call once the
  // peer has passed the barrier, the barrier's own tail included.
  g_received.clear();
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();
  const std::string to_peer = "hello from " + std::to_string(me);
  const std::string to_self = "note to self " + std::to_string(me);
  ASSERT_EQ(iso_start(), ISO_SUCCESS);
  ASSERT_EQ(iso_send_msg(peer, kHello, to_peer.c_str(), to_peer.size() + 1), ISO_SUCCESS)
      << iso_last_error();
  ASSERT_EQ(iso_send_msg(me, kHello, to_self.c_str(), to_self.size() + 1), ISO_SUCCESS)
      << iso_last_error();
  ASSERT_EQ(iso_end(), ISO_SUCCESS);
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();  // both have executed everywhere
  ASSERT_EQ(g_received.size(), 2u);
  std::vector<std::pair<int, std::string>> got;
  got.reserve(g_received.size());
  for (const received& r : g_received) got.emplace_back(r.source, r.text);
  std::sort(got.begin(), got.end());
  const std::pair<int, std::string> from_peer{peer, "hello from " + std::to_string(peer)};
  const std::pair<int, std::string> from_me{me, to_self};
  if (me == 0) {
    EXPECT_THAT(got, ElementsAre(from_me, from_peer));
  } else {
    EXPECT_THAT(got, ElementsAre(from_peer, from_me));
  }
  EXPECT_EQ(g_start_in_handler, ISO_E_FAILED_PRECONDITION);

  // A handler registered now is in place on every node after a barrier.
  ASSERT_EQ(iso_set_handler(kLate, on_message), nullptr) << iso_last_error();
  g_received.clear();
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS);
  if (me == 0) {
    ASSERT_EQ(iso_start(), ISO_SUCCESS);
    ASSERT_EQ(iso_send_msg(1, kLate, nullptr, 0), ISO_SUCCESS) << iso_last_error();
    ASSERT_EQ(iso_end(), ISO_SUCCESS);
  }
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS);
  if (me == 1) {
    ASSERT_EQ(g_received.size(), 1u);
    EXPECT_EQ(g_received[0].source, 0);
    EXPECT_EQ(g_received[0].size, 0u);
    EXPECT_TRUE(g_received[0].data_null);
  } else {
    EXPECT_TRUE(g_received.empty());
  }
}

// NIC counters: each node takes numbers from a counter on node 1, each value once (each
// node's in increasing order, and the total at the end); bad input is refused by code.
TEST_F(CApi, NicCountersHandOutEveryValueOnce) {
  iso_counter c;
  ASSERT_EQ(iso_counter_alloc(1, &c), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(c.holder, 1u);
  std::vector<std::uint64_t> mine;
  for (int i = 0; i < 200; ++i) {
    std::uint64_t before = 0;
    ASSERT_EQ(iso_counter_fetch_add(c, 1, &before), ISO_SUCCESS) << iso_last_error();
    mine.push_back(before);
  }
  EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
  EXPECT_EQ(std::adjacent_find(mine.begin(), mine.end()), mine.end());
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS);
  std::uint64_t total = 0;
  ASSERT_EQ(iso_counter_fetch_add(c, 0, &total), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(total, 400u);

  expect_failure(iso_counter_alloc(1, nullptr), ISO_E_INVALID_ARGUMENT, "out is NULL");
  expect_failure(iso_counter_alloc(2, &c), ISO_E_INVALID_ARGUMENT, "nodes 0..1");
  expect_failure(iso_counter_fetch_add(c, 1, nullptr), ISO_E_INVALID_ARGUMENT, "before is NULL");
  std::uint64_t before = 0;
  const iso_counter forged{.holder = 1, .index = 99};
  expect_failure(iso_counter_fetch_add(forged, 1, &before), ISO_E_INVALID_ARGUMENT,
                 "no such counter");
  ASSERT_EQ(iso_barrier(), ISO_SUCCESS);
}

}  // namespace
