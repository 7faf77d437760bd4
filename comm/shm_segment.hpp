// The shared-memory segment of a job on one host: the rings of the `shm` transport, a
// small area the bootstrap uses (a barrier and a key-value board per node) and one memory
// window per node.
//
// The launcher (isorun) creates the segment owner-only (0600) under a random per-job name,
// unlinks the name at once and passes the open descriptor to every node (ISO_SHM_FD), so no
// name is left behind whatever crashes. Node 0 sizes and initialises the segment; the others
// wait (bounded) until it is ready and prove membership with the per-job secret.
//
//   ISO_ASSIGN_OR_RETURN(auto segment, shm_segment::join(fd, rank, size, secret, {}));
//   auto transport = make_shm_transport(segment, rank);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/fabric_layout.hpp"
#include "comm/ring_transport.hpp"

namespace iso::comm {

struct shm_options {
  std::size_t ring_capacity = 256 * 1024;  // bytes of record space per ordered pair
  absl::Duration join_timeout = absl::Seconds(10);
  bool shuffle_poll_order = false;
  // Bytes of each node's memory window: memory its owner writes and every node of the job
  // may read (the runtime keeps its copies of shared pages there). Rounded up to 4 KiB;
  // untouched parts cost nothing.
  std::size_t window_bytes = 0;
  // A pipe to the launcher on which mark_failed() reports the first failure; -1 for none.
  // join() takes ownership of it.
  int report_fd = -1;
};

class shm_segment {
 public:
  // Bytes of key-value board each node owns.
  static constexpr std::size_t kBoardBytes = 16 * 1024;
  static constexpr std::size_t kMaxSecretBytes = 64;
  // The most nodes a segment holds (isorun's limit too).
  static constexpr std::uint32_t kMaxNodes = 4096;

  // Maps the segment behind `fd` as node `rank` of `size`. Node 0 sizes and initialises it
  // with `options`; the others take the layout node 0 wrote. Each rank is joined once: the
  // process that joins claims it in the segment, and any later claim of the same rank (a
  // second program run in the same node, a stranger that opened the segment) is refused.
  // Errors: InvalidArgument for a bad rank/size/secret length; PermissionDenied when the
  // secret does not match the job's; DeadlineExceeded when node 0 does not initialise it
  // within options.join_timeout; FailedPrecondition when the descriptor is not a job segment
  // of `size` nodes, or when `rank` has already been joined. Takes ownership of `fd`.
  static absl::StatusOr<std::shared_ptr<shm_segment>> join(int fd, std::uint32_t rank,
                                                           std::uint32_t size,
                                                           std::string_view secret,
                                                           const shm_options& options);

  // Creates a fresh anonymous segment for a job whose nodes are threads or children of
  // this process (tests, and single-node programs started without a launcher).
  static absl::StatusOr<std::shared_ptr<shm_segment>> create_private(std::uint32_t size,
                                                                     std::string_view secret,
                                                                     const shm_options& options);

  shm_segment(const shm_segment&) = delete;
  shm_segment& operator=(const shm_segment&) = delete;
  ~shm_segment();

  [[nodiscard]] const fabric_layout& layout() const { return layout_; }
  [[nodiscard]] std::uint32_t nodes() const { return layout_.nodes; }

  // Waits until every node has called barrier() the same number of times. Blocks (futex)
  // up to `timeout`: DeadlineExceeded names how many nodes arrived. Aborted when the job
  // was marked failed.
  [[nodiscard]] absl::Status barrier(absl::Duration timeout);

  // The same barrier in two steps, for callers that must keep working while they wait:
  // arrive() returns a ticket; passed(ticket) says whether every node has arrived since
  // (Aborted when the job was marked failed). Never blocks.
  [[nodiscard]] std::uint32_t barrier_arrive();
  [[nodiscard]] absl::StatusOr<bool> barrier_passed(std::uint32_t ticket) const;

  // Arrives at the barrier as `node`, with `digest` naming the collective call the node
  // makes there (its kind and arguments, hashed); returns the ticket, as barrier_arrive().
  // Once the barrier passed, barrier_digest(n, ticket) is what node n arrived with, until n
  // arrives at the barrier after the next one (two slots per node, used in turn).
  [[nodiscard]] std::uint32_t barrier_arrive(std::uint32_t node, std::uint64_t digest);
  [[nodiscard]] std::uint64_t barrier_digest(std::uint32_t node, std::uint32_t ticket) const;
  // Whether `node` arrived at barrier `ticket` through barrier_arrive(node, digest).
  [[nodiscard]] bool barrier_arrived(std::uint32_t node, std::uint32_t ticket) const;

  // Membership, for telling a node that failed from one that is merely slow: the process
  // that hosts each node, with the pid namespace its pid is from (an id, 0 when unknown:
  // only a process of the same namespace may look that pid up), and whether the node has
  // left the job (passed its end barrier).
  void set_process(std::uint32_t node, std::int32_t pid, std::uint64_t pid_namespace);
  [[nodiscard]] std::int32_t process(std::uint32_t node) const;
  [[nodiscard]] std::uint64_t process_namespace(std::uint32_t node) const;
  void mark_left(std::uint32_t node);
  [[nodiscard]] bool left(std::uint32_t node) const;

  // A monotone value per node (e.g. the last logical time it issued work for), published
  // before a barrier and reduced with max after it. Values only grow, so a node that reads
  // one published for a later barrier still gets a safe upper bound.
  void publish_mark(std::uint32_t node, std::uint64_t value);
  [[nodiscard]] std::uint64_t max_mark() const;

  // The key-value board of `node`: written by its owner before a barrier, read by anyone
  // after it.
  [[nodiscard]] std::span<std::byte> board(std::uint32_t node);

  // Why a node is marked failed, for job_status()'s message.
  enum class failure_cause : std::uint32_t { failed = 0, exited = 1, stopped = 2 };
  // Marks `node` failed with `cause` (another node found it gone or stopped), as mark_failed.
  void mark_failed(std::uint32_t node, failure_cause cause);
  // Marks the job failed (a node saw a fatal error); barrier waiters return Aborted. The
  // first node to fail is the one job_status() names; when options.report_fd is a pipe, a
  // node that finds the job not failed yet also writes "<node>\n" there first, so that the
  // launcher learns which node failed first before any other node can react to it.
  void mark_failed(std::uint32_t node);
  // OK while no node has marked the job failed; then Aborted, naming the node. Never blocks.
  [[nodiscard]] absl::Status job_status() const;

  // What note_process_ended() made of a node's end.
  enum class process_end {
    left,           // the node had left the job: its normal end
    not_joined,     // no process had joined the job as that node: nothing to tell
    first_failure,  // the job's first failure is now that node (this mark or an earlier one)
    other_failure,  // another node had failed first: the job is stopping already
  };
  // For the launcher, which holds the segment behind `fd` but is no node: the process of
  // `node` has ended (the launcher reaped it). Unless the node left the job or never joined
  // it, marks it failed as `exited`, so that every other node learns it at its next look at
  // the job, also one that cannot see the process itself (in another pid namespace). Does
  // not take `fd`, claims no rank and writes no report. Never blocks.
  // Errors: InvalidArgument for a node outside the job; the system's (named) when the
  // segment cannot be inspected or mapped.
  [[nodiscard]] static absl::StatusOr<process_end> note_process_ended(int fd, std::uint32_t node);

  // The memory window of `node` (options.window_bytes, as node 0 sized it): written only by
  // that node, readable by all. Empty when the job has none.
  [[nodiscard]] std::span<std::byte> window(std::uint32_t node) const;

  // A transport for node `self` over this segment's rings.
  friend std::unique_ptr<transport> make_shm_transport(std::shared_ptr<shm_segment> segment,
                                                       node_id self);

 private:
  struct header;
  struct node_slot;
  shm_segment(int fd, std::byte* base, std::size_t bytes, fabric_layout layout,
              std::size_t window_bytes, bool shuffle, int report_fd);
  static absl::StatusOr<std::shared_ptr<shm_segment>> initialise(int fd, std::uint32_t size,
                                                                 std::string_view secret,
                                                                 const shm_options& options);
  [[nodiscard]] header& head() const;
  [[nodiscard]] node_slot& slot(std::uint32_t node) const;
  // Where the transports' doorbells and rings start (fabric_layout's offsets count from it).
  [[nodiscard]] std::byte* fabric() const;
  // Sets `rank`'s bit in the header; false when another process had set it already.
  static bool claim(header& h, std::uint32_t rank);
  static absl::Status already_joined(std::uint32_t rank);

  int fd_;
  std::byte* base_;
  std::size_t bytes_;
  fabric_layout layout_;
  std::size_t window_bytes_;
  bool shuffle_;
  int report_fd_;
};

std::unique_ptr<transport> make_shm_transport(std::shared_ptr<shm_segment> segment, node_id self);

}  // namespace iso::comm
