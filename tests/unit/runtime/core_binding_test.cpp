// When a node binds its thread to a core of its own (iso::cpu_binding), as a pure decision
// over the job's shape and the cores the node may use.
#include "runtime/progress/core_binding.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using iso::cpu_binding;
using iso::runtime::binding_plan;
using iso::runtime::binding_request;

// plan_binding with a fixed count of cores.
binding_plan plan_binding(const binding_request& request, std::uint32_t cores) {
  return iso::runtime::plan_binding(request, [cores] { return cores; });
}

binding_request isorun_job(cpu_binding mode, std::uint32_t nodes, std::uint32_t index) {
  return {.mode = mode,
          .isorun_processes = true,
          .launcher_binds = false,
          .local_nodes = nodes,
          .local_index = index,
          .nic_thread = false};
}

// Node i of an isorun job that takes more than half of the cores takes the i-th core it
// may use, one node per core.
TEST(CoreBinding, AutomaticBindsEachNodeOfAnIsorunJobToItsOwnCore) {
  for (const std::uint32_t cores : {4u, 7u}) {
    for (std::uint32_t index = 0; index < 4; ++index) {
      const binding_plan plan = plan_binding(isorun_job(cpu_binding::automatic, 4, index), cores);
      ASSERT_TRUE(plan.core.has_value()) << index;
      EXPECT_EQ(*plan.core, index);
      EXPECT_EQ(plan.why_not, "");
    }
  }
}

// On a roomy machine the scheduler keeps the nodes apart by itself, and jobs run side by
// side would crowd onto the same first cores: automatic leaves them unbound, core binds.
TEST(CoreBinding, AutomaticLeavesAJobOfHalfTheCoresOrLessUnbound) {
  EXPECT_FALSE(plan_binding(isorun_job(cpu_binding::automatic, 4, 0), 8).core);
  EXPECT_FALSE(plan_binding(isorun_job(cpu_binding::automatic, 2, 1), 16).core);
  ASSERT_TRUE(plan_binding(isorun_job(cpu_binding::core, 2, 1), 16).core.has_value());
  binding_request nic = isorun_job(cpu_binding::automatic, 3, 2);
  nic.nic_thread = true;  // six threads
  EXPECT_FALSE(plan_binding(nic, 12).core);
  ASSERT_TRUE(plan_binding(nic, 11).core.has_value());
}

// The cores are counted only where the answer depends on them: counting loads the
// machine's topology.
TEST(CoreBinding, CountsCoresOnlyWhereItMatters) {
  int counted = 0;
  const auto count = [&counted] {
    ++counted;
    return 4u;
  };
  binding_request one = isorun_job(cpu_binding::automatic, 1, 0);
  (void)iso::runtime::plan_binding(one, count);
  (void)iso::runtime::plan_binding(isorun_job(cpu_binding::none, 2, 0), count);
  EXPECT_EQ(counted, 0);
  (void)iso::runtime::plan_binding(isorun_job(cpu_binding::automatic, 2, 0), count);
  EXPECT_EQ(counted, 1);
}

// Too few cores, one node, threads of one process, another launcher's job, a NIC thread
// without a core of its own: automatic leaves the scheduler alone and says nothing.
TEST(CoreBinding, AutomaticStaysUnboundWhereBindingCouldHurt) {
  EXPECT_FALSE(plan_binding(isorun_job(cpu_binding::automatic, 3, 0), 2).core);
  EXPECT_FALSE(plan_binding(isorun_job(cpu_binding::automatic, 1, 0), 2).core);
  binding_request threads = isorun_job(cpu_binding::automatic, 2, 0);
  threads.isorun_processes = false;
  EXPECT_FALSE(plan_binding(threads, 2).core);
  binding_request mpirun = isorun_job(cpu_binding::automatic, 2, 0);
  mpirun.isorun_processes = false;
  mpirun.launcher_binds = true;
  EXPECT_FALSE(plan_binding(mpirun, 16).core);
  binding_request nic = isorun_job(cpu_binding::automatic, 2, 1);
  nic.nic_thread = true;
  const binding_plan crowded = plan_binding(nic, 3);
  EXPECT_FALSE(crowded.core);
  EXPECT_EQ(crowded.why_not, "");
  const binding_plan fitting = plan_binding(nic, 4);
  ASSERT_TRUE(fitting.core.has_value());
  EXPECT_EQ(*fitting.core, 1u);
}

// Asked for, a binding is made wherever there are cores (threads of one process, a job of
// one node too), and where it cannot be, the plan says why.
TEST(CoreBinding, CoreBindsWhereItCanAndSaysWhyWhereItCannot) {
  binding_request threads = isorun_job(cpu_binding::core, 2, 1);
  threads.isorun_processes = false;
  ASSERT_TRUE(plan_binding(threads, 2).core.has_value());
  EXPECT_EQ(*plan_binding(isorun_job(cpu_binding::core, 1, 0), 2).core, 0u);

  const binding_plan crowded = plan_binding(isorun_job(cpu_binding::core, 3, 2), 2);
  EXPECT_FALSE(crowded.core);
  EXPECT_EQ(crowded.why_not, "3 nodes on this host, and this process may use 2 cores");
  binding_request nic = isorun_job(cpu_binding::core, 2, 0);
  nic.nic_thread = true;
  EXPECT_EQ(plan_binding(nic, 2).why_not,
            "2 nodes with a NIC thread each on this host, and this process may use 2 cores");
  binding_request mpirun = isorun_job(cpu_binding::core, 2, 0);
  mpirun.launcher_binds = true;
  const binding_plan launcher = plan_binding(mpirun, 16);
  EXPECT_FALSE(launcher.core);
  EXPECT_NE(launcher.why_not.find("mpirun --bind-to core"), std::string::npos) << launcher.why_not;
}

TEST(CoreBinding, NoneNeverBinds) {
  EXPECT_FALSE(plan_binding(isorun_job(cpu_binding::none, 2, 0), 64).core);
  EXPECT_EQ(plan_binding(isorun_job(cpu_binding::none, 2, 0), 64).why_not, "");
}

}  // namespace
