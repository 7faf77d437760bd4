#include "apps/awari/awari_objects.hpp"

#include <any>
#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "apps/common/object_state.hpp"
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

struct put_arguments {
  std::int64_t round = 0;
  std::vector<event> events;
};
struct take_arguments {
  std::int64_t round = 0;
  std::uint64_t most = 0;
};

iso::error bad_size(const char* what, std::size_t bytes) {
  return {iso::error_code::invalid_argument, format("%s, not %zu bytes", what, bytes)};
}

template <class Arguments>
Arguments fixed_arguments(std::span<const std::byte> bytes, const char* what) {
  Arguments args;
  if (bytes.size() != sizeof args) throw bad_size(what, bytes.size());
  std::memcpy(&args, bytes.data(), sizeof args);
  return args;
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
constexpr iso::operation_id kPutValues = 0, kGetValues = 1;

struct values_header {
  std::uint32_t stones = 0;
  std::uint32_t part = 0;
  std::uint32_t parts = 0;
  std::uint32_t unused = 0;
  std::uint64_t first = 0;  // the part's index of the first value
};
struct put_values_arguments {
  values_header at;
  std::vector<value> values;
};
struct get_values_arguments {
  std::uint64_t stones = 0;
  std::uint64_t first = 0;  // rank
  std::uint64_t count = 0;
};

bool layer_complete(const database_state& s, std::uint64_t stones) {
  return stones < s.layers.size() &&
         s.layers[stones].filled == layer_size(static_cast<int>(stones));
}

}  // namespace

iso::object_type make_mailbox_type() {
  iso::object_type type("AwariMailbox", default_state<mailbox_state>("AwariMailbox"));
  iso::operation put;
  put.id = kPut;
  put.name = "put";
  put.kind = iso::operation_kind::write;
  put.body_may_throw = false;
  put.unmarshal = [](std::span<const std::byte> bytes) -> iso::decoded_arguments {
    put_arguments args;
    if (bytes.size() < sizeof args.round ||
        (bytes.size() - sizeof args.round) % sizeof(event) != 0) {
      throw bad_size("put takes a round and whole events (8 bytes each)", bytes.size());
    }
    std::memcpy(&args.round, bytes.data(), sizeof args.round);
    if (args.round < 0) {
      throw iso::error(iso::error_code::invalid_argument,
                       format("put: round %lld is negative", static_cast<long long>(args.round)));
    }
    args.events.resize((bytes.size() - sizeof args.round) / sizeof(event));
    std::memcpy(args.events.data(), bytes.data() + sizeof args.round,
                args.events.size() * sizeof(event));
    return args;
  };
  put.alternatives.push_back(
      {{}, [](void* s, const iso::decoded_arguments& a, std::vector<std::byte>&) {
         const auto& args = std::any_cast<const put_arguments&>(a);
         std::vector<event>& to = static_cast<mailbox_state*>(s)->of(args.round).events;
         to.insert(to.end(), args.events.begin(), args.events.end());
       }});
  type.add(std::move(put));

  iso::operation take;
  take.id = kTake;
  take.name = "take";
  take.kind = iso::operation_kind::write;
  take.body_may_throw = false;
  take.unmarshal = [](std::span<const std::byte> bytes) -> iso::decoded_arguments {
    const auto args = fixed_arguments<take_arguments>(
        bytes, "take takes a round and a number of events (16 bytes)");
    if (args.round < 0) {
      throw iso::error(iso::error_code::invalid_argument,
                       format("take: round %lld is negative", static_cast<long long>(args.round)));
    }
    return args;
  };
  // Takes the last `most` events of the round (their order does not matter).
  take.alternatives.push_back(
      {{}, [](void* s, const iso::decoded_arguments& a, std::vector<std::byte>& out) {
         const auto args = std::any_cast<take_arguments>(a);
         std::vector<event>& from = static_cast<mailbox_state*>(s)->of(args.round).events;
         const std::size_t n = std::min<std::size_t>(from.size(), args.most);
         out.resize(n * sizeof(event));
         if (n > 0) std::memcpy(out.data(), from.data() + (from.size() - n), out.size());
         from.resize(from.size() - n);
       }});
  type.add(std::move(take));
  return type;
}

void put_events(iso::object& mailbox, std::int64_t round, std::span<const event> events,
                std::vector<iso::object_call>& calls) {
  for (std::size_t first = 0; first < events.size(); first += kEventsPerCall) {
    const std::span<const event> batch =
        events.subspan(first, std::min(kEventsPerCall, events.size() - first));
    calls.push_back(mailbox.start(kPut, argument_bytes(round, batch)));
  }
}

std::vector<event> take_events(iso::object& mailbox, std::int64_t round) {
  std::vector<event> all;
  for (;;) {
    const std::vector<std::byte> bytes =
        mailbox.invoke(kTake, argument_bytes(take_arguments{round, kEventsPerCall}));
    const std::size_t n = bytes.size() / sizeof(event);
    all.resize(all.size() + n);
    if (n > 0) std::memcpy(all.data() + (all.size() - n), bytes.data(), n * sizeof(event));
    if (n < kEventsPerCall) return all;
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

iso::object_type make_database_type() {
  iso::object_type type("AwariDatabase", default_state<database_state>("AwariDatabase"));
  iso::operation put;
  put.id = kPutValues;
  put.name = "put";
  put.kind = iso::operation_kind::write;
  put.body_may_throw = false;
  // Everything a put could get wrong is seen here, from the arguments alone, so the body
  // cannot fail (and no copy of the database is taken before each put).
  put.unmarshal = [](std::span<const std::byte> bytes) -> iso::decoded_arguments {
    put_values_arguments args;
    if (bytes.size() <= sizeof args.at) {
      throw bad_size("put takes a layer, a part, the parts, a first index and values",
                     bytes.size());
    }
    std::memcpy(&args.at, bytes.data(), sizeof args.at);
    args.values.resize(bytes.size() - sizeof args.at);
    std::memcpy(args.values.data(), bytes.data() + sizeof args.at, args.values.size());
    const values_header& at = args.at;
    if (at.stones > static_cast<std::uint32_t>(kMaxStones) || at.parts == 0 ||
        at.part >= at.parts) {
      throw iso::error(iso::error_code::invalid_argument,
                       format("put: no layer %u or part %u of %u", at.stones, at.part, at.parts));
    }
    const std::uint64_t last = (at.first + args.values.size() - 1) * at.parts + at.part;
    if (last >= layer_size(static_cast<int>(at.stones))) {
      throw iso::error(
          iso::error_code::invalid_argument,
          format("put: rank %llu is beyond the %llu boards of layer %u",
                 static_cast<unsigned long long>(last),
                 static_cast<unsigned long long>(layer_size(static_cast<int>(at.stones))),
                 at.stones));
    }
    return args;
  };
  put.alternatives.push_back(
      {{}, [](void* s, const iso::decoded_arguments& a, std::vector<std::byte>&) {
         const auto& args = std::any_cast<const put_values_arguments&>(a);
         auto& layers = static_cast<database_state*>(s)->layers;
         if (layers.size() <= args.at.stones) layers.resize(args.at.stones + 1);
         database_state::layer& layer = layers[args.at.stones];
         if (layer.values.empty())
           layer.values.resize(layer_size(static_cast<int>(args.at.stones)));
         for (std::size_t j = 0; j < args.values.size(); ++j) {
           layer.values[(args.at.first + j) * args.at.parts + args.at.part] = args.values[j];
         }
         layer.filled += args.values.size();
       }});
  type.add(std::move(put));

  iso::operation get;
  get.id = kGetValues;
  get.name = "get";
  get.kind = iso::operation_kind::read;
  get.body_may_throw = false;
  get.unmarshal = [](std::span<const std::byte> bytes) -> iso::decoded_arguments {
    const auto args = fixed_arguments<get_values_arguments>(
        bytes, "get takes a layer, a first rank and a count (24 bytes)");
    if (args.stones > static_cast<std::uint64_t>(kMaxStones) ||
        args.first > layer_size(static_cast<int>(args.stones)) ||
        args.count > layer_size(static_cast<int>(args.stones)) - args.first) {
      throw iso::error(iso::error_code::invalid_argument,
                       format("get: ranks %llu to %llu are not all in layer %llu",
                              static_cast<unsigned long long>(args.first),
                              static_cast<unsigned long long>(args.first) + args.count,
                              static_cast<unsigned long long>(args.stones)));
    }
    return args;
  };
  // Waits until every value of the layer is in.
  get.alternatives.push_back(
      {[](const void* s, const iso::decoded_arguments& a) {
         return layer_complete(*static_cast<const database_state*>(s),
                               std::any_cast<get_values_arguments>(a).stones);
       },
       [](void* s, const iso::decoded_arguments& a, std::vector<std::byte>& out) {
         const auto args = std::any_cast<get_values_arguments>(a);
         const std::vector<value>& values =
             static_cast<const database_state*>(s)->layers[args.stones].values;
         out.resize(args.count);
         std::memcpy(out.data(), values.data() + args.first, args.count);
       }});
  type.add(std::move(get));
  return type;
}

void put_values(iso::object& db, int stones, std::uint32_t part, std::uint32_t parts,
                std::span<const value> values) {
  std::vector<iso::object_call> calls;
  for (std::size_t first = 0; first < values.size(); first += kValuesPerCall) {
    const values_header at{static_cast<std::uint32_t>(stones), part, parts, 0, first};
    calls.push_back(db.start(
        kPutValues, argument_bytes(at, values.subspan(first, std::min(kValuesPerCall,
                                                                      values.size() - first)))));
  }
  for (iso::object_call& call : calls) call.get();
}

std::vector<value> get_layer(iso::object& db, int stones) {
  const std::uint64_t size = layer_size(stones);
  std::vector<value> layer(size);
  for (std::uint64_t first = 0; first < size; first += kValuesPerCall) {
    const std::uint64_t count = std::min<std::uint64_t>(kValuesPerCall, size - first);
    const std::vector<std::byte> bytes = db.invoke_read(
        kGetValues,
        argument_bytes(get_values_arguments{static_cast<std::uint64_t>(stones), first, count}));
    std::memcpy(layer.data() + first, bytes.data(), count);
  }
  return layer;
}

}  // namespace iso::apps::awari
