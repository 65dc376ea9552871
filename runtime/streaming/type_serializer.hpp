#pragma once
/// Typed records to bytes and back (Flink's TypeSerializer), and the deterministic key hash of
/// Flink's key-group assignment (Java's `hashCode` of the same values).
///
/// Supported: arithmetic types, bool, std::string, std::pair, std::tuple and std::vector of
/// supported types. Other types still compile (operators are instantiated for every record type a
/// program names); they fail at run time when a record of them must cross the network or be a key.

#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
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
constexpr bool serializable() {
  if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>)
    return true;
  else if constexpr (is_pair<T>::value)
    return serializable<typename T::first_type>() && serializable<typename T::second_type>();
  else if constexpr (is_tuple<T>::value)
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (serializable<std::tuple_element_t<I, T>>() && ...);
    }
  (std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (is_vector<T>::value) return serializable<typename T::value_type>();
  else return false;
}

/// The fewest bytes `type_serializer<T>` writes for any T: what each element of a vector takes
/// at least, so a count can be checked against the bytes left.
template <class T>
constexpr std::size_t min_encoded_size() {
  if constexpr (std::is_arithmetic_v<T>)
    return sizeof(T);
  else if constexpr (std::is_same_v<T, std::string> || is_vector<T>::value)
    return 4;
  else if constexpr (is_pair<T>::value)
    return min_encoded_size<std::remove_cv_t<typename T::first_type>>()
      + min_encoded_size<std::remove_cv_t<typename T::second_type>>();
  else if constexpr (is_tuple<T>::value)
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (std::size_t{0} + ... + min_encoded_size<std::tuple_element_t<I, T>>());
    }
  (std::make_index_sequence<std::tuple_size_v<T>>{});
  else return 0;
}

[[noreturn]] inline void unsupported(const char* what, const std::type_info& type) {
  throw std::runtime_error(
    std::string("records of type ") + type.name() + " cannot be " + what
    + " (supported: numbers, bool, std::string, pair, tuple, vector of these)");
}
} // namespace detail

/// True when `type_serializer<T>` can write and read T.
template <class T>
inline constexpr bool is_serializable_v = detail::serializable<T>();

/// Writes T's fields in order: numbers as their bytes, strings and vectors with a 4-byte length.
template <class T>
struct type_serializer {
  /// Bytes `write_to` writes for `value`.
  static std::size_t size(const T& value) {
    if constexpr (std::is_arithmetic_v<T>) {
      (void)value;
      return sizeof(T);
    } else if constexpr (std::is_same_v<T, std::string>) {
      return 4 + value.size();
    } else if constexpr (detail::is_pair<T>::value) {
      return type_serializer<std::remove_cv_t<typename T::first_type>>::size(value.first)
        + type_serializer<std::remove_cv_t<typename T::second_type>>::size(value.second);
    } else if constexpr (detail::is_tuple<T>::value) {
      return std::apply(
        [](const auto&... fields) {
          return (std::size_t{0} + ...
                  + type_serializer<std::decay_t<decltype(fields)>>::size(fields));
        },
        value);
    } else if constexpr (detail::is_vector<T>::value) {
      if constexpr (std::is_arithmetic_v<typename T::value_type>) {
        return 4 + value.size() * sizeof(typename T::value_type);
      } else {
        std::size_t n = 4;
        for (const auto& x : value)
          n += type_serializer<typename T::value_type>::size(x);
        return n;
      }
    } else {
      (void)value;
      detail::unsupported("serialized", typeid(T));
    }
  }

  /// Writes `value` at `out`, which has room for `size(value)` bytes; returns the end.
  static char* write_to(const T& value, char* out) {
    if constexpr (std::is_arithmetic_v<T>) {
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
      std::apply(
        [&](const auto&... fields) {
          ((out = type_serializer<std::decay_t<decltype(fields)>>::write_to(fields, out)), ...);
        },
        value);
      return out;
    } else if constexpr (detail::is_vector<T>::value) {
      out = type_serializer<std::uint32_t>::write_to(static_cast<std::uint32_t>(value.size()), out);
      for (const auto& x : value)
        out = type_serializer<typename T::value_type>::write_to(x, out);
      return out;
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
    if constexpr (std::is_arithmetic_v<T>) {
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
      std::apply(
        [&](auto&... fields) {
          (type_serializer<std::remove_cv_t<std::remove_reference_t<decltype(fields)>>>::read_into(
             in, fields),
           ...);
        },
        out);
    } else if constexpr (detail::is_vector<T>::value) {
      auto n = type_serializer<std::uint32_t>::read(in);
      in.check_count(n, detail::min_encoded_size<typename T::value_type>(), "vector");
      out.resize(n);
      for (auto& x : out)
        type_serializer<typename T::value_type>::read_into(in, x);
    } else {
      out = read(in);
    }
  }

  static T read(byte_reader& in) {
    if constexpr (std::is_arithmetic_v<T>) {
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
    } else {
      (void)in;
      detail::unsupported("deserialized", typeid(T));
    }
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

/// Java's `hashCode` of the same value (String, Long, Integer, Double, Boolean, Tuple): keys
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
  } else if constexpr (detail::is_vector<T>::value) {
    std::uint32_t h = 1;
    for (const auto& x : value)
      h = 31 * h + static_cast<std::uint32_t>(key_hash(x));
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
