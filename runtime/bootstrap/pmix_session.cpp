#include "runtime/bootstrap/pmix_session.hpp"

#include <pmix.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "runtime/bootstrap/process_probe.hpp"

namespace iso::runtime {
namespace {

// Keys of the job's own use, beside the callers' (which get kUserPrefix).
constexpr char kUserPrefix[] = "iso.";
constexpr char kSecretKey[] = "iso-job.secret";
constexpr char kProcessKey[] = "iso-job.process";
// A node's own failure, as this process records it (PMIx leaves codes below
// PMIX_EXTERNAL_ERR_BASE to applications).
constexpr pmix_status_t kNodeFailedEvent = PMIX_EXTERNAL_ERR_BASE - 18;
// A node whose process this one saw gone (same host, same process table).
constexpr pmix_status_t kNodeGoneEvent = PMIX_EXTERNAL_ERR_BASE - 19;
constexpr std::size_t kSecretBytes = 24;
// How long a node looks for the process that ended in a fence before saying only that one did.
constexpr absl::Duration kLookForGonePeer = absl::Seconds(1);

// What the launcher's events said. PMIx calls its event handlers with no pointer of ours,
// and a process holds one PMIx client, so this one record per process is where they write.
struct failure_record {
  std::atomic<std::int64_t> node{-1};
  std::atomic<pmix_status_t> cause{PMIX_SUCCESS};
};
failure_record g_failure;

void record_failure(std::uint32_t node, pmix_status_t cause) {
  std::int64_t none = -1;
  if (g_failure.node.compare_exchange_strong(none, node)) g_failure.cause = cause;
}

std::string pmix_error(const char* call, pmix_status_t status) {
  return absl::StrFormat("%s failed: %s (PMIx error %d)", call, PMIx_Error_string(status), status);
}

// PMIx's thread calls this for a terminated or aborted process, or a node's own report.
void on_event(std::size_t /*handler*/, pmix_status_t status, const pmix_proc_t* source,
              pmix_info_t info[], std::size_t ninfo, pmix_info_t* /*results*/,
              std::size_t /*nresults*/, pmix_event_notification_cbfunc_fn_t done, void* cbdata) {
  std::int64_t node = -1;
  for (std::size_t i = 0; i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC &&
        info[i].value.data.proc != nullptr) {
      node = info[i].value.data.proc->rank;
    }
  }
  if (node < 0 && source != nullptr && status != PMIX_ERR_LOST_CONNECTION) node = source->rank;
  const bool job_rank = node >= 0 && node < static_cast<std::int64_t>(PMIX_RANK_VALID);
  // Losing the server means the launcher is gone: the job cannot go on, whoever failed.
  if (job_rank || status == PMIX_ERR_LOST_CONNECTION) {
    record_failure(job_rank ? static_cast<std::uint32_t>(node) : PMIX_RANK_UNDEF, status);
  }
  if (done != nullptr) done(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

// Which process table this process's pid belongs to: the machine's boot and the PID
// namespace. Two processes with the same one can look at each other's pids.
std::string process_table() { return kernel_and_namespace("pid"); }

std::string make_secret() {
  std::random_device source;
  std::string bytes(kSecretBytes, '\0');
  for (char& c : bytes) c = static_cast<char>(source());
  return absl::BytesToHexString(bytes);
}

}  // namespace

bool pmix_session::launched_by_pmix() {
  return std::getenv("PMIX_RANK") != nullptr && std::getenv("PMIX_NAMESPACE") != nullptr;
}

absl::StatusOr<std::shared_ptr<pmix_session>> pmix_session::open(absl::Duration timeout) {
  if (!launched_by_pmix()) {
    return absl::UnavailableError(
        "not started by a PMIx launcher (PMIX_RANK and PMIX_NAMESPACE are not set)");
  }
  std::shared_ptr<pmix_session> session(new pmix_session());
  if (absl::Status s = session->connect(timeout); !s.ok()) return s;
  return session;
}

absl::Status pmix_session::connect(absl::Duration timeout) {
  pmix_proc_t self;
  PMIX_PROC_CONSTRUCT(&self);
  const pmix_status_t init = PMIx_Init(&self, nullptr, 0);
  if (init == PMIX_ERR_UNREACH) {
    // Not PMIx_Finalize: after this answer PMIx 4.2 crashes in it.
    return absl::UnavailableError(
        "PMIX_RANK and PMIX_NAMESPACE are set, but no PMIx server answers (PMIx_Init: "
        "unreachable): not started by a PMIx launcher");
  }
  if (init != PMIX_SUCCESS) return absl::InternalError(pmix_error("PMIx_Init", init));
  initialized_ = true;
  nspace_ = self.nspace;
  rank_ = self.rank;

  pmix_proc_t job;
  PMIX_PROC_CONSTRUCT(&job);
  PMIX_LOAD_PROCID(&job, self.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* value = nullptr;
  const pmix_status_t got = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &value);
  if (got != PMIX_SUCCESS || value == nullptr || value->type != PMIX_UINT32) {
    if (value != nullptr) PMIX_VALUE_RELEASE(value);
    return absl::InternalError(pmix_error("PMIx_Get(PMIX_JOB_SIZE)", got));
  }
  size_ = value->data.uint32;
  PMIX_VALUE_RELEASE(value);
  value = nullptr;
  if (PMIx_Get(&job, PMIX_LOCAL_SIZE, nullptr, 0, &value) == PMIX_SUCCESS && value != nullptr &&
      value->type == PMIX_UINT32 && value->data.uint32 > 0) {
    local_size_ = value->data.uint32;
  }
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  if (rank_ >= size_) {
    return absl::InternalError(
        absl::StrFormat("PMIx says this process is rank %u of a job of %u", rank_, size_));
  }

  std::array<pmix_status_t, 4> codes = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_ABORTING,
                                        PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_LOST_CONNECTION};
  const pmix_status_t reg = PMIx_Register_event_handler(codes.data(), codes.size(), nullptr, 0,
                                                        on_event, nullptr, nullptr);
  if (reg < 0) return absl::InternalError(pmix_error("PMIx_Register_event_handler", reg));
  handler_id_ = static_cast<std::size_t>(reg);
  handler_registered_ = true;
  return agree_on_secret(timeout);
}

absl::Status pmix_session::agree_on_secret(absl::Duration timeout) {
  // A PMIx launcher hands out no secret of its own; the first node makes one for all.
  if (rank_ == 0) {
    secret_ = make_secret();
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_STRING;
    value.data.string = secret_.data();
    const pmix_status_t put = PMIx_Put(PMIX_GLOBAL, kSecretKey, &value);
    if (put != PMIX_SUCCESS) return absl::InternalError(pmix_error("PMIx_Put(secret)", put));
  }
  // Beside it, every node says where its process is, for naming one that dies (peers_).
  const std::string table = process_table();
  std::string process = absl::StrFormat("%d %s", ::getpid(), table);
  {
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_STRING;
    value.data.string = process.data();
    const pmix_status_t put = PMIx_Put(PMIX_GLOBAL, kProcessKey, &value);
    if (put != PMIX_SUCCESS) return absl::InternalError(pmix_error("PMIx_Put(process)", put));
  }
  if (absl::Status s = fence(timeout); !s.ok()) return s;
  learn_peer_processes(table);
  if (rank_ == 0) return absl::OkStatus();
  pmix_proc_t first;
  PMIX_PROC_CONSTRUCT(&first);
  PMIX_LOAD_PROCID(&first, nspace_.c_str(), 0);
  pmix_value_t* value = nullptr;
  const pmix_status_t got = PMIx_Get(&first, kSecretKey, nullptr, 0, &value);
  if (got != PMIX_SUCCESS || value == nullptr || value->type != PMIX_STRING) {
    if (value != nullptr) PMIX_VALUE_RELEASE(value);
    return absl::InternalError(pmix_error("PMIx_Get(the job secret from node 0)", got));
  }
  secret_ = value->data.string;
  PMIX_VALUE_RELEASE(value);
  return absl::OkStatus();
}

void pmix_session::learn_peer_processes(const std::string& own_table) {
  peers_.assign(size_, peer_process{});
  if (own_table.empty()) return;
  for (std::uint32_t node = 0; node < size_; ++node) {
    if (node == rank_) continue;
    pmix_proc_t proc;
    PMIX_PROC_CONSTRUCT(&proc);
    PMIX_LOAD_PROCID(&proc, nspace_.c_str(), node);
    pmix_value_t* value = nullptr;
    if (PMIx_Get(&proc, kProcessKey, nullptr, 0, &value) != PMIX_SUCCESS || value == nullptr) {
      continue;  // not a process this one can watch; the launcher still reports it
    }
    if (value->type == PMIX_STRING && value->data.string != nullptr) {
      const std::string text = value->data.string;
      const std::size_t space = text.find(' ');
      int pid = 0;
      if (space != std::string::npos && text.substr(space + 1) == own_table &&
          absl::SimpleAtoi(text.substr(0, space), &pid) && pid > 0) {
        const process_sample sample = probe_process(pid);
        if (sample.state != process_state::gone) peers_[node] = {pid, sample.start_time};
      }
    }
    PMIX_VALUE_RELEASE(value);
  }
}

void pmix_session::name_gone_peers() const {
  for (std::uint32_t node = 0; node < peers_.size(); ++node) {
    const peer_process& peer = peers_[node];
    if (peer.pid <= 0) continue;
    const process_sample sample = probe_process(peer.pid);
    if (sample.state == process_state::gone || sample.start_time != peer.start_time) {
      record_failure(node, kNodeGoneEvent);
      return;
    }
  }
}

absl::Status pmix_session::look_for_gone_nodes() const {
  name_gone_peers();
  return job_status();
}

pmix_session::~pmix_session() {
  if (!initialized_) return;
  // A fence still in flight writes into its record (fences_): PMIx_Finalize, which ends
  // PMIx's thread, runs before the members go.
  if (handler_registered_) PMIx_Deregister_event_handler(handler_id_, nullptr, nullptr);
  const pmix_status_t status = PMIx_Finalize(nullptr, 0);
  if (status != PMIX_SUCCESS) {
    ISO_LOG(runtime, warn, "node %u: %s", rank_, pmix_error("PMIx_Finalize", status));
  }
}

absl::Status pmix_session::put(std::string_view key, std::string_view value) {
  const std::string full = std::string(kUserPrefix).append(key);
  if (key.empty()) return absl::InvalidArgumentError("bootstrap put: the key is empty");
  if (full.size() > PMIX_MAX_KEYLEN) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bootstrap put: key '%s' is longer than PMIx allows (%d bytes)", key,
                        PMIX_MAX_KEYLEN - static_cast<int>(std::strlen(kUserPrefix))));
  }
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = const_cast<char*>(value.data());  // PMIx_Put copies it
  v.data.bo.size = value.size();
  const pmix_status_t status = PMIx_Put(PMIX_GLOBAL, full.c_str(), &v);
  if (status != PMIX_SUCCESS) {
    return absl::InternalError(pmix_error("PMIx_Put", status) + " (key '" + std::string(key) +
                               "')");
  }
  return absl::OkStatus();
}

namespace {

static_assert(PMIX_SUCCESS == fence_log::kSucceeded);

void fence_completed(pmix_status_t status, void* cbdata) {
  static_cast<fence_log::record*>(cbdata)->finish(status);
}

// What every fence asks for: collect the nodes' puts. PMIx reads it until the fence
// completes, so it lives as long as the process.
const pmix_info_t* collect_data() {
  static const pmix_info_t* info = [] {
    auto* made = new pmix_info_t;
    PMIX_INFO_CONSTRUCT(made);
    bool flag = true;
    PMIX_INFO_LOAD(made, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    return made;
  }();
  return info;
}

}  // namespace

std::uint64_t pmix_session::start_fence() {
  auto [number, record] = fences_.begin();
  pmix_status_t started = PMIx_Commit();
  if (started == PMIX_SUCCESS) {
    started = PMIx_Fence_nb(nullptr, 0, const_cast<pmix_info_t*>(collect_data()), 1,
                            fence_completed, record);
  }
  if (started != PMIX_SUCCESS) record->finish(started);
  return number;
}

absl::StatusOr<bool> pmix_session::fence_done(std::uint64_t number) const {
  if (absl::Status s = job_status(); !s.ok()) return s;
  const fence_log::outcome outcome = fences_.look_up(number);
  switch (outcome.state) {
    case fence_log::fence_state::unknown:
      return absl::InvalidArgumentError(absl::StrFormat("no fence %u was started", number));
    case fence_log::fence_state::running:
      return false;
    case fence_log::fence_state::passed:
      return true;
    case fence_log::fence_state::failed:
      break;
  }
  if (outcome.status == PMIX_ERR_PARTIAL_SUCCESS) {
    // What Open MPI's launcher answers when a process of the job ended during the fence. It
    // says nothing of which, and its events about it do not reach this client: a node on
    // this host is looked for among the processes.
    // The launcher can tell before the process is gone from the process table (it sees the
    // connection close while the process is still exiting): look again for a while.
    if (absl::Status s = look_for_gone_nodes(); !s.ok()) return s;
    const std::int64_t now = absl::ToUnixNanos(absl::Now());
    std::int64_t since = 0;
    if (partial_since_ns_.compare_exchange_strong(since, now)) since = now;
    if (now - since < absl::ToInt64Nanoseconds(kLookForGonePeer)) return false;
    return absl::AbortedError(absl::StrFormat(
        "node %u: a node of the job ended during a barrier (the PMIx launcher names it)", rank_));
  }
  return absl::InternalError(
      absl::StrFormat("node %u: %s", rank_, pmix_error("PMIx_Fence", outcome.status)));
}

absl::Status pmix_session::fence(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const std::uint64_t number = start_fence();
  for (;;) {
    absl::StatusOr<bool> done = fence_done(number);
    if (!done.ok()) return done.status();
    if (*done) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrFormat("node %u: a PMIx fence of the job's %u nodes did not complete within %s",
                          rank_, size_, absl::FormatDuration(timeout)));
    }
    // PMIx completes the fence on its own thread; this one has nothing else to do.
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

absl::StatusOr<std::string> pmix_session::get(std::uint32_t node, std::string_view key) const {
  if (node >= size_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bootstrap get from node %u: the job has %u nodes", node, size_));
  }
  const std::string full = std::string(kUserPrefix).append(key);
  pmix_proc_t proc;
  PMIX_PROC_CONSTRUCT(&proc);
  PMIX_LOAD_PROCID(&proc, nspace_.c_str(), node);
  // Optional: look only at what the fences collected, never ask the node itself.
  pmix_info_t optional;
  bool flag = true;
  PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &flag, PMIX_BOOL);
  pmix_value_t* value = nullptr;
  const pmix_status_t status = PMIx_Get(&proc, full.c_str(), &optional, 1, &value);
  PMIX_INFO_DESTRUCT(&optional);
  if (status == PMIX_ERR_NOT_FOUND || (status == PMIX_SUCCESS && value == nullptr)) {
    return absl::NotFoundError(
        absl::StrFormat("node %u published no bootstrap key '%s'", node, key));
  }
  if (status != PMIX_SUCCESS) {
    return absl::InternalError(absl::StrFormat("bootstrap get of key '%s' from node %u: %s", key,
                                               node, pmix_error("PMIx_Get", status)));
  }
  std::string out;
  const pmix_data_type_t type = value->type;
  if (type == PMIX_BYTE_OBJECT) out.assign(value->data.bo.bytes, value->data.bo.size);
  PMIX_VALUE_RELEASE(value);
  if (type != PMIX_BYTE_OBJECT) {
    return absl::InternalError(absl::StrFormat(
        "bootstrap key '%s' of node %u holds no bytes (PMIx type %d)", key, node, type));
  }
  return out;
}

void pmix_session::note_failed(std::uint32_t node) {
  // Only here: telling the others through PMIx_Notify_event leaves Open MPI 4.1's mpirun
  // hanging after the job ends. The node's process ends with an error, which the launcher
  // reports to the others (or ends them).
  record_failure(node, kNodeFailedEvent);
}

absl::Status pmix_session::job_status() const {
  const std::int64_t node = g_failure.node.load();
  if (node < 0 || left_) return absl::OkStatus();
  const pmix_status_t cause = g_failure.cause.load();
  if (node == PMIX_RANK_UNDEF) {
    return absl::AbortedError(
        absl::StrFormat("node %u lost its PMIx server (the launcher is gone): %s", rank_,
                        PMIx_Error_string(cause)));
  }
  const char* how = cause == kNodeFailedEvent             ? "failed"
                    : cause == kNodeGoneEvent             ? "ended: its process is gone"
                    : cause == PMIX_EVENT_PROC_TERMINATED ? "ended (the launcher said so)"
                                                          : "was aborted (the launcher said so)";
  return absl::AbortedError(absl::StrFormat("node %d %s", node, how));
}

}  // namespace iso::runtime
