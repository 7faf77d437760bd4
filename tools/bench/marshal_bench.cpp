// marshal-bench: marshal + unmarshal of the same arguments by protoc-gen-iso's generated code
// and by protobuf (SerializeToString + ParseFromString), in the same run, with ratios.
//
//   generated: iso::marshal into a reused gather list, the list copied into a reused buffer
//              (what a transport does with it), iso::unmarshal into a fresh value;
//   protobuf:  SerializeToString into a reused string, ParseFromString into a reused message.
//
// Cases: a 1 KiB repeated int32, a record (a string, a nested message, 4 nested items), an
// empty call. Each figure is the median, with min and max, over repetitions of a timed loop.
//
//   build/bin/marshal-bench            # 15 repetitions
//   build/bin/marshal-bench --quick    # 5 repetitions, shorter loops
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "marshal_bench.iso.hpp"
#include "marshal_bench.pb.h"
#include "tools/bench_support/bench_stats.hpp"

namespace {

namespace plain = iso::bench::plain;
namespace pb = iso::bench;
using clock_type = std::chrono::steady_clock;

// Defeats dead-code elimination of the results.
volatile std::size_t sink = 0;

// Nanoseconds per call of `op`, one figure per repetition.
std::vector<double> time_ns(int repetitions, int iterations, const std::function<void()>& op) {
  std::vector<double> samples;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = clock_type::now();
    for (int i = 0; i < iterations; ++i) op();
    samples.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - start).count() /
                      iterations);
  }
  return samples;
}

template <class Plain>
std::function<void()> generated_round_trip(const Plain& value) {
  struct state {
    iso::gather_list list;
    std::vector<std::byte> buffer;
  };
  auto s = std::make_shared<state>();
  return [s, &value] {
    iso::marshal(value, s->list);
    s->buffer.resize(s->list.bytes());
    s->list.copy_to(s->buffer.data());
    Plain out;
    if (!iso::unmarshal(s->buffer, out).ok()) std::abort();
    sink = sink + s->buffer.size();
  };
}

template <class Proto>
std::function<void()> protobuf_round_trip(const Proto& value) {
  struct state {
    std::string bytes;
    Proto parsed;
  };
  auto s = std::make_shared<state>();
  return [s, &value] {
    if (!value.SerializeToString(&s->bytes) || !s->parsed.ParseFromString(s->bytes)) std::abort();
    sink = sink + s->bytes.size();
  };
}

void row(const char* label, const std::vector<double>& ours, const std::vector<double>& peer) {
  const auto a = iso::bench::summarize(ours);
  const auto b = iso::bench::summarize(peer);
  std::printf("%-28s %26s %26s %9.2fx\n", label, iso::bench::cell(a, "%.1f").c_str(),
              iso::bench::cell(b, "%.1f").c_str(), b->median / a->median);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int repetitions = quick ? 5 : 15;
  const int iterations = quick ? 20000 : 100000;

  plain::IntArray array;
  pb::IntArray array_pb;
  for (int i = 0; i < 256; ++i) {
    array.values.push_back(i * 1000003);
    array_pb.add_values(i * 1000003);
  }

  // Assigned member by member: the fixed fields come first in the structs, largest first,
  // so designated initializers would have to follow that order rather than the .proto's.
  plain::Record record;
  record.id = 42;
  record.score = 0.75;
  record.name = "a record with a name";
  record.address.street = "Science Park";
  record.address.number = 123;
  record.address.postcode = 1098;
  pb::Record record_pb;
  record_pb.set_id(record.id);
  record_pb.set_score(record.score);
  record_pb.set_name(record.name);
  record_pb.mutable_address()->set_street(record.address.street);
  record_pb.mutable_address()->set_number(record.address.number);
  record_pb.mutable_address()->set_postcode(record.address.postcode);
  for (int i = 0; i < 4; ++i) {
    plain::Item& item_plain = record.items.emplace_back();
    item_plain.sku = 1000 + i;
    item_plain.count = i;
    item_plain.price = 9.5 * i;
    pb::Item* item = record_pb.add_items();
    item->set_sku(1000 + i);
    item->set_count(i);
    item->set_price(9.5 * i);
  }

  plain::Empty empty;
  pb::Empty empty_pb;

  std::printf(
      "marshal + unmarshal, ns per call: median [min-max] over %d repetitions of %d calls\n",
      repetitions, iterations);
  std::printf("%-28s %26s %26s %10s\n", "case", "generated", "protobuf", "protobuf/generated");
  // Alternating, so that drift in the machine's load hits both alike.
  std::vector<double> ours;
  std::vector<double> peer;
  auto measure = [&](const char* label, const std::function<void()>& a,
                     const std::function<void()>& b) {
    ours.clear();
    peer.clear();
    for (int r = 0; r < repetitions; ++r) {
      for (double x : time_ns(1, iterations, a)) ours.push_back(x);
      for (double x : time_ns(1, iterations, b)) peer.push_back(x);
    }
    row(label, ours, peer);
  };
  measure("1 KiB repeated int32", generated_round_trip(array), protobuf_round_trip(array_pb));
  measure("record (string, nested)", generated_round_trip(record), protobuf_round_trip(record_pb));
  measure("empty call", generated_round_trip(empty), protobuf_round_trip(empty_pb));
  return 0;
}
