// The ucx transport's ordering against a peer that misbehaves: a bare UCX worker plays node 1
// of a two-node job and sends packets out of order, twice, or with one missing, which UCX
// itself never does here. Node 0 must hand them up in order, or fail naming node 1.
#include <gtest/gtest.h>
#include <ucp/api/ucp.h>

#include <cstring>
#include <string>
#include <vector>

#include "comm/ucx/ucx_transport.hpp"
#include "comm/ucx/wire_format.hpp"
#include "comm/ucx/worker_address.hpp"

namespace iso::comm {
namespace {

// A UCX worker that speaks the transport's wire format by hand, as node 1.
class impostor {
 public:
  impostor() {
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_AM;
    if (ucp_init(&params, nullptr, &context_) != UCS_OK) return;
    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (ucp_worker_create(context_, &worker_params, &worker_) != UCS_OK) worker_ = nullptr;
  }
  ~impostor() {
    if (ep_ != nullptr) {
      ucp_request_param_t param{};
      wait(ucp_ep_close_nbx(ep_, &param));
    }
    if (worker_ != nullptr) ucp_worker_destroy(worker_);
    if (context_ != nullptr) ucp_cleanup(context_);
  }
  impostor(const impostor&) = delete;
  impostor& operator=(const impostor&) = delete;

  [[nodiscard]] bool ok() const { return worker_ != nullptr; }

  [[nodiscard]] std::string address() const {
    ucp_address_t* raw = nullptr;
    std::size_t length = 0;
    EXPECT_EQ(ucp_worker_get_address(worker_, &raw, &length), UCS_OK);
    std::string sealed = ucx_detail::seal_worker_address(
        1, std::span(reinterpret_cast<const std::byte*>(raw), length));
    ucp_worker_release_address(worker_, raw);
    return sealed;
  }

  void connect_to(const std::string& node0_address) {
    auto opened = ucx_detail::open_worker_address(0, node0_address);
    ASSERT_TRUE(opened.ok()) << opened.status();
    target_ = std::string(*opened);
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    params.address = reinterpret_cast<const ucp_address_t*>(target_.data());
    ASSERT_EQ(ucp_ep_create(worker_, &params, &ep_), UCS_OK);
  }

  // Sends packet number `sequence` carrying `value`, and waits until UCX is done with it.
  void send(std::uint64_t sequence, std::uint64_t value) {
    const ucx_detail::packet_header header{1, 0, sequence};
    ucp_request_param_t param{};
    wait(ucp_am_send_nbx(ep_, ucx_detail::kPacketAm, &header, sizeof(header), &value, sizeof(value),
                         &param));
  }

 private:
  void wait(ucs_status_ptr_t request) {
    if (request == nullptr || UCS_PTR_IS_ERR(request)) return;
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (ucp_request_check_status(request) == UCS_INPROGRESS && absl::Now() < deadline) {
      ucp_worker_progress(worker_);
    }
    ucp_request_free(request);
  }

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_ep_h ep_ = nullptr;
  std::string target_;
};

class UcxTransportOrder : public testing::Test {
 protected:
  void SetUp() override {
    auto made = ucx_transport::create(0, 2);
    if (!made.ok()) GTEST_SKIP() << "ucx cannot make a context on this machine: " << made.status();
    node0_ = *std::move(made);
    ASSERT_TRUE(peer_.ok());
    ASSERT_TRUE(
        node0_->connect(std::vector<std::string>{node0_->worker_address(), peer_.address()}).ok());
    peer_.connect_to(node0_->worker_address());
  }
  void TearDown() override { node0_.reset(); }

  // Polls node 0 until `count` packets came (their values, in the order handed up), poll
  // fails (its status), `max_polls` polls were made, or a minute passed.
  absl::Status receive(std::size_t count, std::vector<std::uint64_t>& values,
                       int max_polls = 1 << 30) {
    transport& t = *node0_;
    const absl::Time deadline = absl::Now() + absl::Minutes(1);
    for (int polls = 0; values.size() < count && polls < max_polls && absl::Now() < deadline;
         ++polls) {
      std::size_t handled = 0;
      absl::Status s = t.poll(
          [&](received_packet& p) {
            EXPECT_EQ(p.source(), 1u);
            std::uint64_t v = 0;
            std::memcpy(&v, p.bytes().data(), sizeof(v));
            values.push_back(v);
          },
          handled);
      if (!s.ok()) return s;
      if (handled == 0) t.wait(absl::Milliseconds(10));
    }
    return absl::OkStatus();
  }

  impostor peer_;  // declared first, destroyed last
  std::unique_ptr<ucx_transport> node0_;
};

TEST_F(UcxTransportOrder, EarlyPacketsWaitForTheMissingOnes) {
  peer_.send(2, 102);
  peer_.send(1, 101);
  std::vector<std::uint64_t> values;
  // Nothing may be handed up before packet 0; poll a while to give it the chance to go wrong.
  ASSERT_TRUE(receive(1, values, 200).ok());
  EXPECT_TRUE(values.empty());
  peer_.send(0, 100);
  peer_.send(3, 103);
  ASSERT_TRUE(receive(4, values).ok());
  EXPECT_EQ(values, (std::vector<std::uint64_t>{100, 101, 102, 103}));
}

TEST_F(UcxTransportOrder, APacketTwiceIsDataLossNamingItsSender) {
  peer_.send(0, 100);
  peer_.send(0, 100);
  std::vector<std::uint64_t> values;
  absl::Status s = receive(3, values);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("from node 1"), std::string::npos) << s;
}

TEST_F(UcxTransportOrder, AGapThatNeverFillsIsDataLossNamingItsSender) {
  peer_.send(1, 101);
  std::vector<std::uint64_t> values;
  absl::Status s = receive(1, values);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("packet number 0 from node 1 never arrived"), std::string::npos) << s;
  EXPECT_TRUE(values.empty());
}

}  // namespace
}  // namespace iso::comm
