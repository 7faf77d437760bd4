// What the shared-object tests share besides their object types: the options of their
// in-process jobs, and the placements and objects orders a parameterised test runs under.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>

#include "iso/object.hpp"
#include "iso/options.hpp"

namespace iso::test {

// Long enough that a loaded machine never makes a job time out.
// `order`: the objects order (options::object_order).
inline iso::options object_job_options(iso::order_kind order = iso::order_kind::sequencer) {
  iso::options o;
  o.barrier_timeout = std::chrono::seconds(60);
  o.object_order = order;
  return o;
}

inline std::string order_name(iso::order_kind order) {
  return order == iso::order_kind::isotach ? "isotach" : "sequencer";
}

inline auto both_object_orders() {
  return testing::Values(iso::order_kind::sequencer, iso::order_kind::isotach);
}

inline std::string placement_text(iso::object_placement placement) {
  switch (placement) {
    case iso::object_placement::replicated:
      return "replicated";
    case iso::object_placement::single_copy:
      return "single_copy";
    case iso::object_placement::automatic:
      return "automatic";
  }
  return "unknown";
}

inline std::string placement_name(const testing::TestParamInfo<iso::object_placement>& p) {
  return placement_text(p.param);
}

// A case run under every placement and both objects orders.
using placement_and_order = std::tuple<iso::object_placement, iso::order_kind>;
class placement_order_test : public testing::TestWithParam<placement_and_order> {
 protected:
  [[nodiscard]] iso::object_placement placement() const { return std::get<0>(GetParam()); }
  [[nodiscard]] iso::order_kind order() const { return std::get<1>(GetParam()); }
  [[nodiscard]] iso::options opts() const { return object_job_options(order()); }
};
inline auto every_placement_and_order() {
  return testing::Combine(
      testing::Values(iso::object_placement::replicated, iso::object_placement::single_copy,
                      iso::object_placement::automatic),
      both_object_orders());
}
inline std::string placement_order_name(const testing::TestParamInfo<placement_and_order>& p) {
  return placement_text(std::get<0>(p.param)) + "_" + order_name(std::get<1>(p.param));
}

// A case run under both objects orders and both NIC modes (the window between two nodes
// applying the same ordered message differs in each).
using order_and_nic = std::tuple<iso::order_kind, iso::nic_mode>;
class order_nic_test : public testing::TestWithParam<order_and_nic> {
 protected:
  [[nodiscard]] iso::order_kind order() const { return std::get<0>(GetParam()); }
  [[nodiscard]] iso::options opts() const {
    iso::options o = object_job_options(order());
    o.nic = std::get<1>(GetParam());
    return o;
  }
};
inline auto both_orders_and_nics() {
  return testing::Combine(both_object_orders(),
                          testing::Values(iso::nic_mode::thread, iso::nic_mode::inline_poll));
}
inline std::string order_nic_name(const testing::TestParamInfo<order_and_nic>& p) {
  return order_name(std::get<0>(p.param)) + "_" +
         (std::get<1>(p.param) == iso::nic_mode::thread ? "thread" : "inline");
}

}  // namespace iso::test
