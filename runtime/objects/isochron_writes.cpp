// Object writes inside isochrons (iso::object::start(isochron&, ...)): which calls may join
// one, and how a write is added to it. Under the isotach order a replicated write is an
// isochronous message to every node; added to an open isochron, it is filed at every
// replica at that isochron's logical time, with the isochron's other operations, and every
// replica applies it in the one global order of isochrons.
#include <exception>
#include <string>

#include "absl/strings/str_format.h"
#include "runtime/objects/object_table.hpp"

namespace iso::runtime {

absl::StatusOr<std::uint64_t> object_table::start_in_isochron(
    object_id id, operation_id op_id, std::span<const std::byte> args,
    const absl::Status& isochron_problem) {
  if (absl::Status s = refuse_nested_call(id, op_id); !s.ok()) return s;
  absl::StatusOr<entry*> found = find(id, "object call in an isochron");
  if (!found.ok()) return found.status();
  entry& e = **found;
  absl::StatusOr<const operation*> op_found = find_op(e, op_id);
  if (!op_found.ok()) return op_found.status();
  const operation& op = **op_found;
  const std::string who = absl::StrFormat("object %u (%s), operation %u (%s) in an isochron", e.id,
                                          e.type->name, op.id, op.name);
  if (!isochron_problem.ok()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: %s", who, isochron_problem.message()));
  }
  if (e.automatic) {
    // Even while replicated: it may become a single copy before the isochron takes
    // effect, and its owner would then run the write alone, outside the isochron.
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the object has automatic placement (now %s); only a write of an object created "
        "replicated can join an isochron",
        who, e.where == object_placement::replicated ? "replicated" : "a single copy"));
  }
  if (e.where != object_placement::replicated) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the object is a single copy (on node %u); only a replicated object's writes "
        "can join an isochron",
        who, e.owner));
  }
  if (order_->kind() != order_kind::isotach) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the job's objects order is %s, which is outside logical time; only under the "
        "isotach order (options.object_order, ISO_OBJECT_ORDER=isotach) can a write join an "
        "isochron",
        who, order_name(order_->kind())));
  }
  if (op.kind != operation_kind::write) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the operation is a read; only writes join an isochron (a read runs at once on "
        "this node's replica: call it outside the isochron)",
        who));
  }
  // Every replica would evaluate the guard at the isochron's logical time. Where it is false
  // there, the call would have to wait for a later write, but the isochron is atomic: it
  // takes effect whole at that one time, so it can neither wait for the guard nor take
  // effect without this write.
  for (const alternative& alt : op.alternatives) {
    if (alt.guard) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: the operation is guarded; its guard could be false at the isochron's logical "
          "time, and a false guard cannot block an atomic isochron (it takes effect whole, at "
          "once, or not at all): call %s outside the isochron, where it waits for its guard",
          who, op.name));
    }
  }
  // The caller decodes first: arguments that do not decode go nowhere.
  try {
    (void)op.unmarshal(args);
  } catch (const std::exception& ex) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: arguments of %u bytes: %s", who, args.size(), ex.what()));
  } catch (...) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: arguments of %u bytes: an exception that is not a std::exception", who, args.size()));
  }
  const std::uint64_t call = next_call_;
  absl::StatusOr<std::vector<std::byte>> batch = ordered_batch(op_id, id, call, args);
  if (!batch.ok()) {
    if (batch.status().code() == absl::StatusCode::kOutOfRange) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: %s", who, batch.status().message()));
    }
    return batch.status();
  }
  if (absl::Status s = order_->add(*batch); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("%s: %s", who, s.message()));
  }
  ++next_call_;
  pending_[call] = {.object = id};
  return call;
}

}  // namespace iso::runtime
