#include "comm/fault_injection.hpp"

#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace iso::comm {
namespace {

class faulty_transport final : public transport {
 public:
  faulty_transport(std::unique_ptr<transport> inner, const fault_plan& plan)
      : transport(inner->self(), inner->size()), inner_(std::move(inner)), plan_(plan) {}

  [[nodiscard]] std::size_t max_packet_size() const override { return inner_->max_packet_size(); }

  absl::Status send(node_id destination, std::span<const byte_span> pieces) override {
    if (destination != plan_.destination || done_) return inner_->send(destination, pieces);
    if (!held_.empty()) {  // reorder, after the packet was held back
      if (!followed_) {
        absl::Status s = inner_->send(destination, pieces);
        if (s.ok()) {
          followed_ = true;
          flush_held();
        }
        return s;
      }
      flush_held();
      if (!held_.empty()) return absl::UnavailableError("the held-back packet goes first");
      return inner_->send(destination, pieces);
    }
    if (size_of(pieces) < plan_.min_bytes) return inner_->send(destination, pieces);
    if (sent_ != plan_.packet) {
      absl::Status s = inner_->send(destination, pieces);
      if (s.ok()) ++sent_;
      return s;
    }
    if (plan_.what == fault_plan::kind::reorder) {  // keep it back; say it went
      held_ = gather(pieces);
      return absl::OkStatus();
    }
    std::vector<std::byte> copy = gather(pieces);
    if (!copy.empty()) copy.back() ^= std::byte{0x5a};
    absl::Status s = inner_->send(destination, byte_span(copy));
    if (s.ok()) done_ = true;
    return s;
  }

  absl::Status poll(packet_upcall upcall, std::size_t& handled, std::size_t budget) override {
    flush_held();
    return inner_->poll(upcall, handled, budget);
  }
  void wait(absl::Duration timeout, absl::FunctionRef<bool()> also_ready) override {
    inner_->wait(timeout, also_ready);
  }
  void wake() override { inner_->wake(); }
  void announce_idle(bool idle) override { inner_->announce_idle(idle); }
  [[nodiscard]] std::optional<std::uint32_t> busy_neighbours(std::uint32_t enough) const override {
    return inner_->busy_neighbours(enough);
  }
  void defer_wakeups() override { inner_->defer_wakeups(); }
  void wake_deferred() override { inner_->wake_deferred(); }
  [[nodiscard]] transport_counters counters() const override { return inner_->counters(); }

 protected:
  void release_held(node_id, std::uint64_t) override {}  // packets are the inner transport's

 private:
  static std::size_t size_of(std::span<const byte_span> pieces) {
    std::size_t n = 0;
    for (const byte_span& p : pieces) n += p.size();
    return n;
  }
  static std::vector<std::byte> gather(std::span<const byte_span> pieces) {
    std::vector<std::byte> out;
    for (const byte_span& p : pieces) out.insert(out.end(), p.begin(), p.end());
    return out;
  }
  // Sends the held-back packet once the one after it has gone.
  void flush_held() {
    if (held_.empty() || !followed_) return;
    if (inner_->send(plan_.destination, byte_span(held_)).ok()) {
      held_.clear();
      done_ = true;
    }
  }

  std::unique_ptr<transport> inner_;
  fault_plan plan_;
  std::uint64_t sent_ = 0;
  std::vector<std::byte> held_;
  bool followed_ = false;
  bool done_ = false;
};

}  // namespace

absl::StatusOr<fault_plan> parse_fault_plan(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  fault_plan plan;
  std::uint64_t destination = 0;
  if ((parts.size() != 3 && parts.size() != 4) || !absl::SimpleAtoi(parts[1], &destination) ||
      (parts.size() == 4 && !absl::SimpleAtoi(parts[3], &plan.min_bytes)) ||
      !absl::SimpleAtoi(parts[2], &plan.packet) || destination > 0xffffffffu ||
      (parts[0] != "reorder" && parts[0] != "corrupt")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fault plan '%s': expected reorder:DEST:N[:BYTES] or corrupt:DEST:N[:BYTES]", text));
  }
  plan.what = parts[0] == "reorder" ? fault_plan::kind::reorder : fault_plan::kind::corrupt;
  plan.destination = static_cast<node_id>(destination);
  return plan;
}

std::unique_ptr<transport> with_faults(std::unique_ptr<transport> inner, const fault_plan& plan) {
  return std::make_unique<faulty_transport>(std::move(inner), plan);
}

}  // namespace iso::comm
