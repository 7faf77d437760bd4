// The settings table (runtime/config.*): ISO_* environment overrides of iso::options.
#include "runtime/config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

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

// The NIC's mode keeps its user-facing names: ISO_NIC's values, options::nic, and the
// enum's earlier name, iso::nic_placement.
TEST(Config, IsoNicSetsTheNicMode) {
  for (const auto& [text, mode] :
       {std::pair{"thread", iso::nic_mode::thread}, std::pair{"inline", iso::nic_mode::inline_poll},
        std::pair{"auto", iso::nic_mode::automatic}}) {
    const scoped_env env("ISO_NIC", text);
    iso::options requested;
    requested.nic = iso::nic_placement::thread;
    const absl::StatusOr<iso::options> effective = iso::runtime::apply_environment(requested);
    ASSERT_TRUE(effective.ok()) << effective.status();
    EXPECT_EQ(effective->nic, mode) << text;
  }
  const scoped_env env("ISO_NIC", "carrier-pigeon");
  const absl::StatusOr<iso::options> bad = iso::runtime::apply_environment({});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("carrier-pigeon"), std::string::npos) << bad.status();
}

TEST(Config, IsoWaitSetsHowNodesWait) {
  for (const auto& [text, mode] :
       {std::pair{"spin", iso::wait_mode::spin}, std::pair{"block", iso::wait_mode::block},
        std::pair{"auto", iso::wait_mode::automatic}}) {
    const scoped_env env("ISO_WAIT", text);
    iso::options requested;
    requested.wait = iso::wait_mode::spin;
    const absl::StatusOr<iso::options> effective = iso::runtime::apply_environment(requested);
    ASSERT_TRUE(effective.ok()) << effective.status();
    EXPECT_EQ(effective->wait, mode) << text;
  }
  {
    const scoped_env env("ISO_WAIT", "politely");
    const absl::StatusOr<iso::options> bad = iso::runtime::apply_environment({});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find("ISO_WAIT is 'politely'"), std::string::npos)
        << bad.status();
  }
  iso::options odd;
  odd.wait = static_cast<iso::wait_mode>(7);
  const absl::StatusOr<iso::options> bad = iso::runtime::apply_environment(odd);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("options.wait"), std::string::npos) << bad.status();
}

TEST(Config, IsoBindSetsTheBinding) {
  for (const auto& [text, mode] :
       {std::pair{"core", iso::cpu_binding::core}, std::pair{"none", iso::cpu_binding::none},
        std::pair{"auto", iso::cpu_binding::automatic}}) {
    const scoped_env env("ISO_BIND", text);
    iso::options requested;
    requested.binding = iso::cpu_binding::none;
    const absl::StatusOr<iso::options> effective = iso::runtime::apply_environment(requested);
    ASSERT_TRUE(effective.ok()) << effective.status();
    EXPECT_EQ(effective->binding, mode) << text;
  }
  const scoped_env env("ISO_BIND", "socket");
  const absl::StatusOr<iso::options> bad = iso::runtime::apply_environment({});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("ISO_BIND is 'socket'; expected auto, core or none"),
            std::string::npos)
      << bad.status();
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

}  // namespace
