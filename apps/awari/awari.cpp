// awari: retrograde analysis of the Awari endgame databases on Orca-style shared objects
// (after the Orca Awari of Bal and Allis).
//
// The databases are built layer by layer, from 0 stones up to --stones; every node has
// every finished layer in its replica of the database object and looks values up there, in
// place (object::inspect), for the capturing moves of the next layer. A
// layer's boards are split over the nodes by rank (rank mod nodes), and each node runs the
// layer analysis of awari_analysis.hpp on its part. What a node learns about another's
// boards (a child lost or won at some thresholds) goes into a batch for that node, put into
// the receiver's mailbox (a single copy on the receiver) as soon as it is full, the rest at
// the end of the round, when the node has nothing left to do itself. Then, once its puts
// are in, it reports how many events it sent to the replicated rounds object. A guarded
// read of it ("every node reported this round") gives every node the job's total: none sent
// means no node has work left, and the layer is done everywhere; otherwise each node takes
// its mailbox and works on. Each node then puts its part's values into the replicated
// database and waits until every node's are in its replica.
//
// Two mailbox slots and two rounds slots, by the round's parity, are enough: a node puts
// into round r + 2 only after reading the outcome of round r + 1, which needs the report of
// r + 1 of every node, made after that node took its round r events and read round r's
// outcome.
//
// With the NIC inline a node serves the others' puts only while in the runtime, so the
// analysis polls the node every 4096 boards or events (and sends its full batches then).
// It reads the lower layers in place between those polls, a step of 4096 boards at a time:
// while a node polls its replica may change (it serves others' writes), and an inspection
// holds the node from doing so.
//
// With --check node 0 runs the sequential analysis and compares every value.
//
//   isorun -n 2 -- awari --stones 8 --check
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iso/iso.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/awari/awari_analysis.hpp"
#include "apps/awari/awari_objects.hpp"
#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long stones = 6;
  bool check = false;
  bool phases = false;
  command_line cli("awari",
                   "retrograde analysis of the Awari databases up to a number of stones, the "
                   "boards split over the nodes, events batched through mailbox objects");
  cli.add_count("--stones", stones, 1, awari::kMaxStones, "the most stones on a board");
  cli.add_switch("--check", check, "compare every value with the sequential analysis's");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;

  const iso::object_type mailbox_type = awari::make_mailbox_type();
  const iso::object_type rounds_type = awari::make_rounds_type();
  const iso::object_type database_type = awari::make_database_type();
  return iso::run(argc, argv, [&](iso::node& node) {
    const std::uint32_t nodes = node.count();
    const std::uint32_t me = node.id();
    std::vector<iso::object> mailboxes;
    for (std::uint32_t owner = 0; owner < nodes; ++owner) {
      mailboxes.emplace_back(
          node, mailbox_type,
          iso::object_options{.placement = iso::object_placement::single_copy, .owner = owner});
    }
    iso::object rounds(node, rounds_type, {.placement = iso::object_placement::replicated});
    iso::object shared_db(node, database_type, {.placement = iso::object_placement::replicated});
    phase_timer timer;
    std::int64_t round = 0;
    std::uint64_t sent = 0;  // in this round
    std::uint64_t sent_total = 0;
    std::vector<iso::pending<void>> puts;  // this round's, waited for before its report
    // Starts the puts of every outbox holding at least `at_least` events.
    const auto send = [&](awari::layer_analysis& layer, std::size_t at_least) {
      for (std::uint32_t to = 0; to < nodes; ++to) {
        std::vector<awari::event>& out = layer.outbox(to);
        if (to == me || out.empty() || out.size() < at_least) continue;
        awari::put_events(mailboxes[to], round, out, puts);
        sent += out.size();
        out.clear();
      }
    };
    node.barrier();
    const stopwatch clock;
    for (int s = 0; s <= stones; ++s) {
      timer.enter("analysis");
      awari::layer_analysis layer(s, me, nodes);
      // Full batches leave while the node works on (their puts overlap the analysis), and
      // the node serves the others' puts into its own mailbox.
      const std::function<void()> every_so_often = [&] {
        send(layer, awari::kEventsPerCall);
        node.poll();
      };
      for (std::uint64_t first = 0; first < layer.boards();
           first += awari::layer_analysis::kBoardsPerStep) {
        const std::uint64_t end =
            std::min(layer.boards(), first + awari::layer_analysis::kBoardsPerStep);
        awari::read_layers(shared_db, s, [&](const awari::database_view& lower) {
          layer.start_boards(lower, first, end);
        });
        every_so_often();
      }
      for (;; ++round) {
        timer.enter("analysis");
        layer.run(every_so_often);
        timer.enter("send");
        send(layer, 1);
        for (iso::pending<void>& put : puts) put.get();
        puts.clear();
        sent_total += sent;
        timer.enter("round end");
        const std::uint64_t sent_by_all = awari::finish_round(rounds, round, sent, nodes);
        sent = 0;
        if (sent_by_all == 0) break;
        timer.enter("take");
        layer.deliver(awari::take_events(mailboxes[me], round));
      }
      ++round;
      timer.enter("publish");
      awari::put_values(shared_db, s, me, nodes, layer.values());
      awari::await_layer(shared_db, s);
    }
    const double seconds = clock.seconds();
    timer.stop();
    if (phases) {
      std::printf("awari: node %u: %s; %lld rounds, %llu events sent\n", me,
                  timer.summary().c_str(), static_cast<long long>(round),
                  static_cast<unsigned long long>(sent_total));
    }
    if (me != 0) return;
    std::uint64_t boards = 0;
    for (int s = 0; s <= stones; ++s) boards += awari::layer_size(s);
    print_size("awari",
               format("boards with up to %ld stones (%llu boards)", stones,
                      static_cast<unsigned long long>(boards)),
               nodes);
    print_time("awari", seconds, "analysis");
    if (!check) {
      print_check_skipped("awari");
      return;
    }
    const awari::database want = awari::solve(static_cast<int>(stones));
    std::string difference;
    std::string description;
    awari::read_layers(shared_db, static_cast<int>(stones) + 1,
                       [&](const awari::database_view& db) {
                         difference = awari::first_difference(db, want);
                         if (difference.empty()) description = awari::describe(db);
                       });
    print_check("awari",
                {difference.empty(),
                 difference.empty() ? description + "; as the sequential analysis" : difference});
    if (!difference.empty()) {
      throw iso::error(iso::error_code::data_loss, "awari: the check failed");
    }
  });
}
