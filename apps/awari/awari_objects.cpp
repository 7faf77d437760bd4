#include "apps/awari/awari_objects.hpp"

#include <array>
#include <string>
#include <utility>

#include "apps/common/report.hpp"

namespace iso::apps::awari {

namespace {

// ---- mailbox ----

constexpr iso::operation_id kPut = 0, kTake = 1;

struct mailbox_state {
  struct slot {
    std::int64_t round = -1;
    std::vector<event> events;
  };
  std::array<slot, 2> slots;
  // The slot of `round`, emptied first if it held an earlier round.
  slot& of(std::int64_t round) {
    slot& s = slots[static_cast<std::size_t>(round % 2)];
    if (s.round != round) s = slot{round, {}};
    return s;
  }
};

// Refuses a negative round, before the call goes anywhere.
void check_round(const char* op, std::int64_t round) {
  if (round < 0) {
    throw iso::error(iso::error_code::invalid_argument,
                     format("%s: round %lld is negative", op, static_cast<long long>(round)));
  }
}

// ---- rounds ----

struct round_slot {
  std::int64_t round = -1;
  std::uint32_t reported = 0;
  std::uint64_t sent = 0;
};
using rounds_state = std::array<round_slot, 2>;
constexpr iso::operation_id kReport = 0, kOutcome = 1;

// ---- database ----

struct database_state {
  struct layer {
    std::vector<value> values;
    std::uint64_t filled = 0;
  };
  std::vector<layer> layers;
};
constexpr iso::operation_id kPutValues = 0, kComplete = 1;

bool layer_complete(const database_state& s, std::uint64_t stones) {
  return stones < s.layers.size() &&
         s.layers[stones].filled == layer_size(static_cast<int>(stones));
}

}  // namespace

iso::object_type make_mailbox_type() {
  return iso::typed_object<mailbox_state>("AwariMailbox")
      .write(
          kPut, "put",
          [](mailbox_state& s, std::int64_t round, std::span<const event> events) noexcept {
            std::vector<event>& to = s.of(round).events;
            to.insert(to.end(), events.begin(), events.end());
          },
          [](std::int64_t round, std::span<const event>) { check_round("put", round); })
      // Takes the last `most` events of the round (their order does not matter).
      .write(
          kTake, "take",
          [](mailbox_state& s, std::int64_t round, std::uint64_t most) noexcept {
            std::vector<event>& from = s.of(round).events;
            const auto n = static_cast<std::ptrdiff_t>(std::min<std::size_t>(from.size(), most));
            std::vector<event> taken(from.end() - n, from.end());
            from.erase(from.end() - n, from.end());
            return taken;
          },
          [](std::int64_t round, std::uint64_t) { check_round("take", round); })
      .type();
}

void put_events(iso::object& mailbox, std::int64_t round, std::span<const event> events,
                std::vector<iso::pending<void>>& calls) {
  for (std::size_t first = 0; first < events.size(); first += kEventsPerCall) {
    const std::span<const event> batch =
        events.subspan(first, std::min(kEventsPerCall, events.size() - first));
    calls.push_back(mailbox.start<void>(kPut, round, batch));
  }
}

std::vector<event> take_events(iso::object& mailbox, std::int64_t round) {
  std::vector<event> all;
  for (;;) {
    const auto batch =
        mailbox.call<std::vector<event>>(kTake, round, std::uint64_t{kEventsPerCall});
    all.insert(all.end(), batch.begin(), batch.end());
    if (batch.size() < kEventsPerCall) return all;
  }
}

iso::object_type make_rounds_type() {
  using guard = bool (*)(const rounds_state&, std::int64_t, std::uint32_t);
  using body = std::uint64_t (*)(const rounds_state&, std::int64_t, std::uint32_t);
  return iso::typed_object<rounds_state>("AwariRounds")
      .write(kReport, "report",
             [](rounds_state& s, std::int64_t round, std::uint64_t sent) {
               round_slot& slot = s[static_cast<std::size_t>(round % 2)];
               if (slot.round != round) slot = round_slot{round, 0, 0};
               ++slot.reported;
               slot.sent += sent;
             })
      .read(kOutcome, "outcome",
            std::vector<std::pair<guard, body>>{
                {[](const rounds_state& s, std::int64_t round, std::uint32_t nodes) {
                   const round_slot& slot = s[static_cast<std::size_t>(round % 2)];
                   return slot.round == round && slot.reported >= nodes;
                 },
                 [](const rounds_state& s, std::int64_t round, std::uint32_t) {
                   return s[static_cast<std::size_t>(round % 2)].sent;
                 }}})
      .type();
}

std::uint64_t finish_round(iso::object& rounds, std::int64_t round, std::uint64_t sent,
                           std::uint32_t nodes) {
  rounds.call<void>(kReport, round, sent);
  return rounds.read<std::uint64_t>(kOutcome, round, nodes);
}

namespace {

// Refuses a put that names no layer or part, or values beyond its layer's boards.
void check_put(const values_header& at, std::span<const value> values) {
  if (at.stones > static_cast<std::uint32_t>(kMaxStones) || at.parts == 0 || at.part >= at.parts ||
      values.empty()) {
    throw iso::error(
        iso::error_code::invalid_argument,
        format("put: no layer %u or part %u of %u, or no values", at.stones, at.part, at.parts));
  }
  const std::uint64_t boards = layer_size(static_cast<int>(at.stones));
  // In steps that cannot wrap: the values fit the layer's boards, then so does the last rank.
  const bool fits = at.first < boards && values.size() <= boards - at.first &&
                    (at.first + values.size() - 1) * at.parts + at.part < boards;
  if (!fits) {
    throw iso::error(iso::error_code::invalid_argument,
                     format("put: %zu values from index %llu of part %u of %u go beyond the %llu "
                            "boards of layer %u",
                            values.size(), static_cast<unsigned long long>(at.first), at.part,
                            at.parts, static_cast<unsigned long long>(boards), at.stones));
  }
}

using complete_guard = bool (*)(const database_state&, std::uint64_t);
using complete_body = void (*)(const database_state&, std::uint64_t);

}  // namespace

iso::object_type make_database_type() {
  // Everything a put could get wrong is checked before it goes out, from the arguments
  // alone, so the body cannot fail (and no copy of the database is taken before each put).
  return iso::typed_object<database_state>("AwariDatabase")
      .write(
          kPutValues, "put",
          [](database_state& s, values_header at, std::span<const value> values) noexcept {
            if (s.layers.size() <= at.stones) s.layers.resize(at.stones + 1);
            database_state::layer& layer = s.layers[at.stones];
            if (layer.values.empty()) layer.values.resize(layer_size(static_cast<int>(at.stones)));
            for (std::size_t j = 0; j < values.size(); ++j) {
              layer.values[(at.first + j) * at.parts + at.part] = values[j];
            }
            layer.filled += values.size();
          },
          check_put)
      // Waits until every value of the layer is in; returns nothing (the caller reads the
      // layer on its replica in place).
      .read(kComplete, "complete",
            std::vector<std::pair<complete_guard, complete_body>>{
                {[](const database_state& s, std::uint64_t stones) {
                   return layer_complete(s, stones);
                 },
                 [](const database_state&, std::uint64_t) {}}},
            [](std::uint64_t stones) {
              if (stones > static_cast<std::uint64_t>(kMaxStones)) {
                throw iso::error(
                    iso::error_code::invalid_argument,
                    format("complete: no layer %llu", static_cast<unsigned long long>(stones)));
              }
            })
      .type();
}

void put_values(iso::object& db, int stones, std::uint32_t part, std::uint32_t parts,
                std::span<const value> values) {
  std::vector<iso::pending<void>> calls;
  for (std::size_t first = 0; first < values.size(); first += kValuesPerCall) {
    const values_header at{static_cast<std::uint32_t>(stones), part, parts, 0, first};
    calls.push_back(db.start<void>(
        kPutValues, at, values.subspan(first, std::min(kValuesPerCall, values.size() - first))));
  }
  for (iso::pending<void>& call : calls) call.get();
}

void await_layer(iso::object& db, int stones) {
  db.read<void>(kComplete, static_cast<std::uint64_t>(stones));
}

void read_layers(const iso::object& db, int below,
                 const std::function<void(const database_view&)>& f) {
  db.inspect<database_state>([&](const database_state& s) {
    std::vector<std::span<const value>> layers;
    layers.reserve(static_cast<std::size_t>(below));
    for (int stones = 0; stones < below; ++stones) {
      if (!layer_complete(s, static_cast<std::uint64_t>(stones))) {
        throw iso::error(iso::error_code::failed_precondition,
                         format("awari: layer %d of the database is not complete on this node "
                                "(await it first)",
                                stones));
      }
      layers.emplace_back(s.layers[static_cast<std::size_t>(stones)].values);
    }
    f(database_view(std::move(layers)));
  });
}

}  // namespace iso::apps::awari
