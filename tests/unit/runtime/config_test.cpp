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

}  // namespace
