#include "comm/ucx/ucx_transport.hpp"

#include <poll.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <set>
#include <unordered_map>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/check.hpp"
#include "base/log.hpp"
#include "comm/ucx/wire_format.hpp"
#include "comm/ucx/worker_address.hpp"

namespace iso::comm {
namespace {

using ucx_detail::credit_header;
using ucx_detail::kCreditAm;
using ucx_detail::kPacketAm;
using ucx_detail::packet_header;

constexpr std::size_t kMaxPacket = std::size_t{1} << 20;
// Bytes (payload plus header) a sender may have sent to one peer that the peer has not yet
// handed up and released. Bounds the memory a slow receiver costs, per sender.
constexpr std::uint64_t kWindowBytes = std::uint64_t{4} << 20;
// Sends to one peer that UCX has queued rather than done at once. Beyond this the path is
// congested below the credit window (a shared-memory FIFO or socket is full), and queueing
// more in UCX only costs it time: send() says Unavailable instead.
constexpr std::uint32_t kMaxQueuedSends = 64;
// A receiver returns credit once this much was released since its last credit message.
constexpr std::uint64_t kCreditBatch = kWindowBytes / 4;
// How long a missing packet may stay missing while later ones from its sender have arrived.
constexpr absl::Duration kGapTimeout = absl::Seconds(5);
// How long closing the endpoints may take before the transport gives up on them.
constexpr absl::Duration kCloseTimeout = absl::Seconds(2);
// Send buffers up to this size are recycled instead of freed.
constexpr std::size_t kPooledBuffer = 4096;
// Passes of ucp_worker_progress in wait() before it gives up on arming and returns.
constexpr int kMaxArmAttempts = 64;

// What a packet costs its sender's window: its bytes plus the header, so that empty packets
// are bounded too.
constexpr std::uint64_t cost_of(std::size_t payload) { return payload + sizeof(packet_header); }
constexpr std::uint64_t kMaxParked = kWindowBytes / sizeof(packet_header) + 1;

std::string ucx_error(ucs_status_t status) { return ucs_status_string(status); }

// UCX takes any key without complaint (one it does not know is kept for its transports and
// then ignored), so a misspelt setting would do nothing, silently. A key is accepted if the
// UCP layer lists it, or if it is named after one of UCX's transport components, whose
// settings UCP does not list.
bool ucx_knows_setting(const ucp_config_t* config, const std::string& key) {
  static constexpr std::string_view kComponentPrefixes[] = {
      "TCP_",          "SYSV_",     "POSIX_",   "CMA_",   "KNEM_",  "XPMEM_",    "SELF_",
      "MM_",           "IB_",       "RC_",      "UD_",    "DC_",    "CUDA_",     "GDR_",
      "ROCM_",         "SOCKADDR_", "RDMA_CM_", "UCT_",   "UCS_",   "LOG_",      "MEMTYPE_",
      "RCACHE_",       "VFS_",      "MPOOL_",   "ASYNC_", "STATS_", "MEMTRACK_", "PROFILE_",
      "HANDLE_ERRORS", "ERROR_",    "GDB_",     "DEBUG_", "MODULE_"};
  for (std::string_view prefix : kComponentPrefixes) {
    if (key.starts_with(prefix)) return true;
  }
  char* text = nullptr;
  std::size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  if (stream == nullptr) return true;  // cannot tell; let UCX have it
  ucp_config_print(
      config, stream, nullptr,
      static_cast<ucs_config_print_flags_t>(UCS_CONFIG_PRINT_CONFIG | UCS_CONFIG_PRINT_HIDDEN));
  std::fclose(stream);
  const bool known =
      std::string_view(text, length).find("UCX_" + key + "=") != std::string_view::npos;
  std::free(text);
  return known;
}

}  // namespace

// One packet that arrived from a peer: where its bytes are and who owns them.
struct ucx_arrival {
  bool present = false;   // the slot of a sequence number not yet arrived is empty
  bool complete = false;  // a rendezvous packet is present before its bytes are
  std::size_t length = 0;
  const std::byte* bytes = nullptr;
  void* ucx_data = nullptr;            // UCX's buffer, kept until ucp_am_data_release
  void* rndv_descriptor = nullptr;     // a rendezvous not yet started
  std::unique_ptr<std::byte[]> owned;  // our copy, or the rendezvous target
};

struct ucx_send_record {
  ucx_transport::state* owner = nullptr;
  node_id destination = 0;
  union {
    packet_header packet;
    credit_header credit;
  } header{};
  std::unique_ptr<std::byte[]> buffer;
  std::size_t capacity = 0;
};

struct ucx_transport::state {
  struct outbound {
    ucp_ep_h ep = nullptr;
    std::uint64_t next_sequence = 0;
    std::uint64_t sent_bytes = 0;      // costs of all packets sent
    std::uint64_t credited_bytes = 0;  // of which the peer has released this much
    std::uint32_t queued_sends = 0;    // handed to UCX and not yet done
  };
  struct inbound {
    std::uint64_t next_sequence = 0;                      // the sequence number of slots.front()
    std::deque<ucx_arrival> slots;                        // arrived or awaited, in sequence order
    std::unordered_map<std::uint64_t, ucx_arrival> held;  // by sequence number
    std::uint64_t released_bytes = 0;
    std::uint64_t credited_bytes = 0;  // released_bytes when credit was last returned
    absl::Time gap_since = absl::InfiniteFuture();
  };
  struct rndv_receive {
    state* owner;
    node_id source;
    std::uint64_t sequence;
  };

  node_id self = 0;
  node_id size = 0;
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  int event_fd = -1;
  std::string address;
  bool connected = false;
  std::vector<outbound> out;
  std::vector<inbound> in;
  std::vector<std::pair<node_id, std::uint64_t>> rndv_to_start;
  std::set<ucx_send_record*> sends_in_flight;
  std::vector<std::unique_ptr<ucx_send_record>> spare_records;
  std::set<void*> receives_in_flight;  // rendezvous requests
  absl::Status error;                  // the first thing that went wrong in a callback
  std::atomic<bool> woken{false};
  transport_counters counters;
  std::uint32_t next_source = 0;

  ~state();
  void note_error(absl::Status status) {
    if (error.ok()) error = std::move(status);
  }
  std::unique_ptr<ucx_send_record> take_record(std::size_t bytes);
  void recycle(std::unique_ptr<ucx_send_record> record);
  absl::Status post(ucx_send_record* record, unsigned id, std::size_t header_bytes,
                    const void* payload, std::size_t payload_bytes);
  void progress();
  // Starts the receives of the rendezvous packets that arrived; whether there were any.
  bool start_rendezvous();
  void release(node_id source, ucx_arrival& arrival);
  [[nodiscard]] bool anything_deliverable() const;
  void close_endpoints();

  static ucs_status_t on_packet(void* arg, const void* header, std::size_t header_length,
                                void* data, std::size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t on_credit(void* arg, const void* header, std::size_t header_length,
                                void* data, std::size_t length, const ucp_am_recv_param_t* param);
  static void on_send_done(void* request, ucs_status_t status, void* user_data);
  static void on_rendezvous_done(void* request, ucs_status_t status, std::size_t length,
                                 void* user_data);
};

namespace {

// A UCX object released by a UCX function at scope exit (for the error paths of create()).
template <typename T, void (*Release)(T)>
struct ucx_guard {
  T object = nullptr;
  ~ucx_guard() {
    if (object != nullptr) Release(object);
  }
  T take() { return std::exchange(object, nullptr); }
};

}  // namespace

absl::StatusOr<std::unique_ptr<ucx_transport>> ucx_transport::create(node_id rank, node_id size,
                                                                     const ucx_options& options) {
  if (size == 0 || rank >= size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ucx transport for node %u of a job of %u nodes", rank, size));
  }
  ucp_config_t* raw_config = nullptr;
  if (ucs_status_t st = ucp_config_read(nullptr, nullptr, &raw_config); st != UCS_OK) {
    return absl::UnavailableError(
        absl::StrFormat("ucx cannot read its configuration: %s", ucx_error(st)));
  }
  ucx_guard<ucp_config_t*, ucp_config_release> config{raw_config};
  for (const auto& [key, value] : options.config) {
    if (!ucx_knows_setting(config.object, key)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ucx has no setting UCX_%s (given the value %s)", key, value));
    }
    if (ucs_status_t st = ucp_config_modify(config.object, key.c_str(), value.c_str());
        st != UCS_OK) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ucx rejects UCX_%s=%s: %s", key, value, ucx_error(st)));
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.estimated_num_eps = size;
  ucx_guard<ucp_context_h, ucp_cleanup> context;
  if (ucs_status_t st = ucp_init(&params, config.object, &context.object); st != UCS_OK) {
    return absl::UnavailableError(
        absl::StrFormat("ucx cannot make a context for node %u: %s", rank, ucx_error(st)));
  }
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;  // the NIC thread owns the port
  ucx_guard<ucp_worker_h, ucp_worker_destroy> worker;
  if (ucs_status_t st = ucp_worker_create(context.object, &worker_params, &worker.object);
      st != UCS_OK) {
    return absl::UnavailableError(
        absl::StrFormat("ucx cannot make a worker for node %u: %s", rank, ucx_error(st)));
  }
  auto s = std::make_unique<state>();
  s->self = rank;
  s->size = size;
  if (ucs_status_t st = ucp_worker_get_efd(worker.object, &s->event_fd); st != UCS_OK) {
    return absl::UnavailableError(absl::StrFormat(
        "ucx gives node %u no event descriptor to sleep on: %s", rank, ucx_error(st)));
  }
  ucp_address_t* address = nullptr;
  std::size_t address_length = 0;
  if (ucs_status_t st = ucp_worker_get_address(worker.object, &address, &address_length);
      st != UCS_OK) {
    return absl::UnavailableError(
        absl::StrFormat("ucx has no worker address for node %u: %s", rank, ucx_error(st)));
  }
  s->address = ucx_detail::seal_worker_address(
      rank, std::span(reinterpret_cast<const std::byte*>(address), address_length));
  ucp_worker_release_address(worker.object, address);

  for (auto [id, callback] :
       {std::pair{kPacketAm, &state::on_packet}, std::pair{kCreditAm, &state::on_credit}}) {
    ucp_am_handler_param_t handler{};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                         UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    handler.id = id;
    handler.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
    handler.cb = callback;
    handler.arg = s.get();
    if (ucs_status_t st = ucp_worker_set_am_recv_handler(worker.object, &handler); st != UCS_OK) {
      return absl::UnavailableError(absl::StrFormat(
          "ucx refuses an active message handler on node %u: %s", rank, ucx_error(st)));
    }
  }
  s->out.resize(size);
  s->in = std::vector<state::inbound>(size);  // not resize(): inbound is move-only
  s->worker = worker.take();
  s->context = context.take();
  return std::unique_ptr<ucx_transport>(new ucx_transport(rank, size, std::move(s)));
}

ucx_transport::ucx_transport(node_id rank, node_id size, std::unique_ptr<state> s)
    : transport(rank, size), state_(std::move(s)) {}

ucx_transport::~ucx_transport() = default;

ucx_transport::state::~state() {
  if (worker == nullptr) return;
  close_endpoints();
  for (inbound& from : in) {
    for (ucx_arrival& a : from.slots) {
      if (a.ucx_data != nullptr) ucp_am_data_release(worker, a.ucx_data);
      if (a.rndv_descriptor != nullptr) ucp_am_data_release(worker, a.rndv_descriptor);
    }
    // Held packets must not outlive the transport (transport.hpp); their memory goes now.
    for (auto& [sequence, a] : from.held) {
      if (a.ucx_data != nullptr) ucp_am_data_release(worker, a.ucx_data);
    }
  }
  const std::set<void*> receiving = receives_in_flight;  // cancelling may erase from it
  for (void* request : receiving) ucp_request_cancel(worker, request);
  ucp_worker_destroy(worker);
  ucp_cleanup(context);
  // Whatever UCX did not complete before the worker went is ours to free.
  for (ucx_send_record* record : sends_in_flight) delete record;
}

void ucx_transport::state::close_endpoints() {
  std::vector<std::pair<node_id, void*>> closing;
  for (node_id peer = 0; peer < out.size(); ++peer) {
    if (out[peer].ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = 0;  // flush what was sent; FORCE needs peer error handling, which we lack
    ucs_status_ptr_t request = ucp_ep_close_nbx(out[peer].ep, &param);
    out[peer].ep = nullptr;
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) closing.emplace_back(peer, request);
  }
  const absl::Time deadline = absl::Now() + kCloseTimeout;
  auto all_closed = [&] {
    return std::all_of(closing.begin(), closing.end(), [](const auto& c) {
      return ucp_request_check_status(c.second) != UCS_INPROGRESS;
    });
  };
  while (!all_closed() && absl::Now() < deadline) ucp_worker_progress(worker);
  for (const auto& [peer, request] : closing) {
    if (ucp_request_check_status(request) == UCS_INPROGRESS) {
      ISO_LOG(comm, warn, "node %u: closing the ucx endpoint to node %u took longer than %s", self,
              peer, absl::FormatDuration(kCloseTimeout));
    }
    ucp_request_free(request);
  }
}

std::string ucx_transport::worker_address() const { return state_->address; }

absl::Status ucx_transport::connect(std::span<const std::string> addresses) {
  state& s = *state_;
  if (s.connected) {
    return absl::FailedPreconditionError(
        absl::StrFormat("node %u's ucx transport is already connected", self()));
  }
  if (addresses.size() != size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "connect got %u addresses for a job of %u nodes", addresses.size(), size()));
  }
  // Every address is checked before any endpoint exists, so a bad one leaves nothing behind.
  std::vector<std::string> inner(size());
  for (node_id peer = 0; peer < size(); ++peer) {
    absl::StatusOr<std::string_view> opened =
        ucx_detail::open_worker_address(peer, addresses[peer]);
    if (!opened.ok()) return opened.status();
    inner[peer] = std::string(*opened);  // a copy: UCX may expect its address aligned
  }
  // Staggered, so that a large job does not have every node connect to node 0 first.
  for (node_id i = 0; i < size(); ++i) {
    const node_id peer = (self() + i) % size();
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.address = reinterpret_cast<const ucp_address_t*>(inner[peer].data());
    // Not PEER: on UCX 1.13 that mode turns the shared-memory lanes off.
    params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    if (ucs_status_t st = ucp_ep_create(s.worker, &params, &s.out[peer].ep); st != UCS_OK) {
      s.out[peer].ep = nullptr;
      s.close_endpoints();
      return absl::UnavailableError(absl::StrFormat("node %u cannot reach node %u over ucx: %s",
                                                    self(), peer, ucx_error(st)));
    }
  }
  s.connected = true;
  return absl::OkStatus();
}

std::string ucx_transport::lanes() const {
  const state& s = *state_;
  std::set<std::string> names;
  for (const state::outbound& o : s.out) {
    if (o.ep == nullptr) continue;
    char* text = nullptr;
    std::size_t length = 0;
    FILE* stream = open_memstream(&text, &length);
    if (stream == nullptr) continue;
    ucp_ep_print_info(o.ep, stream);
    std::fclose(stream);
    // Lane lines read "#   lane[0]:  8:posix/memory.0 md[4] ..."; the transport is the
    // word between the resource number's colon and the slash.
    std::string_view rest(text, length);
    for (std::size_t at = rest.find("lane["); at != std::string_view::npos;
         at = rest.find("lane[", at + 1)) {
      const std::size_t line_end = std::min(rest.find('\n', at), rest.size());
      std::string_view line = rest.substr(at, line_end - at);
      const std::size_t slash = line.find('/');
      if (slash == std::string_view::npos) continue;
      const std::size_t start = line.find_last_of(": ", slash);
      if (start == std::string_view::npos) continue;
      names.emplace(line.substr(start + 1, slash - start - 1));
    }
    std::free(text);
  }
  return absl::StrJoin(names, ",");
}

std::size_t ucx_transport::max_packet_size() const { return kMaxPacket; }

std::unique_ptr<ucx_send_record> ucx_transport::state::take_record(std::size_t bytes) {
  std::unique_ptr<ucx_send_record> record;
  if (bytes <= kPooledBuffer && !spare_records.empty()) {
    record = std::move(spare_records.back());
    spare_records.pop_back();
    return record;
  }
  record = std::make_unique<ucx_send_record>();
  record->owner = this;
  record->capacity = std::max(bytes, kPooledBuffer);
  record->buffer = std::make_unique_for_overwrite<std::byte[]>(record->capacity);
  return record;
}

void ucx_transport::state::recycle(std::unique_ptr<ucx_send_record> record) {
  if (record->capacity == kPooledBuffer && spare_records.size() < 1024) {
    spare_records.push_back(std::move(record));
  }
}

// Hands `record` (header and payload inside it) to UCX; it comes back to the pool when UCX is
// done with it, at once or in on_send_done.
absl::Status ucx_transport::state::post(ucx_send_record* record, unsigned id,
                                        std::size_t header_bytes, const void* payload,
                                        std::size_t payload_bytes) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &state::on_send_done;
  param.user_data = record;
  ucs_status_ptr_t request = ucp_am_send_nbx(out[record->destination].ep, id, &record->header,
                                             header_bytes, payload, payload_bytes, &param);
  if (request == nullptr) {
    recycle(std::unique_ptr<ucx_send_record>(record));
    return absl::OkStatus();
  }
  if (UCS_PTR_IS_ERR(request)) {
    const node_id destination = record->destination;
    recycle(std::unique_ptr<ucx_send_record>(record));
    return absl::UnavailableError(absl::StrFormat("ucx send from node %u to node %u failed: %s",
                                                  self, destination,
                                                  ucx_error(UCS_PTR_STATUS(request))));
  }
  sends_in_flight.insert(record);
  ++out[record->destination].queued_sends;
  return absl::OkStatus();
}

void ucx_transport::state::on_send_done(void* request, ucs_status_t status, void* user_data) {
  auto* record = static_cast<ucx_send_record*>(user_data);
  state& s = *record->owner;
  if (status != UCS_OK && status != UCS_ERR_CANCELED) {
    s.note_error(absl::UnavailableError(absl::StrFormat(
        "ucx send from node %u to node %u: %s", s.self, record->destination, ucx_error(status))));
  }
  ucp_request_free(request);
  s.sends_in_flight.erase(record);
  --s.out[record->destination].queued_sends;
  s.recycle(std::unique_ptr<ucx_send_record>(record));
}

absl::Status ucx_transport::send(node_id destination, std::span<const byte_span> pieces) {
  state& s = *state_;
  if (destination >= size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("send to node %u: the job has nodes 0..%u", destination, size() - 1));
  }
  if (!s.connected) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "send to node %u before node %u's ucx transport is connected", destination, self()));
  }
  if (!s.error.ok()) return s.error;
  std::size_t total = 0;
  for (const byte_span& piece : pieces) total += piece.size();
  if (total > kMaxPacket) {
    return absl::OutOfRangeError(absl::StrFormat(
        "packet of %u bytes to node %u exceeds the maximum of %u", total, destination, kMaxPacket));
  }
  state::outbound& to = s.out[destination];
  auto window_full = [&] {
    return to.sent_bytes - to.credited_bytes + cost_of(total) > kWindowBytes ||
           to.queued_sends >= kMaxQueuedSends;
  };
  if (window_full()) {
    s.progress();  // credit may be waiting in the worker
    if (window_full()) {
      ++s.counters.sends_would_block;
      // A prebuilt status: back-pressure is an ordinary event and must not allocate.
      static const absl::Status full =
          absl::UnavailableError("ucx send window to destination is full");
      return full;
    }
  }
  std::unique_ptr<ucx_send_record> record = s.take_record(total);
  record->destination = destination;
  record->header.packet = packet_header{self(), 0, to.next_sequence};
  std::byte* at = record->buffer.get();
  for (const byte_span& piece : pieces) {
    if (!piece.empty()) std::memcpy(at, piece.data(), piece.size());
    at += piece.size();
  }
  ucx_send_record* posted = record.release();
  if (absl::Status st =
          s.post(posted, kPacketAm, sizeof(packet_header), posted->buffer.get(), total);
      !st.ok()) {
    return st;
  }
  ++to.next_sequence;
  to.sent_bytes += cost_of(total);
  ++s.counters.packets_sent;
  s.counters.bytes_sent += total;
  return absl::OkStatus();
}

ucs_status_t ucx_transport::state::on_packet(void* arg, const void* header,
                                             std::size_t header_length, void* data,
                                             std::size_t length, const ucp_am_recv_param_t* param) {
  state& s = *static_cast<state*>(arg);
  packet_header h;
  if (header_length != sizeof(h)) {
    s.note_error(absl::DataLossError(
        absl::StrFormat("node %u got a ucx packet with a %u-byte header", s.self, header_length)));
    return UCS_OK;
  }
  std::memcpy(&h, header, sizeof(h));
  if (h.source >= s.size || length > kMaxPacket) {
    s.note_error(absl::DataLossError(
        absl::StrFormat("node %u got a ucx packet of %u bytes claiming to be from node %u", s.self,
                        length, h.source)));
    return UCS_OK;
  }
  inbound& from = s.in[h.source];
  if (h.sequence < from.next_sequence || h.sequence - from.next_sequence >= kMaxParked) {
    s.note_error(absl::DataLossError(absl::StrFormat(
        "node %u got packet number %u from node %u while expecting number %u or a little later",
        s.self, h.sequence, h.source, from.next_sequence)));
    return UCS_OK;
  }
  const std::size_t index = h.sequence - from.next_sequence;
  if (index >= from.slots.size()) from.slots.resize(index + 1);
  ucx_arrival& a = from.slots[index];
  if (a.present) {
    s.note_error(absl::DataLossError(absl::StrFormat(
        "node %u got packet number %u from node %u twice", s.self, h.sequence, h.source)));
    return UCS_OK;
  }
  a.present = true;
  a.length = length;
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    // Started once the worker's progress call returns, as UCX's examples do.
    a.rndv_descriptor = data;
    s.rndv_to_start.emplace_back(h.source, h.sequence);
    return UCS_INPROGRESS;
  }
  a.complete = true;
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) != 0) {
    a.ucx_data = data;  // held without a copy until released
    a.bytes = static_cast<const std::byte*>(data);
    return UCS_INPROGRESS;
  }
  a.owned = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(length, 1));
  if (length != 0) std::memcpy(a.owned.get(), data, length);
  a.bytes = a.owned.get();
  return UCS_OK;
}

ucs_status_t ucx_transport::state::on_credit(void* arg, const void* header,
                                             std::size_t header_length, void* /*data*/,
                                             std::size_t /*length*/,
                                             const ucp_am_recv_param_t* /*param*/) {
  state& s = *static_cast<state*>(arg);
  credit_header h;
  if (header_length != sizeof(h)) {
    s.note_error(absl::DataLossError(
        absl::StrFormat("node %u got a ucx credit with a %u-byte header", s.self, header_length)));
    return UCS_OK;
  }
  std::memcpy(&h, header, sizeof(h));
  if (h.source >= s.size || h.released > s.out[h.source].sent_bytes) {
    s.note_error(absl::DataLossError(absl::StrFormat(
        "node %u got credit for %u bytes from node %u, which was sent only %u", s.self, h.released,
        h.source, h.source < s.size ? s.out[h.source].sent_bytes : 0)));
    return UCS_OK;
  }
  outbound& to = s.out[h.source];
  to.credited_bytes = std::max(to.credited_bytes, h.released);
  return UCS_OK;
}

void ucx_transport::state::on_rendezvous_done(void* request, ucs_status_t status,
                                              std::size_t /*length*/, void* user_data) {
  std::unique_ptr<rndv_receive> r(static_cast<rndv_receive*>(user_data));
  state& s = *r->owner;
  s.receives_in_flight.erase(request);
  ucp_request_free(request);
  if (status != UCS_OK) {
    if (status != UCS_ERR_CANCELED) {
      s.note_error(absl::DataLossError(
          absl::StrFormat("node %u lost packet number %u from node %u in a ucx rendezvous: %s",
                          s.self, r->sequence, r->source, ucx_error(status))));
    }
    return;
  }
  inbound& from = s.in[r->source];
  from.slots[r->sequence - from.next_sequence].complete = true;
}

bool ucx_transport::state::start_rendezvous() {
  const bool any = !rndv_to_start.empty();
  while (!rndv_to_start.empty()) {
    auto [source, sequence] = rndv_to_start.back();
    rndv_to_start.pop_back();
    inbound& from = in[source];
    ucx_arrival& a = from.slots[sequence - from.next_sequence];
    a.owned = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(a.length, 1));
    a.bytes = a.owned.get();
    auto r = std::make_unique<rndv_receive>(rndv_receive{this, source, sequence});
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.recv_am = &state::on_rendezvous_done;
    param.user_data = r.get();
    // UCX owns the descriptor from here on, whatever the outcome.
    ucs_status_ptr_t request = ucp_am_recv_data_nbx(
        worker, std::exchange(a.rndv_descriptor, nullptr), a.owned.get(), a.length, &param);
    if (request == nullptr) {
      a.complete = true;
    } else if (UCS_PTR_IS_ERR(request)) {
      note_error(absl::DataLossError(absl::StrFormat(
          "node %u cannot receive packet number %u from node %u by ucx rendezvous: %s", self,
          sequence, source, ucx_error(UCS_PTR_STATUS(request)))));
    } else {
      receives_in_flight.insert(request);
      (void)r.release();  // on_rendezvous_done frees it
    }
  }
  return any;
}

void ucx_transport::state::progress() {
  ucp_worker_progress(worker);
  if (rndv_to_start.empty()) return;
  start_rendezvous();
  ucp_worker_progress(worker);  // moves the receives just started along
}

void ucx_transport::state::release(node_id source, ucx_arrival& arrival) {
  if (arrival.ucx_data != nullptr) ucp_am_data_release(worker, arrival.ucx_data);
  arrival.ucx_data = nullptr;
  arrival.owned.reset();
  inbound& from = in[source];
  from.released_bytes += cost_of(arrival.length);
  if (from.released_bytes - from.credited_bytes < kCreditBatch) return;
  from.credited_bytes = from.released_bytes;
  std::unique_ptr<ucx_send_record> record = take_record(0);
  record->destination = source;
  record->header.credit = credit_header{self, 0, from.released_bytes};
  if (absl::Status st = post(record.release(), kCreditAm, sizeof(credit_header), nullptr, 0);
      !st.ok()) {
    note_error(std::move(st));
  }
}

bool ucx_transport::state::anything_deliverable() const {
  return std::any_of(in.begin(), in.end(), [](const inbound& from) {
    return !from.slots.empty() && from.slots.front().present && from.slots.front().complete;
  });
}

absl::Status ucx_transport::poll(packet_upcall upcall, std::size_t& handled, std::size_t budget) {
  state& s = *state_;
  handled = 0;
  if (!s.connected) return absl::OkStatus();
  s.progress();
  if (!s.error.ok()) return s.error;
  const std::uint32_t n = size();
  for (std::uint32_t i = 0; i < n && handled < budget; ++i) {
    node_id source = s.next_source + i;
    if (source >= n) source -= n;
    state::inbound& from = s.in[source];
    while (handled < budget && !from.slots.empty() && from.slots.front().present &&
           from.slots.front().complete) {
      ucx_arrival arrival = std::move(from.slots.front());
      from.slots.pop_front();
      const std::uint64_t sequence = from.next_sequence++;
      ++s.counters.packets_received;
      s.counters.bytes_received += arrival.length;
      received_packet packet =
          make_received(source, byte_span(arrival.bytes, arrival.length), sequence);
      upcall(packet);
      ++handled;
      if (packet.held()) {
        s.in[source].held.emplace(sequence, std::move(arrival));
      } else {
        s.release(source, arrival);
      }
    }
    // A missing packet with later ones behind it: UCX reordered, or lost one.
    if (!from.slots.empty() && !from.slots.front().present) {
      const absl::Time now = absl::Now();
      if (from.gap_since == absl::InfiniteFuture()) {
        from.gap_since = now;
      } else if (now - from.gap_since > kGapTimeout) {
        s.note_error(absl::DataLossError(absl::StrFormat(
            "node %u: packet number %u from node %u never arrived (%u later ones did, over %s)",
            self(), from.next_sequence, source, from.slots.size() - 1,
            absl::FormatDuration(kGapTimeout))));
        return s.error;
      }
    } else {
      from.gap_since = absl::InfiniteFuture();
    }
  }
  s.next_source = s.next_source + 1 == n ? 0 : s.next_source + 1;
  return s.error;
}

void ucx_transport::release_held(node_id source, std::uint64_t token) {
  state& s = *state_;
  auto it = s.in[source].held.find(token);
  ISO_CHECK(it != s.in[source].held.end())
      << "release of packet number " << token << " from node " << source << " that is not held";
  ucx_arrival arrival = std::move(it->second);
  s.in[source].held.erase(it);
  s.release(source, arrival);
}

void ucx_transport::wait(absl::Duration timeout, absl::FunctionRef<bool()> also_ready) {
  state& s = *state_;
  if (s.woken.exchange(false) || s.anything_deliverable()) return;
  // UCX's rule for sleeping: progress until there is nothing left, then arm; BUSY means
  // events came in meanwhile, so progress again. Only an armed worker's descriptor can be
  // slept on without missing an event.
  bool armed = false;
  for (int attempt = 0; attempt < kMaxArmAttempts && !armed; ++attempt) {
    // A receive just started may need this worker's progress and nothing else (a fetch
    // over shared memory finishes here, with no event to wake the sleep): progress it too.
    do {
      while (ucp_worker_progress(s.worker) != 0) {
      }
    } while (s.start_rendezvous());
    if (s.anything_deliverable() || !s.error.ok()) return;
    const ucs_status_t st = ucp_worker_arm(s.worker);
    if (st == UCS_OK) {
      armed = true;
    } else if (st != UCS_ERR_BUSY) {
      s.note_error(absl::InternalError(
          absl::StrFormat("node %u cannot arm its ucx worker: %s", self(), ucx_error(st))));
      return;
    }
  }
  if (!armed) return;  // busy all along: the caller will poll
  // Arming drained any signal sent before it, so the flags are looked at only now.
  if (s.woken.exchange(false) || also_ready()) return;
  int milliseconds = -1;
  if (timeout != absl::InfiniteDuration()) {
    milliseconds = static_cast<int>(std::min<std::int64_t>(
        absl::ToInt64Milliseconds(absl::Ceil(timeout, absl::Milliseconds(1))),
        std::numeric_limits<int>::max()));
    milliseconds = std::max(milliseconds, 0);
  }
  pollfd fd{s.event_fd, POLLIN, 0};
  (void)::poll(&fd, 1, milliseconds);  // EINTR is a spurious return, which is allowed
}

void ucx_transport::wake() {
  state& s = *state_;
  s.woken.store(true);
  (void)ucp_worker_signal(s.worker);  // safe from any thread, says ucp.h
}

transport_counters ucx_transport::counters() const {
  transport_counters c = state_->counters;
  c.sends_in_flight = state_->sends_in_flight.size();
  return c;
}

}  // namespace iso::comm
