#pragma once
/// Typed records to bytes and back (Flink's TypeSerializer), and the deterministic key hash of
/// Flink's key-group assignment (Java's `hashCode` of the same values).
///
/// Supported: arithmetic types, bool, enums (of a fixed underlying type), std::string, std::optional, std::pair, std::tuple,
/// std::vector, std::array, std::map and std::unordered_map of supported types, and user structs
/// declared with FLINT_RECORD (runtime/streaming/record_type.hpp), nested in any of these. Other
/// types still compile (operators are instantiated for every record type a program names); they
/// fail at run time when a record of them must cross the network or be a key. A declared record
/// with a field of another type fails at compile time (`detail::check_field`, naming the type).
///
/// The encoding (host byte order; every supported platform is little-endian), with no type tags or
/// field names, so a record costs its payload plus its lengths:
///   number, enum   its bytes (an enum as its underlying type, which must be fixed: `enum class`
///                  or `enum e : int`)
///   bool           1 byte, 0 or 1 (anything else is refused)
///   string         u32 length, the bytes
///   vector         u32 count, the elements
///   map            u32 count, then key, value, key, value... (an unordered_map in its iteration
///                  order: equal maps may write different bytes, so one as a state key is unwise);
///                  a key read twice is refused
///   array<T, N>    the N elements, no count
///   optional       1 byte, 0 (empty) or 1, then the value if 1
///   pair, tuple    the elements in order
///   FLINT_RECORD   the declared fields in declared order, nothing else: adding, removing or
///                  reordering a field changes the format (state written before no longer reads)
/// Every encoding delimits itself, so one value is never a prefix of another of the same type
/// (map state relies on that). Decoding is bounded: a length or count is checked against the bytes
/// left before it sizes anything, and truncated or garbage bytes throw std::runtime_error.

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

namespace flint::streaming {

/// Reads a record's bytes front to back; throws on a truncated record. Lengths and counts come
/// from the network or a state file: they are checked against the bytes left before they size
/// anything (`take_claimed`, `check_count`), so a few bytes cannot claim gigabytes.
class byte_reader {
public:
  explicit byte_reader(std::span<const char> bytes)
    : p_(bytes.data()),
      end_(bytes.data() + bytes.size()) {}
  void read(void* out, std::size_t n) {
    if (remaining() < n)
      throw std::runtime_error(
        "record is shorter than its type needs (corrupt or mismatched record)");
    std::memcpy(out, p_, n);
    p_ += n;
  }
  const char* take(std::size_t n) {
    if (remaining() < n)
      throw std::runtime_error(
        "record is shorter than its type needs (corrupt or mismatched record)");
    auto at = p_;
    p_ += n;
    return at;
  }
  /// Takes the `n` bytes a length read from the record claims for a `what` ("string").
  const char* take_claimed(std::size_t n, const char* what) {
    if (remaining() < n) [[unlikely]]
      refuse_claim(n, 0, what);
    auto at = p_;
    p_ += n;
    return at;
  }
  /// Checks a count read from the record before it sizes anything: `count` elements of at least
  /// `min_size` bytes each (taken as 1 when an element may encode to nothing) must fit in the
  /// bytes left. `what` names the container ("vector").
  void check_count(std::uint64_t count, std::size_t min_size, const char* what) const {
    if (count > remaining() / (min_size == 0 ? 1 : min_size)) [[unlikely]]
      refuse_claim(count, min_size == 0 ? 1 : min_size, what);
  }
  std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - p_); }
  bool at_end() const noexcept { return p_ == end_; }

private:
  /// "record claims a string of N bytes" or, with an element size, "a vector of N elements of at
  /// least S bytes each", then the bytes left.
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_claim(std::uint64_t claimed,
                                                           std::size_t min_size,
                                                           const char* what) const {
    auto claim = min_size == 0
      ? std::to_string(claimed) + " bytes"
      : std::to_string(claimed) + " elements of at least " + std::to_string(min_size)
        + (min_size == 1 ? " byte each" : " bytes each");
    throw std::runtime_error("record claims a " + std::string(what) + " of " + claim + ", but "
                             + std::to_string(remaining()) + " bytes are left "
                             + "(corrupt or mismatched record)");
  }

  const char* p_;
  const char* end_;
};

template <class T>
struct type_serializer;

/// A user struct declared with FLINT_RECORD or FLINT_RECORD_MEMBERS: `flint_record_fields`, found
/// by argument-dependent lookup, ties its fields in declared order.
template <class T>
concept record_type = requires(T& value, const T& read_only) {
  flint_record_fields(value);
  flint_record_fields(read_only);
};

namespace detail {
template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T>
struct is_tuple : std::false_type {};
template <class... Ts>
struct is_tuple<std::tuple<Ts...>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_array : std::false_type {};
template <class T, std::size_t N>
struct is_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_map<std::map<K, V, C, A>> : std::true_type {};
template <class K, class V, class H, class E, class A>
struct is_map<std::unordered_map<K, V, H, E, A>> : std::true_type {};

/// An enum with a fixed underlying type (`enum class e`, `enum e : int`): every value of that
/// type is one of its values, so any bytes read as one are. (Reading a value outside an unfixed
/// enum's range is undefined behaviour.)
template <class T>
inline constexpr bool is_fixed_enum_v = std::is_enum_v<T> && requires {
  T{std::underlying_type_t<T>{}};
};

/// Numbers, bool and enums: written as their bytes.
template <class T>
inline constexpr bool is_plain_v = std::is_arithmetic_v<T> || is_fixed_enum_v<T>;

/// std::tuple<F...> of a record's field types, cv and references removed.
template <class T>
struct record_field_types;
template <class T>
  requires record_type<T>
struct record_field_types<T> {
  template <class... Fs>
  static std::tuple<std::remove_cvref_t<Fs>...> strip(std::tuple<Fs...>*);
  using type = decltype(strip(
    static_cast<decltype(flint_record_fields(std::declval<T&>()))*>(nullptr)));
};

template <class T>
constexpr bool serializable();

/// Instantiated for each field of a declared record: a field type the serializer cannot write
/// stops the build here, and the compiler names it as `Field` in this template's instantiation.
template <class Field, class Record>
struct check_field {
  static_assert(!std::is_enum_v<Field> || is_fixed_enum_v<Field>,
                "a FLINT_RECORD field's enum needs a fixed underlying type (`enum e : int`): bytes "
                "read from a channel may hold any value of that type; the enum is `Field` in "
                "check_field<Field, Record> above");
  static_assert(std::is_enum_v<Field> || serializable<Field>(),
                "a FLINT_RECORD field has a type type_serializer cannot write: it is `Field` in "
                "check_field<Field, Record> above (supported: numbers, bool, enums, std::string, "
                "optional, pair, tuple, vector, array, map, unordered_map and FLINT_RECORD "
                "structs of these)");
  static constexpr bool value = true;
};

template <class Record, class... Fields>
constexpr bool check_record(std::tuple<Fields...>*) {
  static_assert(std::is_default_constructible_v<Record>,
                "a FLINT_RECORD type needs a default constructor: records are read into a "
                "default-constructed value");
  return (check_field<Fields, Record>::value && ...);
}

template <class T>
constexpr bool serializable() {
  if constexpr (is_plain_v<T> || std::is_same_v<T, std::string>)
    return true;
  else if constexpr (is_pair<T>::value)
    return serializable<typename T::first_type>() && serializable<typename T::second_type>();
  else if constexpr (is_tuple<T>::value)
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (serializable<std::tuple_element_t<I, T>>() && ...);
    }
  (std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (is_vector<T>::value || is_optional<T>::value || is_array<T>::value)
    return serializable<typename T::value_type>();
  else if constexpr (is_map<T>::value)
    return serializable<typename T::key_type>() && serializable<typename T::mapped_type>();
  else if constexpr (record_type<T>)
    return check_record<T>(static_cast<typename record_field_types<T>::type*>(nullptr));
  else return false;
}

/// The fewest bytes `type_serializer<T>` writes for any T: what each element of a vector or map
/// takes at least, so a count can be checked against the bytes left.
template <class T>
constexpr std::size_t min_encoded_size() {
  if constexpr (is_plain_v<T>)
    return sizeof(T);
  else if constexpr (std::is_same_v<T, std::string> || is_vector<T>::value || is_map<T>::value)
    return 4;
  else if constexpr (is_optional<T>::value)
    return 1;
  else if constexpr (is_array<T>::value)
    return std::tuple_size_v<T> * min_encoded_size<typename T::value_type>();
  else if constexpr (is_pair<T>::value)
    return min_encoded_size<std::remove_cv_t<typename T::first_type>>()
      + min_encoded_size<std::remove_cv_t<typename T::second_type>>();
  else if constexpr (is_tuple<T>::value)
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (std::size_t{0} + ...
              + min_encoded_size<std::remove_cv_t<std::tuple_element_t<I, T>>>());
    }
  (std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (record_type<T>)
    return min_encoded_size<typename record_field_types<T>::type>();
  else return 0;
}

[[noreturn]] inline void unsupported(const char* what, const std::type_info& type) {
  throw std::runtime_error(std::string("records of type ") + type.name() + " cannot be " + what
                           + " (supported: numbers, bool, enums, std::string, optional, pair, "
                             "tuple, vector, array, map, unordered_map of these, FLINT_RECORD "
                             "structs)");
}

[[noreturn, gnu::cold, gnu::noinline]] inline void refuse_tag(unsigned tag, const char* what) {
  throw std::runtime_error("record holds " + std::to_string(tag) + " where " + what
                           + " must be 0 or 1 (corrupt or mismatched record)");
}

/// A writer never writes a map's key twice: bytes that do are not one of its maps.
[[noreturn, gnu::cold, gnu::noinline]] inline void refuse_duplicate_key(std::uint32_t entry) {
  throw std::runtime_error("record holds a map whose entry " + std::to_string(entry)
                           + " repeats an earlier key (corrupt or mismatched record)");
}

/// Reads a bool or an optional's tag (`what`: "a bool"): one byte, 0 or 1.
inline bool read_flag(byte_reader& in, const char* what) {
  unsigned char b;
  in.read(&b, 1);
  if (b > 1) [[unlikely]]
    refuse_tag(b, what);
  return b == 1;
}
} // namespace detail

/// True when `type_serializer<T>` can write and read T.
template <class T>
inline constexpr bool is_serializable_v = detail::serializable<T>();

/// Writes T as the header describes.
template <class T>
struct type_serializer {
  /// Bytes `write_to` writes for `value`.
  static std::size_t size(const T& value) {
    if constexpr (detail::is_plain_v<T>) {
      (void)value;
      return sizeof(T);
    } else if constexpr (std::is_same_v<T, std::string>) {
      return 4 + value.size();
    } else if constexpr (detail::is_pair<T>::value) {
      return type_serializer<std::remove_cv_t<typename T::first_type>>::size(value.first)
        + type_serializer<std::remove_cv_t<typename T::second_type>>::size(value.second);
    } else if constexpr (detail::is_tuple<T>::value) {
      return size_of_fields(value);
    } else if constexpr (detail::is_vector<T>::value || detail::is_array<T>::value) {
      constexpr std::size_t count_bytes = detail::is_vector<T>::value ? 4 : 0;
      if constexpr (detail::is_plain_v<typename T::value_type>) {
        return count_bytes + value.size() * sizeof(typename T::value_type);
      } else {
        std::size_t n = count_bytes;
        for (const auto& x : value)
          n += type_serializer<typename T::value_type>::size(x);
        return n;
      }
    } else if constexpr (detail::is_optional<T>::value) {
      return 1 + (value ? type_serializer<typename T::value_type>::size(*value) : 0);
    } else if constexpr (detail::is_map<T>::value) {
      std::size_t n = 4;
      for (const auto& [k, v] : value)
        n += type_serializer<typename T::key_type>::size(k)
          + type_serializer<typename T::mapped_type>::size(v);
      return n;
    } else if constexpr (record_type<T> && is_serializable_v<T>) {
      return size_of_fields(flint_record_fields(value));
    } else {
      (void)value;
      detail::unsupported("serialized", typeid(T));
    }
  }

  /// Writes `value` at `out`, which has room for `size(value)` bytes; returns the end.
  static char* write_to(const T& value, char* out) {
    if constexpr (detail::is_plain_v<T>) {
      std::memcpy(out, &value, sizeof(T));
      return out + sizeof(T);
    } else if constexpr (std::is_same_v<T, std::string>) {
      out = type_serializer<std::uint32_t>::write_to(static_cast<std::uint32_t>(value.size()), out);
      std::memcpy(out, value.data(), value.size());
      return out + value.size();
    } else if constexpr (detail::is_pair<T>::value) {
      out = type_serializer<std::remove_cv_t<typename T::first_type>>::write_to(value.first, out);
      return type_serializer<std::remove_cv_t<typename T::second_type>>::write_to(value.second,
                                                                                  out);
    } else if constexpr (detail::is_tuple<T>::value) {
      return write_fields(value, out);
    } else if constexpr (detail::is_vector<T>::value || detail::is_array<T>::value) {
      if constexpr (detail::is_vector<T>::value)
        out = type_serializer<std::uint32_t>::write_to(static_cast<std::uint32_t>(value.size()),
                                                       out);
      for (const auto& x : value)
        out = type_serializer<typename T::value_type>::write_to(x, out);
      return out;
    } else if constexpr (detail::is_optional<T>::value) {
      *out++ = value ? 1 : 0;
      return value ? type_serializer<typename T::value_type>::write_to(*value, out) : out;
    } else if constexpr (detail::is_map<T>::value) {
      out = type_serializer<std::uint32_t>::write_to(static_cast<std::uint32_t>(value.size()), out);
      for (const auto& [k, v] : value) {
        out = type_serializer<typename T::key_type>::write_to(k, out);
        out = type_serializer<typename T::mapped_type>::write_to(v, out);
      }
      return out;
    } else if constexpr (record_type<T> && is_serializable_v<T>) {
      return write_fields(flint_record_fields(value), out);
    } else {
      (void)value;
      detail::unsupported("serialized", typeid(T));
    }
  }

  /// Appends `value` to `out`.
  static void write(const T& value, std::vector<char>& out) {
    if constexpr (is_serializable_v<T>) {
      auto at = out.size();
      out.resize(at + size(value));
      // GCC 12 loses the resize when it inlines write_to into a caller whose vector starts empty
      // and warns of a write "into a region of size 0" (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
      write_to(value, out.data() + at);
#pragma GCC diagnostic pop
    } else {
      (void)value;
      (void)out;
      detail::unsupported("serialized", typeid(T));
    }
  }

  /// Reads into `out`, reusing what it holds (a string's or vector's storage).
  static void read_into(byte_reader& in, T& out) {
    if constexpr (std::is_same_v<T, bool>) {
      out = detail::read_flag(in, "a bool");
    } else if constexpr (detail::is_plain_v<T>) {
      in.read(&out, sizeof(T));
    } else if constexpr (std::is_same_v<T, std::string>) {
      auto n = type_serializer<std::uint32_t>::read(in);
      const char* at = in.take_claimed(n, "string");
      // clear + append: a plain copy into the kept storage (assign takes the general replace).
      out.clear();
      out.append(at, n);
    } else if constexpr (detail::is_pair<T>::value) {
      if constexpr (!std::is_const_v<
                      typename T::first_type> && !std::is_const_v<typename T::second_type>) {
        type_serializer<typename T::first_type>::read_into(in, out.first);
        type_serializer<typename T::second_type>::read_into(in, out.second);
      } else {
        out = read(in);
      }
    } else if constexpr (detail::is_tuple<T>::value) {
      read_fields(in, out);
    } else if constexpr (detail::is_vector<T>::value || detail::is_array<T>::value) {
      if constexpr (detail::is_vector<T>::value) {
        auto n = type_serializer<std::uint32_t>::read(in);
        in.check_count(n, detail::min_encoded_size<typename T::value_type>(), "vector");
        out.resize(n);
      }
      if constexpr (std::is_same_v<typename T::value_type, bool>) {
        // vector<bool> hands out proxies, not references.
        for (std::size_t i = 0; i < out.size(); ++i)
          out[i] = detail::read_flag(in, "a bool");
      } else {
        for (auto& x : out)
          type_serializer<typename T::value_type>::read_into(in, x);
      }
    } else if constexpr (detail::is_optional<T>::value) {
      using V = typename T::value_type;
      if (!detail::read_flag(in, "an optional's tag"))
        out.reset();
      else if constexpr (std::is_default_constructible_v<V>)
        type_serializer<V>::read_into(in, out ? *out : out.emplace());
      else
        out.emplace(type_serializer<V>::read(in));
    } else if constexpr (detail::is_map<T>::value) {
      auto n = type_serializer<std::uint32_t>::read(in);
      in.check_count(n,
                     detail::min_encoded_size<typename T::key_type>()
                       + detail::min_encoded_size<typename T::mapped_type>(),
                     "map");
      out.clear();
      for (std::uint32_t i = 0; i < n; ++i) {
        auto k = type_serializer<typename T::key_type>::read(in);
        auto v = type_serializer<typename T::mapped_type>::read(in);
        auto before = out.size();
        out.emplace_hint(out.end(), std::move(k), std::move(v));
        if (out.size() == before) [[unlikely]]
          detail::refuse_duplicate_key(i);
      }
    } else if constexpr (record_type<T> && is_serializable_v<T>) {
      read_fields(in, flint_record_fields(out));
    } else {
      out = read(in);
    }
  }

  static T read(byte_reader& in) {
    if constexpr (std::is_same_v<T, bool>) {
      return detail::read_flag(in, "a bool");
    } else if constexpr (detail::is_plain_v<T>) {
      T value;
      in.read(&value, sizeof(T));
      return value;
    } else if constexpr (std::is_same_v<T, std::string>) {
      auto n = type_serializer<std::uint32_t>::read(in);
      const char* at = in.take_claimed(n, "string");
      return std::string(at, n);
    } else if constexpr (detail::is_pair<T>::value) {
      auto first = type_serializer<std::remove_cv_t<typename T::first_type>>::read(in);
      auto second = type_serializer<std::remove_cv_t<typename T::second_type>>::read(in);
      return T(std::move(first), std::move(second));
    } else if constexpr (detail::is_tuple<T>::value) {
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        // Braced initialisation evaluates left to right.
        return T{type_serializer<std::tuple_element_t<I, T>>::read(in)...};
      }
      (std::make_index_sequence<std::tuple_size_v<T>>{});
    } else if constexpr (detail::is_vector<T>::value) {
      auto n = type_serializer<std::uint32_t>::read(in);
      in.check_count(n, detail::min_encoded_size<typename T::value_type>(), "vector");
      T out;
      out.reserve(n);
      for (std::uint32_t i = 0; i < n; ++i)
        out.push_back(type_serializer<typename T::value_type>::read(in));
      return out;
    } else if constexpr (detail::is_optional<T>::value) {
      if (!detail::read_flag(in, "an optional's tag"))
        return std::nullopt;
      return T(std::in_place, type_serializer<typename T::value_type>::read(in));
    } else if constexpr ((detail::is_array<T>::value || detail::is_map<T>::value
                          || record_type<T>)
                         && is_serializable_v<T>) {
      T out{};
      read_into(in, out);
      return out;
    } else {
      (void)in;
      detail::unsupported("deserialized", typeid(T));
    }
  }

private:
  /// The fields of a tuple, or the tied fields of a record.
  template <class Tuple>
  static std::size_t size_of_fields(const Tuple& fields) {
    return std::apply(
      [](const auto&... f) {
        return (std::size_t{0} + ... + type_serializer<std::remove_cvref_t<decltype(f)>>::size(f));
      },
      fields);
  }
  template <class Tuple>
  static char* write_fields(const Tuple& fields, char* out) {
    std::apply(
      [&](const auto&... f) {
        ((out = type_serializer<std::remove_cvref_t<decltype(f)>>::write_to(f, out)), ...);
      },
      fields);
    return out;
  }
  template <class Tuple>
  static void read_fields(byte_reader& in, Tuple&& fields) {
    std::apply(
      [&](auto&... f) {
        (type_serializer<std::remove_cvref_t<decltype(f)>>::read_into(in, f), ...);
      },
      fields);
  }
};

/// Java's String.hashCode of bytes (ASCII, as the words of a text are): s[0]*31^(n-1) + ... +
/// s[n-1], four characters per step: the products are independent, so the chain of
/// multiplications is a quarter as long.
[[gnu::always_inline]] inline std::int32_t java_string_hash(const char* data, std::size_t n) {
  std::uint32_t h = 0;
  auto p = reinterpret_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    h = h * 923521u + p[i] * 29791u + p[i + 1] * 961u + p[i + 2] * 31u + p[i + 3];
  for (; i < n; ++i)
    h = 31 * h + p[i];
  return static_cast<std::int32_t>(h);
}

/// Java's `hashCode` of the same value (String, Long, Integer, Double, Boolean, Tuple, List, Map,
/// Optional; a FLINT_RECORD as Objects.hash of its fields, an enum as its value): keys
/// land in the key groups Flink would put them in, and the hash is the same in every process.
template <class T>
[[gnu::always_inline]] inline std::int32_t key_hash(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? 1231 : 1237;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) <= 4) {
    return static_cast<std::int32_t>(value);
  } else if constexpr (std::is_integral_v<T>) {
    auto v = static_cast<std::uint64_t>(value);
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v ^ (v >> 32)));
  } else if constexpr (std::is_floating_point_v<T>) {
    auto bits = std::bit_cast<std::uint64_t>(static_cast<double>(value));
    if (value != value)
      bits = 0x7ff8000000000000ULL; // Java's canonical NaN
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(bits ^ (bits >> 32)));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return java_string_hash(value.data(), value.size());
  } else if constexpr (detail::is_pair<T>::value) {
    std::uint32_t h = static_cast<std::uint32_t>(key_hash(value.first));
    return static_cast<std::int32_t>(31 * h + static_cast<std::uint32_t>(key_hash(value.second)));
  } else if constexpr (detail::is_tuple<T>::value) {
    std::uint32_t h = 0;
    std::apply(
      [&](const auto&... fields) {
        ((h = 31 * h + static_cast<std::uint32_t>(key_hash(fields))), ...);
      },
      value);
    return static_cast<std::int32_t>(h);
  } else if constexpr (detail::is_vector<T>::value || detail::is_array<T>::value) {
    std::uint32_t h = 1;
    for (const auto& x : value) {
      if constexpr (std::is_same_v<typename T::value_type, bool>) // vector<bool>'s proxies
        h = 31 * h + static_cast<std::uint32_t>(key_hash(static_cast<bool>(x)));
      else
        h = 31 * h + static_cast<std::uint32_t>(key_hash(x));
    }
    return static_cast<std::int32_t>(h);
  } else if constexpr (std::is_enum_v<T>) {
    // Java's Enum.hashCode is the object's identity, the same in no two processes: the value
    // is what can be hashed alike everywhere.
    return key_hash(static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (detail::is_optional<T>::value) {
    return value ? key_hash(*value) : 0;
  } else if constexpr (detail::is_map<T>::value) {
    // Java's Map.hashCode: the sum of key ^ value over the entries, whatever their order.
    std::uint32_t h = 0;
    for (const auto& [k, v] : value)
      h += static_cast<std::uint32_t>(key_hash(k)) ^ static_cast<std::uint32_t>(key_hash(v));
    return static_cast<std::int32_t>(h);
  } else if constexpr (record_type<T> && is_serializable_v<T>) {
    // Objects.hash(fields...), what a Java POJO's generated hashCode returns.
    std::uint32_t h = 1;
    std::apply(
      [&](const auto&... fields) {
        ((h = 31 * h + static_cast<std::uint32_t>(key_hash(fields))), ...);
      },
      flint_record_fields(value));
    return static_cast<std::int32_t>(h);
  } else {
    (void)value;
    detail::unsupported("keys", typeid(T));
  }
}

/// The hasher of keyed state maps: std::hash where the standard has one (in-process only, so it
/// need not be Flink's), else `key_hash` spread over 64 bits.
template <class K>
struct key_hasher {
  std::size_t operator()(const K& key) const {
    if constexpr (requires { std::hash<K>{}(key); }) {
      return std::hash<K>{}(key);
    } else {
      auto h = static_cast<std::uint64_t>(static_cast<std::uint32_t>(key_hash(key)));
      h ^= h >> 16;
      h *= 0x9e3779b97f4a7c15ULL;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  }
};

} // namespace flint::streaming
