// Object types the shared-object tests use, built with iso::typed_object:
//   Int       Orca's example: inc(by) -> new value, value(), await(v) guarded (v <= value),
//             lower(x) (value = min(value, x)), mix(x) (an order-sensitive write).
//   JobQueue  put(job), close(), get() guarded: a job while there is one, -1 once closed
//             and empty; waits while empty and open.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "iso/object.hpp"

namespace iso::test {

namespace int_ops {
inline constexpr iso::operation_id kInc = 0;
inline constexpr iso::operation_id kValue = 1;
inline constexpr iso::operation_id kAwait = 2;
inline constexpr iso::operation_id kLower = 3;
inline constexpr iso::operation_id kMix = 4;
// Throws from its body after changing the state, and from its guard when asked to.
inline constexpr iso::operation_id kFaulty = 5;
}  // namespace int_ops

inline iso::object_type make_int_type() {
  using namespace int_ops;
  using guard = bool (*)(const std::int64_t&, std::int64_t);
  using read_body = std::int64_t (*)(const std::int64_t&, std::int64_t);
  using write_body = std::int64_t (*)(std::int64_t&, std::int64_t);
  return iso::typed_object<std::int64_t>("Int")
      .write(kInc, "inc", [](std::int64_t& v, std::int64_t by) { return v += by; })
      .read(kValue, "value", [](const std::int64_t& v) { return v; })
      .read(kAwait, "await",
            std::vector<std::pair<guard, read_body>>{
                {[](const std::int64_t& v, std::int64_t want) { return v >= want; },
                 [](const std::int64_t& v, std::int64_t) { return v; }}})
      .write(kLower, "lower", [](std::int64_t& v, std::int64_t x) { return v = std::min(v, x); })
      .write(kMix, "mix",
             [](std::int64_t& v, std::int64_t x) {
               // Depends on the order of the writes; wraps (unsigned, so defined).
               v = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) * 1000003U +
                                             static_cast<std::uint64_t>(x));
               return v;
             })
      .write(kFaulty, "faulty",
             std::vector<std::pair<guard, write_body>>{
                 {[](const std::int64_t&, std::int64_t how) {
                    if (how == 1) throw std::runtime_error("guard refuses");
                    return true;
                  },
                  [](std::int64_t& v, std::int64_t) -> std::int64_t {
                    v += 1000;
                    throw std::runtime_error("body fails half-way");
                  }}})
      .type();
}

namespace queue_ops {
inline constexpr iso::operation_id kPut = 0;
inline constexpr iso::operation_id kClose = 1;
inline constexpr iso::operation_id kGet = 2;
inline constexpr iso::operation_id kSize = 3;
}  // namespace queue_ops

struct job_queue_state {
  std::deque<std::int64_t> jobs;
  bool closed = false;
};

inline std::vector<std::byte> save_queue(const job_queue_state& s) {
  std::vector<std::byte> out(1 + s.jobs.size() * sizeof(std::int64_t));
  out[0] = static_cast<std::byte>(s.closed ? 1 : 0);
  std::size_t at = 1;
  for (std::int64_t j : s.jobs) {
    std::memcpy(out.data() + at, &j, sizeof(j));
    at += sizeof(j);
  }
  return out;
}

inline job_queue_state load_queue(std::span<const std::byte> bytes) {
  job_queue_state s;
  if (bytes.empty() || (bytes.size() - 1) % sizeof(std::int64_t) != 0) {
    throw std::invalid_argument("a saved job queue has 1 + 8n bytes");
  }
  s.closed = bytes[0] != std::byte{0};
  for (std::size_t at = 1; at < bytes.size(); at += sizeof(std::int64_t)) {
    std::int64_t j = 0;
    std::memcpy(&j, bytes.data() + at, sizeof(j));
    s.jobs.push_back(j);
  }
  return s;
}

inline iso::object_type make_queue_type() {
  using namespace queue_ops;
  using state = job_queue_state;
  using guard = bool (*)(const state&);
  using body = std::int64_t (*)(state&);
  return iso::typed_object<state>("JobQueue", save_queue, load_queue)
      .write(kPut, "put", [](state& s, std::int64_t job) { s.jobs.push_back(job); })
      .write(kClose, "close", [](state& s) { s.closed = true; })
      .write(kGet, "get",
             std::vector<std::pair<guard, body>>{{[](const state& s) { return !s.jobs.empty(); },
                                                  [](state& s) {
                                                    const std::int64_t job = s.jobs.front();
                                                    s.jobs.pop_front();
                                                    return job;
                                                  }},
                                                 {[](const state& s) { return s.closed; },
                                                  [](state&) -> std::int64_t { return -1; }}})
      .read(kSize, "size", [](const state& s) { return static_cast<std::int64_t>(s.jobs.size()); })
      .type();
}

}  // namespace iso::test
