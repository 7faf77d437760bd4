// The shared objects of the parallel Awari analysis (awari.cpp):
//
//  - a mailbox per node (a single copy on that node): the other nodes `put` batches of
//    events for its boards, stamped with the round; the node `take`s them after the round.
//    Two slots, by the round's parity (awari.cpp says why two are enough).
//  - the rounds object (replicated): each node `report`s how many events it sent in a round;
//    a guarded read `outcome` ("every node has reported the round") gives every node the
//    same total, and a round in which nobody sent anything ends the layer everywhere.
//  - the database (replicated): each node `put`s the values of its boards once a layer is
//    done; a guarded read `complete` waits until every value of the layer is in, and then
//    the node reads the layers on its own replica in place (object::inspect), with no
//    copy of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <iso/iso.hpp>
#include <span>
#include <vector>

#include "apps/awari/awari_analysis.hpp"

namespace iso::apps::awari {

// Events per mailbox put or take, values per database put: well below the largest
// argument of an object call (one message).
inline constexpr std::size_t kEventsPerCall = 4096;
inline constexpr std::size_t kValuesPerCall = 32768;

// The database's put takes this header, then the values: layer `stones`, part `part` of
// `parts`, and the part's index of the first value.
struct values_header {
  std::uint32_t stones = 0;
  std::uint32_t part = 0;
  std::uint32_t parts = 0;
  std::uint32_t unused = 0;
  std::uint64_t first = 0;
};

[[nodiscard]] iso::object_type make_mailbox_type();
[[nodiscard]] iso::object_type make_rounds_type();
[[nodiscard]] iso::object_type make_database_type();

// Mailbox: puts `events` for round `round` (the caller waits for none of them: the calls are
// returned, to be waited for before the round is reported).
void put_events(iso::object& mailbox, std::int64_t round, std::span<const event> events,
                std::vector<iso::pending<void>>& calls);
// Mailbox: every event put for `round`, emptied out of it.
[[nodiscard]] std::vector<event> take_events(iso::object& mailbox, std::int64_t round);

// Rounds: reports `sent` events for `round`, then waits for every node's report and returns
// the events the whole job sent.
[[nodiscard]] std::uint64_t finish_round(iso::object& rounds, std::int64_t round,
                                         std::uint64_t sent, std::uint32_t nodes);

// Database: puts the values of part `part` of `parts` of layer `stones`.
void put_values(iso::object& db, int stones, std::uint32_t part, std::uint32_t parts,
                std::span<const value> values);
// Database: waits until every part put its values of layer `stones`.
void await_layer(iso::object& db, int stones);
// Database: runs `f` on the layers 0 to `below` - 1 (each complete: await_layer() them
// first) where this node's replica keeps them, in place. `f` must not call into the
// runtime, nor keep the view once it returns (see object::inspect).
void read_layers(const iso::object& db, int below,
                 const std::function<void(const database_view&)>& f);

}  // namespace iso::apps::awari
