// Internals of the typed object layer (iso/object.hpp), not API: how a typed call's
// arguments become bytes, and how an operation's unmarshal turns them back into values,
// when the last argument is a run of elements (std::span) and a result may be a
// std::vector. The wire form of a call with elements is an elements_header, the
// fixed-size arguments' bytes, in order, then the elements' bytes; the element count is
// what remains, so only the last argument may have a length known at run time. A result
// that is a run of elements is an elements_header, then the elements' bytes. (A call or a
// result without elements is the values' bytes alone, as it always was.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace iso::detail {

// Leads a run of elements on the wire: what the sender took the fixed-size arguments and
// each element to be. The caller's types are not the operation's (a literal 1 is an int;
// a vector of int64 meets a span of int32), and without it such bytes would often decode
// as other values; with it they are refused, naming both shapes.
struct elements_header {
  std::uint16_t magic = 0;
  std::uint16_t element_bytes = 0;
  std::uint32_t fixed_bytes = 0;
};
inline constexpr std::uint16_t kElementsMagic = 0xE1E5;
static_assert(sizeof(elements_header) == 8);

template <typename Element>
elements_header elements_header_for(std::size_t fixed_bytes) {
  static_assert(sizeof(Element) <= 0xFFFF, "typed object elements are at most 65535 bytes");
  return {.magic = kElementsMagic,
          .element_bytes = static_cast<std::uint16_t>(sizeof(Element)),
          .fixed_bytes = static_cast<std::uint32_t>(fixed_bytes)};
}

// The header leading `bytes`, if they start with one.
inline std::optional<elements_header> read_elements_header(std::span<const std::byte> bytes) {
  elements_header h;
  if (bytes.size() < sizeof h) return std::nullopt;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.magic != kElementsMagic) return std::nullopt;
  return h;
}

// std::span of any element and extent.
template <typename T>
struct span_traits : std::false_type {};
template <typename T, std::size_t Extent>
struct span_traits<std::span<T, Extent>> : std::true_type {
  using element = std::remove_const_t<T>;
  // What an operation's parameter must be: a read-only view of a run-time length.
  static constexpr bool operation_form = std::is_const_v<T> && Extent == std::dynamic_extent;
};
template <typename T>
inline constexpr bool is_span_v = span_traits<T>::value;

template <typename T>
struct vector_traits : std::false_type {};
template <typename T, typename Allocator>
struct vector_traits<std::vector<T, Allocator>> : std::true_type {
  using element = T;
};
template <typename T>
inline constexpr bool is_vector_v = vector_traits<T>::value;

// What a caller may pass as the elements of a call: a span or a vector.
template <typename T>
inline constexpr bool is_elements_v = is_span_v<T> || is_vector_v<T>;

template <typename... A>
using last_t = std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>;

// Whether the last of A... is a run of elements (by Is), and whether any other one is.
template <template <typename> class Is, typename... A>
constexpr bool last_is() {
  if constexpr (sizeof...(A) == 0) {
    return false;
  } else {
    return Is<last_t<A...>>::value;
  }
}
template <template <typename> class Is, typename Tuple, std::size_t... I>
constexpr bool any_of(std::index_sequence<I...> /*before the last*/) {
  return (Is<std::tuple_element_t<I, Tuple>>::value || ... || false);
}
template <template <typename> class Is, typename... A>
constexpr bool any_before_last() {
  if constexpr (sizeof...(A) == 0) {
    return false;
  } else {
    return any_of<Is, std::tuple<A...>>(std::make_index_sequence<sizeof...(A) - 1>{});
  }
}
template <typename T>
struct is_elements : std::bool_constant<is_elements_v<T>> {};

// Appends the bytes of trivially copyable values.
template <typename... A>
void append_values(std::vector<std::byte>& out, const A&... values) {
  static_assert((std::is_trivially_copyable_v<A> && ...),
                "typed object calls take trivially copyable arguments (and, last, a std::span or "
                "std::vector of trivially copyable elements)");
  std::size_t at = out.size();
  out.resize(at + (sizeof(A) + ... + 0));
  ((std::memcpy(out.data() + at, &values, sizeof(A)), at += sizeof(A)), ...);
}

// A typed call's argument bytes: the fixed-size arguments, then the elements of the last
// one when it is a std::span or std::vector.
template <typename Tuple, std::size_t... I>
std::vector<std::byte> encode_with_elements(const Tuple& args, std::index_sequence<I...>) {
  const std::span elements(std::get<sizeof...(I)>(args));
  using element = std::remove_const_t<typename decltype(elements)::element_type>;
  static_assert(std::is_trivially_copyable_v<element>,
                "the elements of a typed object call's std::span or std::vector argument must "
                "be trivially copyable");
  constexpr std::size_t fixed_bytes = (sizeof(std::tuple_element_t<I, Tuple>) + ... + 0);
  std::vector<std::byte> bytes;
  bytes.reserve(sizeof(elements_header) + fixed_bytes + elements.size_bytes());
  append_values(bytes, elements_header_for<element>(fixed_bytes));
  append_values(bytes, std::get<I>(args)...);
  const std::span<const std::byte> raw = std::as_bytes(elements);
  bytes.insert(bytes.end(), raw.begin(), raw.end());
  return bytes;
}
template <typename... A>
std::vector<std::byte> encode_arguments(const A&... args) {
  static_assert(!any_before_last<is_elements, A...>(),
                "only the last argument of a typed object call may be a std::span or "
                "std::vector (its elements follow the fixed-size arguments)");
  if constexpr (last_is<is_elements, A...>()) {
    return encode_with_elements(std::forward_as_tuple(args...),
                                std::make_index_sequence<sizeof...(A) - 1>{});
  } else {
    std::vector<std::byte> bytes;
    append_values(bytes, args...);
    return bytes;
  }
}

[[noreturn]] void throw_argument_size(std::size_t got, std::size_t want);
[[noreturn]] void throw_element_size(const std::string& operation, std::size_t got,
                                     std::size_t fixed, std::size_t element);
// A call whose bytes lack an elements_header (got: none) or carry another shape.
[[noreturn]] void throw_elements_shape(const std::string& operation,
                                       const std::optional<elements_header>& got, std::size_t fixed,
                                       std::size_t element);

// Bytes -> a tuple of trivially copyable values, or invalid_argument.
template <typename... Args>
std::tuple<Args...> unpack_arguments(std::span<const std::byte> bytes) {
  static_assert((std::is_trivially_copyable_v<Args> && ...),
                "typed operations take trivially copyable arguments (and, last, a "
                "std::span<const T> of trivially copyable T)");
  constexpr std::size_t want = (sizeof(Args) + ... + 0);
  if (bytes.size() != want) throw_argument_size(bytes.size(), want);
  std::tuple<Args...> values;
  std::size_t at = 0;
  std::apply(
      [&](auto&... v) { ((std::memcpy(&v, bytes.data() + at, sizeof(v)), at += sizeof(v)), ...); },
      values);
  return values;
}

// The decoded arguments of an operation whose last parameter is std::span<const Element>:
// the fixed-size ones, and the elements in storage aligned for Element (the argument bytes
// are not), which the span the guard and body get looks at.
template <typename Fixed, typename Element>
struct arguments_with_elements {
  Fixed fixed;
  std::vector<Element> elements;
};

template <typename Tuple, typename Indices>
struct first_of;
template <typename Tuple, std::size_t... I>
struct first_of<Tuple, std::index_sequence<I...>> {
  using type = std::tuple<std::tuple_element_t<I, Tuple>...>;
};

template <typename Tuple>
struct tuple_bytes;
template <typename... B>
struct tuple_bytes<std::tuple<B...>> {
  static constexpr std::size_t size = (sizeof(B) + ... + 0);
  static std::tuple<B...> unpack(std::span<const std::byte> bytes) {
    return unpack_arguments<B...>(bytes);
  }
};

// Parameters A... without a run of elements: decoded as a tuple, as they always were.
template <typename... A>
struct fixed_arguments {
  using decoded = std::tuple<A...>;
  static decoded unpack(std::span<const std::byte> bytes, const std::string& /*operation*/) {
    return unpack_arguments<A...>(bytes);
  }
  template <typename F>
  static decltype(auto) apply(F&& f, const decoded& args) {
    return std::apply(std::forward<F>(f), args);
  }
};

// Parameters A... whose last is std::span<const T>.
template <typename... A>
struct arguments_and_elements {
  using span_type = last_t<A...>;
  using element = typename span_traits<span_type>::element;
  static_assert(span_traits<span_type>::operation_form,
                "a typed operation takes its run of elements as std::span<const T>");
  static_assert(std::is_trivially_copyable_v<element>,
                "the elements of a typed operation's std::span<const T> must be trivially "
                "copyable");
  using fixed =
      typename first_of<std::tuple<A...>, std::make_index_sequence<sizeof...(A) - 1>>::type;
  using decoded = arguments_with_elements<fixed, element>;

  static decoded unpack(std::span<const std::byte> with_header, const std::string& operation) {
    constexpr std::size_t fixed_size = tuple_bytes<fixed>::size;
    const std::optional<elements_header> header = read_elements_header(with_header);
    if (!header || header->fixed_bytes != fixed_size || header->element_bytes != sizeof(element)) {
      throw_elements_shape(operation, header, fixed_size, sizeof(element));
    }
    const std::span<const std::byte> bytes = with_header.subspan(sizeof(elements_header));
    if (bytes.size() < fixed_size || (bytes.size() - fixed_size) % sizeof(element) != 0) {
      throw_element_size(operation, bytes.size(), fixed_size, sizeof(element));
    }
    decoded args;
    args.fixed = tuple_bytes<fixed>::unpack(bytes.first(fixed_size));
    args.elements.resize((bytes.size() - fixed_size) / sizeof(element));
    if (!args.elements.empty()) {
      std::memcpy(args.elements.data(), bytes.data() + fixed_size, bytes.size() - fixed_size);
    }
    return args;
  }
  template <typename F>
  static decltype(auto) apply(F&& f, const decoded& args) {
    return std::apply(
        [&](const auto&... v) -> decltype(auto) {
          return std::forward<F>(f)(v..., std::span<const element>(args.elements));
        },
        args.fixed);
  }
};

// A typed operation's parameters, as one type. A typed call names its arguments' list the
// same way, each taken as the operation takes it (a std::vector, or a std::span of any
// extent, as a std::span<const T>), and the two must be the same type: values of other
// types but of the same sizes would otherwise be read as other values. Integers count by
// size and signedness alone (long long is std::int64_t's bytes, char and std::byte are
// one byte's), since the same bytes mean the same value in either.
template <typename... A>
struct parameter_list {};
template <typename T>
struct representation {
  using type = T;
};
template <typename T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool> &&
         sizeof(T) <= 8) struct representation<T> {
  using type = std::conditional_t<
      std::is_signed_v<T>,
      std::conditional_t<
          sizeof(T) == 1, std::int8_t,
          std::conditional_t<sizeof(T) == 2, std::int16_t,
                             std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>>>,
      std::conditional_t<
          sizeof(T) == 1, std::uint8_t,
          std::conditional_t<sizeof(T) == 2, std::uint16_t,
                             std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>>;
};
template <>
struct representation<std::byte> {
  using type = std::uint8_t;
};
template <typename T>
struct as_parameter {
  using type = typename representation<T>::type;
};
template <typename T, std::size_t Extent>
struct as_parameter<std::span<T, Extent>> {
  using type = std::span<const typename representation<std::remove_const_t<T>>::type>;
};
template <typename T, typename Allocator>
struct as_parameter<std::vector<T, Allocator>> {
  using type = std::span<const typename representation<T>::type>;
};
template <typename... A>
using parameters_of = parameter_list<typename as_parameter<std::remove_cvref_t<A>>::type...>;

// How an operation with parameters A... (after the state) decodes its argument bytes
// (unpack, into `decoded`) and hands them to its guards and body (apply).
template <typename... A>
struct operation_arguments
    : std::conditional_t<last_is<span_traits, A...>(), arguments_and_elements<A...>,
                         fixed_arguments<A...>> {
  static_assert(!any_before_last<span_traits, A...>(),
                "only the last parameter of a typed operation may be a std::span (its elements "
                "follow the fixed-size arguments)");
  using parameters = parameters_of<A...>;
};

// Appends a body's result: a trivially copyable value's bytes, or the elements' of a
// std::vector or of a std::span (into the state: copied here, while the body's caller
// still holds the state as it was).
template <typename R>
void append_result(std::vector<std::byte>& out, const R& r) {
  if constexpr (is_elements_v<R>) {
    const std::span elements(r);
    static_assert(
        std::is_trivially_copyable_v<
            std::remove_const_t<typename decltype(elements)::element_type>>,
        "a typed operation's std::vector or std::span result holds trivially copyable elements");
    using element = std::remove_const_t<typename decltype(elements)::element_type>;
    const elements_header header = elements_header_for<element>(0);
    const std::span<const std::byte> raw = std::as_bytes(elements);
    out.reserve(out.size() + sizeof header + raw.size());
    const std::span<const std::byte> head = std::as_bytes(std::span(&header, 1));
    out.insert(out.end(), head.begin(), head.end());
    out.insert(out.end(), raw.begin(), raw.end());
  } else {
    static_assert(std::is_trivially_copyable_v<R>,
                  "typed operations return trivially copyable values or a std::vector or "
                  "std::span of them");
    const std::size_t at = out.size();
    out.resize(at + sizeof(R));
    std::memcpy(out.data() + at, &r, sizeof(R));
  }
}

}  // namespace iso::detail
