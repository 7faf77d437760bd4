// The descriptor table generated for an object type (kinds.proto's CounterObject): what the
// object runtime will register the type with.
#include <gtest/gtest.h>

#include <string_view>
#include <type_traits>

#include "iso/object_type.hpp"
#include "kinds.iso.hpp"

namespace {

namespace plain = iso::test::kinds::plain;

TEST(ObjectTypeDescriptor, NamesStatePlacementAndRatio) {
  const iso::object_type_descriptor& t = plain::CounterObject::descriptor();
  EXPECT_EQ(t.name, "iso.test.kinds.CounterObject");
  EXPECT_EQ(t.state_type, "iso.test.kinds.Counter");
  EXPECT_EQ(t.placement, iso::placement_hint::replicated);
  EXPECT_DOUBLE_EQ(t.read_write_ratio, 2.5);
  static_assert(std::is_same_v<plain::CounterObject::state, plain::Counter>);
}

TEST(ObjectTypeDescriptor, ListsOperationsInDeclarationOrderWithTheirKinds) {
  const iso::object_type_descriptor& t = plain::CounterObject::descriptor();
  ASSERT_EQ(t.operations.size(), 2U);
  const iso::operation_descriptor& add = t.operations[0];
  EXPECT_EQ(add.id, 0U);
  EXPECT_EQ(add.name, "Add");
  EXPECT_EQ(add.kind, iso::operation_kind::write);
  EXPECT_DOUBLE_EQ(add.frequency, 1);
  EXPECT_EQ(add.argument_type, "iso.test.kinds.Delta");
  EXPECT_EQ(add.result_type, "iso.test.kinds.Empty");
  const iso::operation_descriptor& get = t.operations[1];
  EXPECT_EQ(get.id, 1U);
  EXPECT_EQ(get.name, "Get");
  EXPECT_EQ(get.kind, iso::operation_kind::read);
  EXPECT_DOUBLE_EQ(get.frequency, 4);
  EXPECT_TRUE(get.guards.empty());
  EXPECT_EQ(get.result_type, "iso.test.kinds.Counter");
}

TEST(ObjectTypeDescriptor, CarriesGuardAlternativesWithTheirFields) {
  const iso::operation_descriptor& add = plain::CounterObject::descriptor().operations[0];
  ASSERT_EQ(add.guards.size(), 2U);
  EXPECT_EQ(add.guards[0].name, "below_limit");
  ASSERT_EQ(add.guards[0].reads.size(), 2U);
  EXPECT_EQ(add.guards[0].reads[0], "state.value");
  EXPECT_EQ(add.guards[0].reads[1], "arg.by");
  ASSERT_EQ(add.guards[0].writes.size(), 1U);
  EXPECT_EQ(add.guards[0].writes[0], "state.value");
  EXPECT_EQ(add.guards[1].name, "always");
  EXPECT_TRUE(add.guards[1].reads.empty());
  ASSERT_EQ(add.guards[1].writes.size(), 1U);
  EXPECT_EQ(add.guards[1].writes[0], "state.owner");
}

TEST(ObjectTypeDescriptor, TypedOperationNamesMatchTheTable) {
  using add = plain::CounterObject::Add;
  using get = plain::CounterObject::Get;
  static_assert(add::id == 0 && get::id == 1);
  static_assert(add::kind == iso::operation_kind::write);
  static_assert(get::kind == iso::operation_kind::read);
  static_assert(std::is_same_v<add::argument, plain::Delta>);
  static_assert(std::is_same_v<add::result, plain::Empty>);
  static_assert(std::is_same_v<get::result, plain::Counter>);
  EXPECT_EQ(iso_type_name(add::argument{}),
            plain::CounterObject::descriptor().operations[add::id].argument_type);
}

}  // namespace
