#include "tools/trace_view/history_view.hpp"

namespace iso::trace_view {

std::string address_name(const history_view& h, std::uint64_t address) {
  auto it = h.names.find(address);
  return it == h.names.end() ? "@" + std::to_string(address) : it->second;
}

std::string operation_text(const history_view& h, const iso::trace_event& e) {
  const std::string where = address_name(h, e.address);
  const std::string value = std::to_string(e.value);
  switch (e.op) {
    case iso::trace_op::read:
      return "R " + where + "=" + value;
    case iso::trace_op::write:
      return "W " + where + "=" + value;
    case iso::trace_op::sched:
      return "sched " + where;
    case iso::trace_op::assign:
      return "assign " + where + "=" + value;
    case iso::trace_op::message:
      return "message " + std::to_string(e.address);
    case iso::trace_op::fetch_add:
      return "fetch_add " + where + " " + value + "->" + std::to_string(e.stored);
    case iso::trace_op::exchange:
      return "exchange " + where + " " + value + "->" + std::to_string(e.stored);
    case iso::trace_op::compare_exchange:
      return "compare_exchange " + where + " " + value + "->" + std::to_string(e.stored);
  }
  return "?";
}

}  // namespace iso::trace_view
