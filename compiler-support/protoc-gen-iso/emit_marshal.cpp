// The marshaling triple of one message: iso_gather_size, iso_gather, iso_unmarshal. The
// wire layout they share is in compiler-support/README.md: the fixed run, the length block,
// then each variable field in declaration order.
#include "absl/strings/str_cat.h"
#include "compiler-support/protoc-gen-iso/emit.hpp"

namespace iso::codegen {

namespace {

// `if (absl::Status s = <call>; !s.ok()) return s;`
std::string check(const std::string& indent, const std::string& call) {
  return absl::StrCat(indent, "if (::absl::Status s = ", call, "; !s.ok()) return s;\n");
}

// A repeated message whose element is all fixed run and exactly as large as its struct can
// be sent and received as one block, as Orca did for arrays of records.
struct element_layout {
  bool flat = false;      // only fixed fields
  bool has_bool = false;  // a bool among them (the block must be checked before copying)
  std::size_t size = 0;   // the element's fixed run
};

element_layout layout_of(const field_model& f) {
  message_model e = model_of(f.descriptor->message_type());
  element_layout l;
  l.flat = e.variable.empty() && e.fixed_size > 0;
  l.size = e.fixed_size;
  for (const field_model& x : e.fixed) l.has_bool = l.has_bool || x.is_bool;
  return l;
}

std::string size_of(const message_model& m) {
  std::string out = absl::StrCat("::iso::gather_size iso_gather_size([[maybe_unused]] const ",
                                 m.name, "& value) {\n  ::iso::gather_size size;\n");
  if (m.fixed_size > 0) absl::StrAppend(&out, "  size.add_bytes(", m.fixed_size, ");\n");
  if (m.length_words > 0) absl::StrAppend(&out, "  size.add_lengths(", m.length_words, ");\n");
  for (const field_model& f : m.variable) {
    const std::string v = "value." + f.member;
    switch (f.shape) {
      case field_shape::string:
        absl::StrAppend(&out, "  size.add_bytes(", v, ".size());\n");
        break;
      case field_shape::optional_string:
        absl::StrAppend(&out, "  if (", v, ") size.add_bytes(", v, "->size());\n");
        break;
      case field_shape::optional_scalar:
        absl::StrAppend(&out, "  if (", v, ") size.add_bytes(", f.size, ");\n");
        break;
      case field_shape::repeated_scalar:
        absl::StrAppend(&out, "  size.add_bytes(", v, ".size() * ", f.size, ");\n");
        break;
      case field_shape::repeated_string:
        absl::StrAppend(&out, "  size.add_lengths(", v,
                        ".size());\n  for (const std::string& e : ", v,
                        ") size.add_bytes(e.size());\n");
        break;
      case field_shape::message:
        absl::StrAppend(&out, "  size += iso_gather_size(", v, ");\n");
        break;
      case field_shape::optional_message:
        absl::StrAppend(&out, "  if (", v, ") size += iso_gather_size(*", v, ");\n");
        break;
      case field_shape::repeated_message: {
        element_layout l = layout_of(f);
        if (l.flat) {
          absl::StrAppend(&out, "  if constexpr (sizeof(", f.cpp_type, ") == ", l.size,
                          ") {\n    size.add_bytes(", v, ".size() * ", l.size,
                          ");\n  } else {\n    for (const auto& e : ", v,
                          ") size += iso_gather_size(e);\n  }\n");
        } else {
          absl::StrAppend(&out, "  for (const auto& e : ", v, ") size += iso_gather_size(e);\n");
        }
        break;
      }
      case field_shape::fixed:
        break;
    }
  }
  return out + "  return size;\n}\n\n";
}

std::string gather_of(const message_model& m) {
  std::string out = absl::StrCat("void iso_gather([[maybe_unused]] const ", m.name,
                                 "& value, [[maybe_unused]] ::iso::gather_list& out) {\n");
  if (m.fixed_size > 0) {
    // The first member sits at the struct's address, and the run follows it unpadded.
    absl::StrAppend(&out, "  out.add(&value, ", m.fixed_size, ");\n");
  }
  if (m.length_words > 0) {
    absl::StrAppend(&out, "  std::uint64_t* lengths = out.lengths(", m.length_words, ");\n");
  }
  std::size_t word = 0;
  for (const field_model& f : m.variable) {
    const std::string v = "value." + f.member;
    switch (f.shape) {
      case field_shape::string:
      case field_shape::repeated_scalar:
      case field_shape::repeated_string:
      case field_shape::repeated_message:
        absl::StrAppend(&out, "  lengths[", word++, "] = ", v, ".size();\n");
        break;
      case field_shape::optional_scalar:
      case field_shape::optional_message:
        absl::StrAppend(&out, "  lengths[", word++, "] = ", v, " ? 1 : 0;\n");
        break;
      case field_shape::optional_string:
        absl::StrAppend(&out, "  lengths[", word++, "] = ", v, " ? ", v, "->size() + 1 : 0;\n");
        break;
      case field_shape::message:
      case field_shape::fixed:
        break;
    }
  }
  for (const field_model& f : m.variable) {
    const std::string v = "value." + f.member;
    switch (f.shape) {
      case field_shape::string:
        absl::StrAppend(&out, "  out.add(", v, ".data(), ", v, ".size());\n");
        break;
      case field_shape::optional_string:
        absl::StrAppend(&out, "  if (", v, ") out.add(", v, "->data(), ", v, "->size());\n");
        break;
      case field_shape::optional_scalar:
        absl::StrAppend(&out, "  if (", v, ") out.add(&*", v, ", ", f.size, ");\n");
        break;
      case field_shape::repeated_scalar:
        absl::StrAppend(&out, "  out.add(", v, ".data(), ", v, ".size() * ", f.size, ");\n");
        break;
      case field_shape::repeated_string:
        absl::StrAppend(&out, "  {\n    std::uint64_t* sizes = out.lengths(", v,
                        ".size());\n    for (std::size_t i = 0; i < ", v,
                        ".size(); ++i) sizes[i] = ", v,
                        "[i].size();\n    for (const std::string& e : ", v,
                        ") out.add(e.data(), e.size());\n  }\n");
        break;
      case field_shape::message:
        absl::StrAppend(&out, "  iso_gather(", v, ", out);\n");
        break;
      case field_shape::optional_message:
        absl::StrAppend(&out, "  if (", v, ") iso_gather(*", v, ", out);\n");
        break;
      case field_shape::repeated_message: {
        element_layout l = layout_of(f);
        if (l.flat) {
          absl::StrAppend(&out, "  if constexpr (sizeof(", f.cpp_type, ") == ", l.size,
                          ") {\n    out.add(", v, ".data(), ", v, ".size() * ", l.size,
                          ");\n  } else {\n    for (const auto& e : ", v,
                          ") iso_gather(e, out);\n  }\n");
        } else {
          absl::StrAppend(&out, "  for (const auto& e : ", v, ") iso_gather(e, out);\n");
        }
        break;
      }
      case field_shape::fixed:
        break;
    }
  }
  return out + "}\n\n";
}

// Checks the bool bytes of a fixed run at `at` before it is copied into C++ bools.
std::string check_bools(const message_model& m, const std::string& at, const std::string& indent) {
  std::string out;
  std::size_t offset = 0;
  for (const field_model& f : m.fixed) {
    if (f.is_bool) {
      absl::StrAppend(&out, indent, "if (std::to_integer<unsigned>(", at, "[", offset,
                      "]) > 1) {\n", indent, "  return in.malformed(",
                      quoted(f.descriptor->full_name()), ", \"a bool byte is neither 0 nor 1\");\n",
                      indent, "}\n");
    }
    offset += f.size;
  }
  return out;
}

std::string unmarshal_of(const message_model& m) {
  const std::string& full = m.descriptor->full_name();
  std::string out = absl::StrCat(
      "::absl::Status iso_unmarshal([[maybe_unused]] ::iso::unmarshal_reader& in, "
      "[[maybe_unused]] ",
      m.name, "& out) {\n");
  if (m.fixed_size > 0) {
    absl::StrAppend(
        &out, "  const std::byte* fixed = nullptr;\n",
        check("  ", absl::StrCat("in.take(", m.fixed_size, ", ", quoted(full), ", fixed)")),
        check_bools(m, "fixed", "  "), "  std::memcpy(static_cast<void*>(&out), fixed, ",
        m.fixed_size, ");\n");
  }
  if (m.length_words > 0) {
    absl::StrAppend(&out, "  const std::byte* block = nullptr;\n",
                    check("  ", absl::StrCat("in.take(", m.length_words * 8, ", ",
                                             quoted(full + " (length block)"), ", block)")),
                    "  std::uint64_t lengths[", m.length_words,
                    "];\n  std::memcpy(lengths, block, sizeof lengths);\n");
  }
  std::size_t word = 0;
  for (const field_model& f : m.variable) {
    const std::string v = "out." + f.member;
    const std::string what = quoted(f.descriptor->full_name());
    const std::string n = absl::StrCat("lengths[", word, "]");
    if (f.shape != field_shape::message) ++word;
    const std::string presence_check = absl::StrCat("  if (", n, " > 1) return in.malformed(", what,
                                                    ", \"a presence word is neither 0 nor 1\");\n");
    switch (f.shape) {
      case field_shape::string:
        out += check("  ", absl::StrCat("in.read_string(", n, ", ", v, ", ", what, ")"));
        break;
      case field_shape::optional_string:
        absl::StrAppend(&out, "  if (", n, " == 0) {\n    ", v, ".reset();\n  } else {\n",
                        check("    ", absl::StrCat("in.read_string(", n, " - 1, ", v,
                                                   ".emplace(), ", what, ")")),
                        "  }\n");
        break;
      case field_shape::optional_scalar: {
        absl::StrAppend(&out, presence_check, "  if (", n, " == 0) {\n    ", v,
                        ".reset();\n  } else {\n    const std::byte* at = nullptr;\n",
                        check("    ", absl::StrCat("in.take(", f.size, ", ", what, ", at)")));
        if (f.cpp_type == "bool") {
          absl::StrAppend(
              &out, "    if (std::to_integer<unsigned>(at[0]) > 1) {\n      return in.malformed(",
              what, ", \"a bool byte is neither 0 nor 1\");\n    }\n");
        }
        absl::StrAppend(&out, "    std::memcpy(&", v, ".emplace(), at, ", f.size, ");\n  }\n");
        break;
      }
      case field_shape::repeated_scalar:
        out += check("  ", absl::StrCat("in.read_vector(", n, ", ", v, ", ", what, ")"));
        break;
      case field_shape::repeated_string:
        absl::StrAppend(
            &out, "  {\n    const std::byte* sizes = nullptr;\n",
            check("    ", absl::StrCat("in.take_array(", n, ", 8, ", what, ", sizes)")), "    ", v,
            ".resize(", n, ");\n    for (std::size_t i = 0; i < ", v,
            ".size(); ++i) {\n      std::uint64_t size = 0;\n"
            "      std::memcpy(&size, sizes + i * 8, 8);\n",
            check("      ", absl::StrCat("in.read_string(size, ", v, "[i], ", what, ")")),
            "    }\n  }\n");
        break;
      case field_shape::message:
        out += check("  ", absl::StrCat("iso_unmarshal(in, ", v, ")"));
        break;
      case field_shape::optional_message:
        absl::StrAppend(
            &out, presence_check, "  if (", n, " == 0) {\n    ", v, ".reset();\n  } else {\n",
            check("    ", absl::StrCat("iso_unmarshal(in, ", v, ".emplace())")), "  }\n");
        break;
      case field_shape::repeated_message: {
        element_layout l = layout_of(f);
        const std::string loop = absl::StrCat(
            check("  ", absl::StrCat("in.check_count(", n, ", ",
                                     min_wire_size(f.descriptor->message_type()), ", ", what, ")")),
            "  ", v, ".resize(", n, ");\n  for (auto& e : ", v, ") {\n",
            check("    ", "iso_unmarshal(in, e)"), "  }\n");
        if (l.flat && !l.has_bool) {
          absl::StrAppend(
              &out, "  if constexpr (sizeof(", f.cpp_type, ") == ", l.size, ") {\n",
              check("    ", absl::StrCat("in.read_vector(", n, ", ", v, ", ", what, ")")),
              "  } else {\n", loop, "  }\n");
        } else {
          out += loop;
        }
        break;
      }
      case field_shape::fixed:
        break;
    }
  }
  return out + "  return ::absl::OkStatus();\n}\n\n";
}

}  // namespace

std::string marshal_definitions(const message_model& m) {
  return size_of(m) + gather_of(m) + unmarshal_of(m);
}

}  // namespace iso::codegen
