// Moving large runs of values between a node's private arrays and isotach memory, in
// isochrons small enough for the NIC (an isochron has a size limit; see isochron.hpp).
//
//   iso::apps::write_batch out(node);
//   for (...) out.write(matrix, row * cols + first, std::span(tile));  // many blocks
//   out.flush();                                  // or at scope end
//   iso::apps::read_into(node, matrix, begin, std::span(mine));  // mine.size() values
#pragma once

#include <algorithm>
#include <cstddef>
#include <iso/iso.hpp>
#include <optional>
#include <span>
#include <vector>

namespace iso::apps {

// Variables one isochron of a batch carries: well inside the NIC's limit for one isochron
// and the flow-control window, large enough that the per-isochron cost disappears.
inline constexpr std::size_t kBatchVariables = 8192;

// Block writes gathered into as few isochrons as the size limit allows. Writes of one
// batch take effect in the order written (isochrons of one node execute in issue order).
class write_batch {
 public:
  explicit write_batch(node& n, std::size_t max_variables = kBatchVariables)
      : node_(n), max_variables_(max_variables) {}
  write_batch(const write_batch&) = delete;
  write_batch& operator=(const write_batch&) = delete;
  ~write_batch() { flush(); }

  // Writes `values` to `a` from index `first`, split across isochrons as needed.
  template <shared_scalar T>
  void write(shared_array<T> a, std::size_t first, std::span<const T> values) {
    while (!values.empty()) {
      if (open_ && used_ >= max_variables_) flush();
      if (!open_) {
        isochron_.emplace(node_);
        open_ = true;
      }
      const std::size_t take = std::min(values.size(), max_variables_ - used_);
      isochron_->write(a, first, values.first(take));
      used_ += take;
      first += take;
      values = values.subspan(take);
    }
  }

  // Issues the open isochron, if any.
  void flush() {
    if (!open_) return;
    isochron_->end();
    isochron_.reset();
    open_ = false;
    used_ = 0;
  }

 private:
  node& node_;
  std::size_t max_variables_;
  std::optional<isochron> isochron_;
  bool open_ = false;
  std::size_t used_ = 0;
};

// Reads out.size() variables of `a` from `first` into `out`, as block reads of at most
// kBatchVariables each, all issued before the first wait.
template <shared_scalar T>
void read_into(node& n, shared_array<T> a, std::size_t first, std::span<T> out) {
  std::vector<block_value<T>> parts;
  parts.reserve(out.size() / kBatchVariables + 1);
  for (std::size_t done = 0; done < out.size(); done += kBatchVariables) {
    isochron iso(n);
    parts.push_back(iso.read(a, first + done, std::min(kBatchVariables, out.size() - done)));
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::size_t done = i * kBatchVariables;
    parts[i].get(out.subspan(done, std::min(kBatchVariables, out.size() - done)));
  }
}

// Block reads gathered into few isochrons, each landing in a buffer of the caller's when
// wait() returns. The buffers must stay alive (and unmoved) until then.
template <shared_scalar T>
class read_batch {
 public:
  explicit read_batch(node& n, std::size_t max_variables = kBatchVariables)
      : node_(n), max_variables_(max_variables) {}
  read_batch(const read_batch&) = delete;
  read_batch& operator=(const read_batch&) = delete;

  // Reads out.size() variables of `a` from `first` into `out`.
  void read(shared_array<T> a, std::size_t first, std::span<T> out) {
    while (!out.empty()) {
      if (open_ && used_ >= max_variables_) end_isochron();
      if (!open_) {
        isochron_.emplace(node_);
        open_ = true;
      }
      const std::size_t take = std::min(out.size(), max_variables_ - used_);
      pending_.push_back({isochron_->read(a, first, take), out.first(take)});
      used_ += take;
      first += take;
      out = out.subspan(take);
    }
  }

  // Issues what is still open and waits for every value.
  void wait() {
    end_isochron();
    for (pending& p : pending_) p.value.get(p.out);
    pending_.clear();
  }

 private:
  struct pending {
    block_value<T> value;
    std::span<T> out;
  };
  void end_isochron() {
    if (!open_) return;
    isochron_->end();
    isochron_.reset();
    open_ = false;
    used_ = 0;
  }
  node& node_;
  std::size_t max_variables_;
  std::optional<isochron> isochron_;
  bool open_ = false;
  std::size_t used_ = 0;
  std::vector<pending> pending_;
};

}  // namespace iso::apps
