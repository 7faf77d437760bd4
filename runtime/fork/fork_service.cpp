#include "runtime/fork/fork_service.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "boost/context/fiber.hpp"
#include "iso/error.hpp"
#include "runtime/node_state.hpp"

namespace iso::runtime {
namespace {

// What every fork message starts with (after the plain messages' own header).
struct fork_header {
  std::uint8_t kind = 0;
  std::uint8_t code = 0;         // refused, failed: the status code
  std::uint16_t objects = 0;     // request: the shared objects' ids, after the name
  std::uint32_t name_bytes = 0;  // request: the name, the objects, then the arguments, follow
  std::uint64_t id = 0;          // the forking node's number for the fork
  std::uint64_t types = 0;       // request: iso::pack's digest of the argument types
};

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s)); }

}  // namespace

fork_service::fork_service(event_loop& loop, fiber_scheduler& fibers, comm::node_id self,
                           std::uint32_t nodes, const options& opts)
    : loop_(loop),
      fibers_(fibers),
      plain_(loop, {.credit_timeout = opts.answer_timeout, .in_place = false}, direct_tag::fork),
      self_(self),
      nodes_(nodes),
      options_(opts) {
  // Fork messages are small and taken at once (not in place): their credits go back now.
  plain_.set_receiver(
      [this](comm::node_id source, std::span<const std::byte> bytes, std::uint64_t record) {
        (void)record;
        on_message(source, bytes);
        plain_.free(source, bytes.size());
      });
}

absl::Status fork_service::add(const std::string& name, body fn, std::uint64_t types,
                               std::size_t typed_bytes, bool takes_objects) {
  if (name.empty() || name.size() > kMaxName) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a procedure name of %u bytes on node %u: 1 to %u allowed", name.size(), self_, kMaxName));
  }
  if (!fn) {
    return absl::InvalidArgumentError(
        absl::StrFormat("procedure '%s' on node %u: an empty function", name, self_));
  }
  if (procedures_.contains(name)) {
    return absl::AlreadyExistsError(
        absl::StrFormat("procedure '%s' is registered on node %u already", name, self_));
  }
  procedures_.emplace(name, registered{std::move(fn), types, typed_bytes, takes_objects});
  return absl::OkStatus();
}

std::size_t fork_service::max_arguments() const {
  return plain_messages::max_message_size(loop_.nic()) - sizeof(fork_header) - kMaxName;
}

absl::StatusOr<std::uint64_t> fork_service::fork(comm::node_id target, std::string_view name,
                                                 std::span<const std::byte> arguments,
                                                 std::uint64_t types,
                                                 std::span<const std::uint64_t> objects) {
  if (target >= nodes_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fork of '%s' to node %u: the job has nodes 0..%u", name, target, nodes_ - 1));
  }
  if (name.empty() || name.size() > kMaxName) {
    return absl::InvalidArgumentError(
        absl::StrFormat("fork to node %u: a procedure name of %u bytes (1 to %u allowed)", target,
                        name.size(), kMaxName));
  }
  // The answer could not be waited for, so the request must not go out: the procedure would
  // run on the target while the caller is told that the fork failed.
  if (loop_.progress_forbidden()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "fork of '%s' to node %u inside %s, where node %u may not wait for the answer; nothing "
        "was sent",
        name, target, loop_.forbidden_inside(), self_));
  }
  if (arguments.size() > max_arguments()) {
    return absl::OutOfRangeError(
        absl::StrFormat("fork of '%s' to node %u: arguments of %u bytes, at most %u", name, target,
                        arguments.size(), max_arguments()));
  }
  const std::size_t object_bytes = objects.size() * sizeof(std::uint64_t);
  if (objects.size() > std::numeric_limits<std::uint16_t>::max() ||
      arguments.size() + object_bytes > max_arguments()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "fork of '%s' to node %u: %u shared objects (%u bytes) beside arguments of %u bytes, at "
        "most %u bytes together",
        name, target, objects.size(), object_bytes, arguments.size(), max_arguments()));
  }
  const std::uint64_t id = next_id_++;
  pending& entry = pending_[id];
  entry.target = target;
  entry.name = std::string(name);
  const fork_header header{.kind = static_cast<std::uint8_t>(kind::request),
                           .objects = static_cast<std::uint16_t>(objects.size()),
                           .name_bytes = static_cast<std::uint32_t>(name.size()),
                           .id = id,
                           .types = types};
  std::vector<std::byte> message;
  message.reserve(sizeof(header) + name.size() + object_bytes + arguments.size());
  const std::span<const std::byte> pieces[] = {std::as_bytes(std::span(&header, 1)), bytes_of(name),
                                               std::as_bytes(objects), arguments};
  for (const std::span<const std::byte> piece : pieces) {
    message.insert(message.end(), piece.begin(), piece.end());
  }
  if (absl::Status s = plain_.send(target, message); !s.ok()) {
    pending_.erase(id);
    return s;
  }
  const pending& p = pending_.at(id);
  absl::StatusOr<bool> answered = loop_.wait_until(absl::Now() + options_.answer_timeout,
                                                   [&] { return p.answer != kind::request; });
  if (!answered.ok() || !*answered) {
    pending_.erase(id);  // an answer that still comes is dropped
    if (!answered.ok()) return answered.status();
    return absl::DeadlineExceededError(absl::StrFormat(
        "fork of '%s' to node %u: no answer within %s (node %u is not making progress: no call "
        "into the runtime there)",
        name, target, absl::FormatDuration(options_.answer_timeout), target));
  }
  if (p.answer == kind::refused) {
    absl::Status refused = p.outcome;
    pending_.erase(id);
    return refused;
  }
  return id;
}

absl::Status fork_service::join(std::uint64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "join of fork %u on node %u, which is not waiting to be joined", id, self_));
  }
  const pending& p = it->second;
  if (absl::Status s = loop_.wait_for([&] { return p.returned(); }); !s.ok()) {
    return s;
  }
  absl::Status outcome = p.outcome;
  pending_.erase(id);
  return outcome;
}

void fork_service::detach(std::uint64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  if (it->second.returned()) {
    if (it->second.answer == kind::failed) unjoined_failures_.push_back(it->second.outcome);
    pending_.erase(it);
    return;
  }
  it->second.detached = true;
}

absl::Status fork_service::send(comm::node_id to, kind k, std::uint64_t id,
                                const absl::Status& outcome) {
  const fork_header header{.kind = static_cast<std::uint8_t>(k),
                           .code = static_cast<std::uint8_t>(outcome.code()),
                           .id = id};
  std::vector<std::byte> message(sizeof(header));
  std::memcpy(message.data(), &header, sizeof(header));
  const std::span<const std::byte> text =
      bytes_of(std::string_view(outcome.message().data(), outcome.message().size()));
  message.insert(message.end(), text.begin(), text.end());
  return plain_.send(to, message);
}

void fork_service::on_message(comm::node_id source, std::span<const std::byte> bytes) {
  fork_header header;
  if (bytes.size() < sizeof(header)) {
    loop_.fail(absl::InvalidArgumentError(
        absl::StrFormat("malformed fork message of %u bytes from node %u", bytes.size(), source)));
    return;
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  const std::span<const std::byte> rest = bytes.subspan(sizeof(header));
  const auto k = static_cast<kind>(header.kind);
  if (k == kind::request) {
    const std::size_t object_bytes = std::size_t{header.objects} * sizeof(std::uint64_t);
    if (header.name_bytes > rest.size() || object_bytes > rest.size() - header.name_bytes) {
      loop_.fail(absl::InvalidArgumentError(absl::StrFormat(
          "malformed fork request from node %u: a name of %u bytes and %u objects in %u bytes",
          source, header.name_bytes, header.objects, rest.size())));
      return;
    }
    request r;
    r.source = source;
    r.id = header.id;
    r.types = header.types;
    r.name.assign(reinterpret_cast<const char*>(rest.data()), header.name_bytes);
    r.objects.resize(header.objects);
    if (object_bytes != 0) {
      std::memcpy(r.objects.data(), rest.data() + header.name_bytes, object_bytes);
    }
    r.arguments.assign(rest.begin() + static_cast<std::ptrdiff_t>(header.name_bytes + object_bytes),
                       rest.end());
    ++serving_;
    const std::string fiber_name = absl::StrFormat("fork '%s' from node %u", r.name, source);
    // A fiber of its own: answering may wait for credits, which a delivery must not.
    fibers_.spawn(fiber_name, [this, r = std::move(r)] { serve(r); });
    return;
  }
  if (k == kind::stop) {
    stopped_ = true;
    stopped_by_ = source;
    return;
  }
  auto it = pending_.find(header.id);
  if (it == pending_.end()) return;  // a fork that nobody waits for any more
  pending& p = it->second;
  p.answer = k;
  if (k == kind::refused || k == kind::failed) {
    p.outcome = absl::Status(static_cast<absl::StatusCode>(header.code),
                             std::string(reinterpret_cast<const char*>(rest.data()), rest.size()));
  }
  if (p.detached && (k == kind::ended || k == kind::failed || k == kind::refused)) {
    if (k == kind::failed) unjoined_failures_.push_back(p.outcome);
    pending_.erase(it);
  }
}

absl::Status fork_service::check(const request& r) const {
  if (stopped_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "fork of '%s' to node %u: node %u has stopped serving forks (main returned on node %u)",
        r.name, self_, self_, stopped_by_));
  }
  auto it = procedures_.find(r.name);
  if (it == procedures_.end()) {
    std::vector<std::string> known;
    for (const auto& [name, proc] : procedures_) known.push_back("'" + name + "'");
    std::sort(known.begin(), known.end());
    return absl::NotFoundError(absl::StrFormat(
        "fork of '%s' to node %u: no procedure '%s' is registered on node %u (it has %s)", r.name,
        self_, r.name, self_, known.empty() ? "none" : absl::StrJoin(known, ", ")));
  }
  const registered& p = it->second;
  if (!r.objects.empty() && !p.takes_objects) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fork of '%s' to node %u: %u shared object(s) handed to '%s', which takes none (register "
        "it as a procedure that takes objects)",
        r.name, self_, r.objects.size(), r.name));
  }
  if (p.types == 0) return absl::OkStatus();  // it takes any bytes
  if (r.arguments.size() != p.typed_bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("fork of '%s' to node %u: arguments of %u bytes, but '%s' takes %u", r.name,
                        self_, r.arguments.size(), r.name, p.typed_bytes));
  }
  if (r.types != 0 && r.types != p.types) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fork of '%s' to node %u: arguments packed from other types than '%s' takes", r.name, self_,
        r.name));
  }
  return absl::OkStatus();
}

void fork_service::serve(const request& r) {
  struct served_one {
    std::size_t& count;
    ~served_one() { --count; }
  } done{serving_};
  absl::Status verdict = check(r);
  if (verdict.ok()) verdict = attach_objects(r);
  if (!verdict.ok()) {
    detail::throw_if_error(send(r.source, kind::refused, r.id, verdict));
    return;
  }
  detail::throw_if_error(send(r.source, kind::accepted, r.id, absl::OkStatus()));
  absl::Status outcome;
  const std::string where = absl::StrFormat("procedure '%s' forked to node %u", r.name, self_);
  try {
    procedures_.at(r.name).fn(*node_, r.arguments, r.objects);
  } catch (const boost::context::detail::forced_unwind&) {
    throw;
  } catch (const iso::error& e) {
    outcome = absl::Status(static_cast<absl::StatusCode>(e.code()),
                           absl::StrFormat("%s ended with an exception: %s", where, e.what()));
  } catch (const std::exception& e) {
    outcome =
        absl::AbortedError(absl::StrFormat("%s ended with an exception: %s", where, e.what()));
  } catch (...) {
    outcome = absl::AbortedError(
        absl::StrFormat("%s ended with an exception that is not a std::exception", where));
  }
  if (settle_) {
    if (absl::Status s = settle_(); !s.ok() && outcome.ok()) outcome = s;
  }
  detail::throw_if_error(send(r.source, outcome.ok() ? kind::ended : kind::failed, r.id, outcome));
}

absl::Status fork_service::attach_objects(const request& r) {
  if (r.objects.empty()) return absl::OkStatus();
  detail::node_state& state = detail::node_state::of(*node_);
  // Half of the forker's wait for the answer, which began before this: a creation still on
  // its way here ends in this node's error, naming the object, not in the forker's
  // "no answer".
  const absl::Time deadline = absl::Now() + options_.answer_timeout / 2;
  for (const std::uint64_t id : r.objects) {
    // A node without an object table has taken part in no object creation: the id names
    // nothing here (building the table now would not be collective).
    absl::Status attached =
        state.has_objects()
            ? state.objects().attach(id, std::max(deadline - absl::Now(), absl::ZeroDuration()))
            : absl::InvalidArgumentError(
                  absl::StrFormat("object %u does not exist on node %u", id, self_));
    if (!attached.ok()) {
      return absl::Status(attached.code(),
                          absl::StrFormat("fork of '%s' to node %u: shared object %u: %s", r.name,
                                          self_, id, attached.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status fork_service::stop_serving_everywhere() {
  for (comm::node_id n = 0; n < nodes_; ++n) {
    if (n == self_) continue;
    if (absl::Status s = send(n, kind::stop, 0, absl::OkStatus()); !s.ok()) return s;
  }
  stopped_ = true;
  stopped_by_ = self_;
  return loop_.wait_for([this] { return serving_ == 0; });
}

absl::Status fork_service::serve_until_stopped() {
  return loop_.wait_for([this] { return stopped_ && serving_ == 0; });
}

absl::Status fork_service::await_processes() {
  const auto running_elsewhere = [this] {
    return std::any_of(pending_.begin(), pending_.end(),
                       [](const auto& entry) { return !entry.second.returned(); });
  };
  absl::StatusOr<bool> ended = loop_.wait_until(
      absl::Now() + options_.answer_timeout, [&] { return serving_ == 0 && !running_elsewhere(); });
  if (!ended.ok()) return ended.status();
  if (!*ended) {
    std::string elsewhere;
    for (const auto& [id, p] : pending_) {
      if (!p.returned()) {
        absl::StrAppendFormat(&elsewhere, " '%s' on node %u", p.name, p.target);
      }
    }
    return absl::DeadlineExceededError(absl::StrFormat(
        "node %u: the body returned while processes ran on for %s: %u forked to it, and those "
        "it forked and did not join:%s",
        self_, absl::FormatDuration(options_.answer_timeout), serving_,
        elsewhere.empty() ? " none" : elsewhere));
  }
  // Handles still held (outside the body) are not joined either.
  for (const auto& [id, p] : pending_) {
    if (p.answer == kind::failed) unjoined_failures_.push_back(p.outcome);
  }
  pending_.clear();
  if (unjoined_failures_.empty()) return absl::OkStatus();
  const absl::Status& first = unjoined_failures_.front();
  return absl::Status(first.code(),
                      absl::StrFormat("node %u: %u process(es) it forked and did not join "
                                      "failed; the first: %s",
                                      self_, unjoined_failures_.size(), first.message()));
}

}  // namespace iso::runtime
