// Runs a body as an inproc job of `nodes` threads (what `isorun --transport inproc` does),
// for tests that want several nodes in one process.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "iso/iso.hpp"

namespace iso::test {

// Returns iso::run's exit status (0 when every node's body returned).
int run_inproc(int nodes, const iso::options& opts, const std::function<void(iso::node&)>& body);

// A suite whose every case runs with the NIC on its own thread and inline:
//   class Isotach : public iso::test::nic_mode_test {};
//   INSTANTIATE_TEST_SUITE_P(NicModes, Isotach, iso::test::both_nic_modes(),
//                            iso::test::nic_mode_name);
class nic_mode_test : public testing::TestWithParam<iso::nic_mode> {
 protected:
  // The case's NIC mode, and a barrier timeout that bounds a hung case.
  [[nodiscard]] iso::options opts() const {
    iso::options o;
    o.nic = GetParam();
    o.barrier_timeout = std::chrono::seconds(60);
    return o;
  }
};

inline auto both_nic_modes() {
  return testing::Values(iso::nic_mode::thread, iso::nic_mode::inline_poll);
}

inline std::string nic_mode_name(const testing::TestParamInfo<iso::nic_mode>& param) {
  return param.param == iso::nic_mode::thread ? "thread" : "inline";
}

}  // namespace iso::test
