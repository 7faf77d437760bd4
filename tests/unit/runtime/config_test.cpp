// The settings table (runtime/config.*): ISO_* environment overrides of iso::options.
#include "runtime/config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "iso/options.hpp"

namespace {

// Sets an environment variable for the scope of one test, and unsets it after.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
  ~scoped_env() { ::unsetenv(name_.c_str()); }

 private:
  std::string name_;
};

// Each of `names`, set in `variable`, gives its value in `member` (over `other`, set in
// code); `unknown` is invalid_argument, with `refusal` in the message.
template <typename E>
void expect_names(const char* variable, E iso::options::*member, E other,
                  std::initializer_list<std::pair<const char*, E>> names, const char* unknown,
                  const std::string& refusal) {
  for (const auto& [text, value] : names) {
    const scoped_env env(variable, text);
    iso::options requested;
    requested.*member = other;
    const absl::StatusOr<iso::options> effective = iso::runtime::apply_environment(requested);
    ASSERT_TRUE(effective.ok()) << effective.status();
    EXPECT_EQ((*effective).*member, value) << text;
  }
  const scoped_env env(variable, unknown);
  const absl::StatusOr<iso::options> bad = iso::runtime::apply_environment({});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(refusal), std::string::npos) << bad.status();
}

// The NIC's mode keeps its user-facing names: ISO_NIC's values, options::nic, and the
// enum's earlier name, iso::nic_placement.
TEST(Config, IsoNicSetsTheNicMode) {
  expect_names<iso::nic_placement>("ISO_NIC", &iso::options::nic, iso::nic_placement::thread,
                                   {{"thread", iso::nic_mode::thread},
                                    {"inline", iso::nic_mode::inline_poll},
                                    {"auto", iso::nic_mode::automatic}},
                                   "carrier-pigeon", "carrier-pigeon");
}

TEST(Config, IsoWaitSetsHowNodesWait) {
  expect_names<iso::wait_mode>("ISO_WAIT", &iso::options::wait, iso::wait_mode::spin,
                               {{"spin", iso::wait_mode::spin},
                                {"block", iso::wait_mode::block},
                                {"auto", iso::wait_mode::automatic}},
                               "politely", "ISO_WAIT is 'politely'");
  iso::options odd;
  odd.wait = static_cast<iso::wait_mode>(7);
  const absl::StatusOr<iso::options> bad = iso::runtime::apply_environment(odd);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("options.wait"), std::string::npos) << bad.status();
}

TEST(Config, IsoBindSetsTheBinding) {
  expect_names<iso::cpu_binding>("ISO_BIND", &iso::options::binding, iso::cpu_binding::none,
                                 {{"core", iso::cpu_binding::core},
                                  {"none", iso::cpu_binding::none},
                                  {"auto", iso::cpu_binding::automatic}},
                                 "socket", "ISO_BIND is 'socket'; expected auto, core or none");
}

// The transport fault that shows paranoid mode at work is a test setting: not a field of
// the public options, still read from ISO_TEST_FAULT, still checked, still printed.
template <typename T>
concept has_test_fault = requires(T o) {
  o.test_fault;
};
static_assert(!has_test_fault<iso::options>);

TEST(Config, TestFaultComesFromTheEnvironmentOnly) {
  {
    const absl::StatusOr<iso::runtime::test_settings> none = iso::runtime::read_test_settings();
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_EQ(none->fault, "");
  }
  {
    const scoped_env env("ISO_TEST_FAULT", "corrupt:1:20:256");
    const absl::StatusOr<iso::runtime::test_settings> set = iso::runtime::read_test_settings();
    ASSERT_TRUE(set.ok()) << set.status();
    EXPECT_EQ(set->fault, "corrupt:1:20:256");
    bool printed = false;
    for (const iso::runtime::config_row& row : iso::runtime::describe({})) {
      if (std::string(row.name) == "ISO_TEST_FAULT") printed = row.value == "corrupt:1:20:256";
    }
    EXPECT_TRUE(printed);
  }
  const scoped_env env("ISO_TEST_FAULT", "scramble:1:20");
  const absl::StatusOr<iso::runtime::test_settings> bad = iso::runtime::read_test_settings();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("ISO_TEST_FAULT is 'scramble:1:20'"), std::string::npos)
      << bad.status();
}

// Emulated hosts of several nodes each (tools/netns-job.sh --per-host): a count, checked.
TEST(Config, NodesPerEmulatedHostAreACountFromOneUp) {
  {
    const absl::StatusOr<iso::runtime::test_settings> none = iso::runtime::read_test_settings();
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_EQ(none->nodes_per_host, 1U);
  }
  {
    const scoped_env env("ISO_TEST_NODES_PER_HOST", "2");
    const absl::StatusOr<iso::runtime::test_settings> two = iso::runtime::read_test_settings();
    ASSERT_TRUE(two.ok()) << two.status();
    EXPECT_EQ(two->nodes_per_host, 2U);
  }
  for (const char* bad : {"0", "-1", "two", "5000"}) {
    const scoped_env env("ISO_TEST_NODES_PER_HOST", bad);
    const absl::StatusOr<iso::runtime::test_settings> got = iso::runtime::read_test_settings();
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(got.status().message().find("ISO_TEST_NODES_PER_HOST is '"), std::string::npos)
        << got.status();
  }
}

}  // namespace
