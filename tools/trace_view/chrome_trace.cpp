#include "tools/trace_view/chrome_trace.hpp"

#include <cstdio>

#include "tools/trace_view/isochron_order.hpp"

namespace iso::trace_view {
namespace {

constexpr int kIssuedTrack = 1;
constexpr int kExecutedTrack = 2;
constexpr long kSlot = 100;  // us of trace time per isochron
constexpr long kStep = 10;   // us per operation inside it

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

class writer {
 public:
  void add(const std::string& event) {
    out_ += first_ ? "\n  " : ",\n  ";
    out_ += event;
    first_ = false;
  }
  std::string finish(const std::string& title) {
    return "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"title\": " + json_string(title) +
           "},\n \"traceEvents\": [" + out_ + "\n]}\n";
  }

 private:
  std::string out_;
  bool first_ = true;
};

std::string metadata(const char* what, std::uint32_t pid, int tid, const std::string& name) {
  return std::string("{\"ph\": \"M\", \"name\": \"") + what +
         "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) +
         ", \"args\": {\"name\": " + json_string(name) + "}}";
}

}  // namespace

std::string chrome_trace_json(const history_view& h) {
  writer w;
  for (std::uint32_t n = 0; n < h.nodes; ++n) {
    w.add(metadata("process_name", n, 0, "node " + std::to_string(n)));
    w.add(metadata("thread_name", n, kIssuedTrack, "issued"));
    w.add(metadata("thread_name", n, kExecutedTrack, "executed"));
  }
  long flow = 0;
  long slot = 0;
  for (const drawn_isochron& iso : isochrons_in_order(h)) {
    const long start = slot++ * kSlot;
    const std::string label =
        "N" + std::to_string(iso.issuer) + "#" + std::to_string(iso.issue_rank);
    w.add("{\"ph\": \"X\", \"name\": " + json_string("isochron " + label) +
          ", \"cat\": \"isochron\", \"pid\": " + std::to_string(iso.issuer) +
          ", \"tid\": " + std::to_string(kIssuedTrack) + ", \"ts\": " + std::to_string(start) +
          ", \"dur\": " + std::to_string(kSlot - kStep) +
          ", \"args\": {\"pulse\": " + std::to_string(iso.pulse) + "}}");
    for (const auto& [node, events] : iso.at_node) {
      long k = 0;
      for (const iso::trace_event* e : events) {
        const long ts = start + k++ * kStep;
        w.add("{\"ph\": \"X\", \"name\": " + json_string(operation_text(h, *e)) +
              ", \"cat\": \"operation\", \"pid\": " + std::to_string(node) +
              ", \"tid\": " + std::to_string(kExecutedTrack) + ", \"ts\": " + std::to_string(ts) +
              ", \"dur\": " + std::to_string(kStep - 1) + ", \"args\": {\"isochron\": " +
              json_string(label) + ", \"pulse\": " + std::to_string(e->pulse) + ", \"op_index\": " +
              std::to_string(e->op_index) + ", \"address\": " + std::to_string(e->address) +
              ", \"value\": " + std::to_string(e->value) +
              ", \"same_host_read\": " + (e->direct ? "true" : "false") + "}}");
        if (node == iso.issuer) continue;
        const std::string id = std::to_string(++flow);
        w.add("{\"ph\": \"s\", \"name\": \"issue\", \"cat\": \"flow\", \"id\": " + id +
              ", \"pid\": " + std::to_string(iso.issuer) + ", \"tid\": " +
              std::to_string(kIssuedTrack) + ", \"ts\": " + std::to_string(start) + "}");
        w.add(
            "{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"issue\", \"cat\": \"flow\", \"id\": " + id +
            ", \"pid\": " + std::to_string(node) + ", \"tid\": " + std::to_string(kExecutedTrack) +
            ", \"ts\": " + std::to_string(ts) + "}");
      }
    }
  }
  return w.finish(h.title + (h.verdict.empty() ? "" : ": " + h.verdict));
}

}  // namespace iso::trace_view
