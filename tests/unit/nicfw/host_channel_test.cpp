// The queues between a host and its NIC, driven from both ends in one thread (and one case
// with the NIC on another thread):
//  - the send queue is a FIFO of submissions of every kind (isochrons with their parts,
//    direct packets, service kinds), each seen until it is finished;
//  - a full queue refuses a record (false) and loses nothing;
//  - deliveries reach the host in order, every field intact;
//  - a record the host holds keeps its bytes until released while later ones are handled,
//    and its space is not reused until then;
//  - a delivery the NIC holds is invisible until published, and closing it turns iso_data
//    into closing_data with the EOP's count;
//  - max_record() bounds both queues;
//  - the queues are in place when the channel is built: a first pass over both, at the
//    engine's size, takes no page fault (lazily touched, it took one per 4 KiB page).
#include "nicfw/host_channel.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "tests/support/sanitizers.hpp"

namespace iso::nicfw {
namespace {

using ::testing::ElementsAre;

byte_span bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }
std::string text_of(byte_span b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

// What the host saw of a delivery, copied out of the queue during the upcall.
struct seen {
  delivery_kind kind;
  node_id source;
  std::uint32_t sequence;
  std::uint32_t count;
  std::uint64_t stamp;
  std::string payload;
  bool operator==(const seen&) const = default;
};
std::ostream& operator<<(std::ostream& os, const seen& s) {
  return os << "{kind " << static_cast<int>(s.kind) << " source " << s.source << " sequence "
            << s.sequence << " count " << s.count << " stamp " << s.stamp << " payload '"
            << s.payload << "'}";
}

std::vector<seen> poll_all(host_channel& ch) {
  std::vector<seen> out;
  const std::size_t n = ch.host_poll([&](const delivery& d) {
    out.push_back({d.kind, d.source, d.sequence, d.count, d.stamp, text_of(d.payload)});
  });
  EXPECT_EQ(n, out.size());
  return out;
}

// A direct submission whose payload is `id` written out, padded to `size` bytes.
std::string numbered(int id, std::size_t size) {
  std::string s = std::to_string(id);
  s.resize(size, '.');
  return s;
}

long thread_minor_faults() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

TEST(HostChannel, FirstPassOverTheQueuesTakesNoPageFault) {
  if (iso::test::kSanitized) GTEST_SKIP() << "a sanitizer's shadow memory takes faults of its own";
  constexpr std::size_t kQueueBytes = std::size_t{1} << 23;  // the engine's default
  host_channel ch(kQueueBytes);
  const std::string payload(1000, 'x');
  const byte_span piece[] = {bytes_of(payload)};
  submission s;
  std::size_t delivered = 0;
  auto one_each_way = [&] {
    ASSERT_TRUE(ch.host_submit(submission_kind::direct, 1, piece));
    ASSERT_TRUE(ch.nic_peek_submission(s));
    ch.nic_finish_submission(s);
    ASSERT_TRUE(
        ch.nic_deliver({.kind = delivery_kind::direct, .source = 1, .payload = bytes_of(payload)}));
    delivered += ch.host_poll([](const delivery&) {});
  };
  one_each_way();  // the submission's parts vector allocates once
  const long before = thread_minor_faults();
  // Twice round each queue: every page of both is written at least once.
  const std::size_t records = 2 * kQueueBytes / payload.size();
  for (std::size_t i = 0; i < records; ++i) one_each_way();
  const long faults = thread_minor_faults() - before;
  EXPECT_EQ(delivered, records + 1);
  EXPECT_LT(faults, 64) << "two lazily touched 8 MiB queues take 4096";
}

TEST(HostChannel, SubmissionsOfEveryKindComeOutInOrder) {
  host_channel ch(4096);
  EXPECT_FALSE(ch.nic_has_submissions());
  const std::string abc = "abc", empty, eight = "12345678";
  const isochron_part parts[] = {{1, bytes_of(abc)}, {2, bytes_of(empty)}, {3, bytes_of(eight)}};
  ASSERT_TRUE(ch.host_submit_isochron(7, 3, parts));
  const std::string hel = "hel", lo = "lo";
  const byte_span pieces[] = {bytes_of(hel), bytes_of(lo)};
  ASSERT_TRUE(ch.host_submit(submission_kind::direct, 2, pieces));
  const std::string svc = "service";
  const auto service_kind = static_cast<submission_kind>(kFirstServiceSubmission + 1);
  const byte_span svc_piece[] = {bytes_of(svc)};
  ASSERT_TRUE(ch.host_submit(service_kind, 1, svc_piece));
  ASSERT_TRUE(ch.host_submit_isochron(8, 0, {}));
  EXPECT_TRUE(ch.nic_has_submissions());

  submission s;
  ASSERT_TRUE(ch.nic_peek_submission(s));
  EXPECT_EQ(s.kind, submission_kind::isochron);
  EXPECT_EQ(s.sequence, 7u);
  EXPECT_EQ(s.delta, 3u);
  ASSERT_EQ(s.parts.size(), 3u);
  EXPECT_EQ(s.parts[0].destination, 1u);
  EXPECT_EQ(text_of(s.parts[0].operations), "abc");
  EXPECT_EQ(s.parts[1].destination, 2u);
  EXPECT_EQ(text_of(s.parts[1].operations), "");
  EXPECT_EQ(s.parts[2].destination, 3u);
  EXPECT_EQ(text_of(s.parts[2].operations), "12345678");
  // Until finished, the same submission is seen again.
  submission again;
  ASSERT_TRUE(ch.nic_peek_submission(again));
  EXPECT_EQ(again.sequence, 7u);
  EXPECT_EQ(again.end, s.end);
  ch.nic_finish_submission(s);

  ASSERT_TRUE(ch.nic_peek_submission(s));
  EXPECT_EQ(s.kind, submission_kind::direct);
  ASSERT_EQ(s.parts.size(), 1u);
  EXPECT_EQ(s.parts[0].destination, 2u);
  EXPECT_EQ(text_of(s.parts[0].operations), "hello");
  ch.nic_finish_submission(s);

  ASSERT_TRUE(ch.nic_peek_submission(s));
  EXPECT_EQ(s.kind, service_kind);
  ASSERT_EQ(s.parts.size(), 1u);
  EXPECT_EQ(s.parts[0].destination, 1u);
  EXPECT_EQ(text_of(s.parts[0].operations), "service");
  ch.nic_finish_submission(s);

  ASSERT_TRUE(ch.nic_peek_submission(s));
  EXPECT_EQ(s.kind, submission_kind::isochron);
  EXPECT_EQ(s.sequence, 8u);
  EXPECT_TRUE(s.parts.empty());
  ch.nic_finish_submission(s);
  EXPECT_FALSE(ch.nic_peek_submission(s));
  EXPECT_FALSE(ch.nic_has_submissions());
}

TEST(HostChannel, FullSendQueueRefusesAndLosesNothing) {
  host_channel ch(1024);
  int next = 0;
  auto submit = [&] {
    const std::string payload = numbered(next, 100);
    const byte_span piece[] = {bytes_of(payload)};
    const bool taken = ch.host_submit(submission_kind::direct, 1, piece);
    if (taken) ++next;
    return taken;
  };
  while (submit()) ASSERT_LT(next, 100) << "a 1 KiB queue never filled";
  ASSERT_GT(next, 1);
  const int first_batch = next;
  EXPECT_FALSE(submit());  // still full
  std::vector<std::string> got;
  auto take_one = [&] {
    submission s;
    if (!ch.nic_peek_submission(s)) return false;
    got.push_back(text_of(s.parts[0].operations));
    ch.nic_finish_submission(s);
    return true;
  };
  ASSERT_TRUE(take_one());
  EXPECT_TRUE(submit());  // finished space is reused
  while (take_one()) {
  }
  ASSERT_EQ(got.size(), static_cast<std::size_t>(first_batch + 1));
  for (int i = 0; i <= first_batch; ++i) EXPECT_EQ(got[i], numbered(i, 100));
}

TEST(HostChannel, DeliveriesComeOutInOrderWithEveryField) {
  host_channel ch(4096);
  EXPECT_FALSE(ch.host_has_deliveries());
  const std::string data = "data", dm = "dm", svc = "x";
  const auto service_kind = static_cast<delivery_kind>(kFirstServiceDelivery);
  ASSERT_TRUE(ch.nic_deliver({.kind = delivery_kind::iso_data,
                              .source = 2,
                              .sequence = 5,
                              .stamp = 9,
                              .payload = bytes_of(data)}));
  ASSERT_TRUE(
      ch.nic_deliver({.kind = delivery_kind::direct, .source = 1, .payload = bytes_of(dm)}));
  ASSERT_TRUE(
      ch.nic_deliver({.kind = delivery_kind::marker, .sequence = 3, .count = 2, .stamp = 9}));
  ASSERT_TRUE(ch.nic_deliver({.kind = delivery_kind::eop, .count = 3, .stamp = 9}));
  ASSERT_TRUE(ch.nic_deliver({.kind = service_kind, .source = 1, .payload = bytes_of(svc)}));
  EXPECT_TRUE(ch.host_has_deliveries());
  EXPECT_THAT(poll_all(ch), ElementsAre(seen{delivery_kind::iso_data, 2, 5, 0, 9, "data"},
                                        seen{delivery_kind::direct, 1, 0, 0, 0, "dm"},
                                        seen{delivery_kind::marker, 0, 3, 2, 9, ""},
                                        seen{delivery_kind::eop, 0, 0, 3, 9, ""},
                                        seen{service_kind, 1, 0, 0, 0, "x"}));
  EXPECT_FALSE(ch.host_has_deliveries());
  EXPECT_EQ(ch.host_poll([](const delivery&) { ADD_FAILURE() << "delivered twice"; }), 0u);
}

TEST(HostChannel, FullReceiveQueueRefusesAndLosesNothing) {
  host_channel ch(1024);
  int delivered = 0;
  std::vector<std::string> payloads;
  auto deliver = [&] {
    payloads.push_back(numbered(delivered, 100));
    const bool taken = ch.nic_deliver(
        {.kind = delivery_kind::direct, .source = 1, .payload = bytes_of(payloads.back())});
    if (taken) ++delivered;
    return taken;
  };
  while (deliver()) ASSERT_LT(delivered, 100) << "a 1 KiB queue never filled";
  ASSERT_GT(delivered, 1);
  std::vector<seen> got = poll_all(ch);
  ASSERT_TRUE(deliver());  // room again once the host has polled
  for (const seen& s : poll_all(ch)) got.push_back(s);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(delivered));
  for (int i = 0; i < delivered; ++i) EXPECT_EQ(got[i].payload, numbered(i, 100));
}

TEST(HostChannel, HeldRecordKeepsItsBytesUntilReleased) {
  host_channel ch(1024);
  const std::string a(100, 'A'), b(100, 'B'), z(100, 'Z');
  ASSERT_TRUE(ch.nic_deliver({.kind = delivery_kind::direct, .payload = bytes_of(a)}));
  ASSERT_TRUE(ch.nic_deliver({.kind = delivery_kind::direct, .payload = bytes_of(b)}));
  byte_span kept;
  std::uint64_t record = 0;
  std::vector<std::string> handled;
  ch.host_poll([&](const delivery& d) {
    handled.push_back(text_of(d.payload).substr(0, 1));
    if (d.payload[0] == std::byte{'A'}) {
      ch.host_hold();
      kept = d.payload;
      record = d.record;
    }
  });
  EXPECT_THAT(handled, ElementsAre("A", "B"));  // the one behind the held one is handled
  EXPECT_TRUE(ch.host_holds_records());
  // The NIC fills the queue and the host handles all of it, but none of that space comes
  // back while the record ahead of it is held.
  int filled = 0;
  while (ch.nic_deliver({.kind = delivery_kind::direct, .payload = bytes_of(z)})) {
    ASSERT_LT(++filled, 100) << "a 1 KiB queue never filled";
  }
  EXPECT_EQ(poll_all(ch).size(), static_cast<std::size_t>(filled));
  EXPECT_FALSE(ch.nic_deliver({.kind = delivery_kind::direct, .payload = bytes_of(z)}));
  EXPECT_EQ(text_of(kept), a);
  ch.host_release(record);
  EXPECT_FALSE(ch.host_holds_records());
  EXPECT_TRUE(ch.nic_deliver({.kind = delivery_kind::direct, .payload = bytes_of(z)}));
}

TEST(HostChannel, ReleasingARecordThatIsNotHeldIsABug) {
  host_channel ch(1024);
  EXPECT_DEATH(ch.host_release(64), "release of a record that is not held");
}

TEST(HostChannel, HeldDeliveryIsInvisibleUntilPublished) {
  host_channel ch(4096);
  const std::string ops = "ops", later = "later";
  ASSERT_TRUE(ch.nic_deliver_held({.kind = delivery_kind::iso_data,
                                   .source = 2,
                                   .sequence = 4,
                                   .stamp = 7,
                                   .payload = bytes_of(ops)}));
  EXPECT_TRUE(ch.nic_holds());
  ASSERT_TRUE(
      ch.nic_deliver({.kind = delivery_kind::direct, .source = 1, .payload = bytes_of(later)}));
  EXPECT_FALSE(ch.host_has_deliveries());
  EXPECT_THAT(poll_all(ch), ::testing::IsEmpty());
  ch.nic_publish_held();
  EXPECT_FALSE(ch.nic_holds());
  EXPECT_THAT(poll_all(ch), ElementsAre(seen{delivery_kind::iso_data, 2, 4, 0, 7, "ops"},
                                        seen{delivery_kind::direct, 1, 0, 0, 0, "later"}));
}

TEST(HostChannel, ClosingAHeldIsoDataMakesItClosingDataWithTheCount) {
  host_channel ch(4096);
  const std::string ops = "ops";
  ASSERT_TRUE(ch.nic_deliver_held({.kind = delivery_kind::iso_data,
                                   .source = 2,
                                   .sequence = 4,
                                   .stamp = 7,
                                   .payload = bytes_of(ops)}));
  ch.nic_close_held(3);
  EXPECT_THAT(poll_all(ch), ::testing::IsEmpty());  // closing does not publish
  ch.nic_publish_held();
  EXPECT_THAT(poll_all(ch), ElementsAre(seen{delivery_kind::closing_data, 2, 4, 3, 7, "ops"}));
}

TEST(HostChannel, ClosingWithNothingHeldIsABug) {
  host_channel ch(4096);
  EXPECT_DEATH(ch.nic_close_held(1), "no delivery is held");
}

TEST(HostChannel, MaxRecordBoundsBothQueues) {
  host_channel ch(4096);
  ASSERT_EQ(ch.max_record(), 4096u / 4 - 16);
  // A submission header is 16 bytes, a part header 8; a delivery header is 24.
  const std::string largest_direct(ch.max_record() - 16, 'd');
  const byte_span piece[] = {bytes_of(largest_direct)};
  ASSERT_TRUE(ch.host_submit(submission_kind::direct, 1, piece));
  const std::string largest_part(ch.max_record() - 16 - 8, 'p');
  const isochron_part part[] = {{1, bytes_of(largest_part)}};
  ASSERT_TRUE(ch.host_submit_isochron(1, 2, part));
  submission s;
  ASSERT_TRUE(ch.nic_peek_submission(s));
  EXPECT_EQ(text_of(s.parts[0].operations), largest_direct);
  ch.nic_finish_submission(s);
  ASSERT_TRUE(ch.nic_peek_submission(s));
  EXPECT_EQ(text_of(s.parts[0].operations), largest_part);
  ch.nic_finish_submission(s);

  const std::string one_more(ch.max_record() - 16 + 1, 'x');
  const byte_span too_big[] = {bytes_of(one_more)};
  EXPECT_DEATH((void)ch.host_submit(submission_kind::direct, 1, too_big), "submission of");
  // A part is padded to 8 bytes: one byte more costs eight.
  const std::string odd_part(ch.max_record() - 16 - 8 + 1, 'p');
  const isochron_part padded[] = {{1, bytes_of(odd_part)}};
  EXPECT_DEATH((void)ch.host_submit_isochron(1, 2, padded), "exceeds the send queue");

  const std::string largest_delivery(ch.max_record() - 24, 'r');
  ASSERT_TRUE(
      ch.nic_deliver({.kind = delivery_kind::direct, .payload = bytes_of(largest_delivery)}));
  const std::vector<seen> got = poll_all(ch);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].payload, largest_delivery);
}

TEST(HostChannel, HostWaitDoesNotSleepWhileADeliveryWaits) {
  host_channel ch(4096);
  const std::string hi = "hi";
  ASSERT_TRUE(ch.nic_deliver({.kind = delivery_kind::direct, .payload = bytes_of(hi)}));
  const absl::Time start = absl::Now();
  // No ring: the delivery alone must keep it awake.
  ch.host_wait(absl::Seconds(20), [] { return true; });
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(poll_all(ch).size(), 1u);
}

TEST(HostChannel, HostWaitReturnsOnceTheNicDelivers) {
  host_channel ch(4096);
  const std::string hi = "hi";
  std::thread nic([&] {
    EXPECT_TRUE(ch.nic_deliver({.kind = delivery_kind::direct, .payload = bytes_of(hi)}));
    ch.nic_ring_host();
  });
  // Whether the delivery comes before the host sleeps or during, the wait ends well before
  // its timeout.
  const absl::Time start = absl::Now();
  while (!ch.host_has_deliveries() && absl::Now() - start < absl::Seconds(10)) {
    ch.host_wait(absl::Seconds(20), [] { return true; });
  }
  nic.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << "the ring did not wake the host";
  EXPECT_THAT(poll_all(ch), ElementsAre(seen{delivery_kind::direct, 0, 0, 0, 0, "hi"}));
}

// A host whose NIC closed pulses it has not run yet (what may_sleep tells) must not sleep
// although nothing was delivered: a pulse that closes with nothing for it brings no
// delivery, and a ring for it that came before the sleep was announced is gone.
TEST(HostChannel, HostWaitDoesNotSleepWhenTheCallerSaysThereIsWork) {
  host_channel ch(4096);
  const absl::Time start = absl::Now();
  ch.host_wait(absl::Seconds(20), [] { return false; });
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

// While the host sleeps on another doorbell, the NIC's ring reaches that one too.
TEST(HostChannel, TheNicAlsoRingsTheDoorbellTheHostSleepsOn) {
  host_channel ch(4096);
  comm::doorbell other;
  ch.host_also_ring(&other);
  std::atomic<bool> woke{false};
  std::thread host([&] {
    const std::uint32_t ticket = other.prepare_sleep();
    other.sleep(ticket, absl::Seconds(20));
    other.finish_sleep();
    woke = true;
  });
  while (other.sleepers.load() == 0) std::this_thread::yield();
  const absl::Time start = absl::Now();
  ch.nic_ring_host();
  host.join();
  EXPECT_TRUE(woke.load());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << "the other doorbell was not rung";
  ch.host_also_ring(nullptr);
}

}  // namespace
}  // namespace iso::nicfw
