#pragma once
/// User structs as records and keyed state values (Flink's POJO types), declared once, beside the
/// struct, by listing its fields:
///
///   struct click {
///     std::string user;
///     std::int64_t time = 0;
///     std::optional<std::string> page;
///   };
///   FLINT_RECORD(click, user, time, page);   // same namespace as `click`, after it
///
///   class account {                          // private members, or a class template
///     std::string id_;
///     std::int64_t balance_ = 0;
///   public:
///     FLINT_RECORD_MEMBERS(account, id_, balance_);
///   };
///
/// Such a struct then travels through every channel (type_serializer writes its fields in the
/// listed order, see its header for the bytes), lives in value, list and map state, can be a key
/// (key_hash is Objects.hash of its fields; key_by needs operator== on it) and nests in other
/// records and containers. A field of a type type_serializer cannot write stops the build where
/// FLINT_RECORD stands (or, for FLINT_RECORD_MEMBERS, where the record is first serialized) with
/// `detail::check_field<Field, Record>` naming the type; so does an enum field without a fixed
/// underlying type (`enum e : int` or `enum class`). A record needs a default constructor.
///
/// Why a field list and not Boost.PFR: PFR reflects aggregates only, so private members and
/// classes with constructors would still need a list; PFR would add libboost1.81-dev (155 MB
/// installed; no smaller Debian package carries boost/pfr) and its template-heavy field counting
/// to headers every job includes, on a 2-core build; and a record must be opted into anyway:
/// operators are instantiated for every type a program names, so treating every aggregate as a
/// record would turn today's run-time "cannot be serialized" for a struct kept inside a chain into
/// a compile error.
/// The list's risk, a field added to the struct but not to the list, is closed for aggregates:
/// FLINT_RECORD binds the struct with a structured binding of the listed names, so a count that
/// differs from the struct's fails to compile ("N names provided ... decomposes into M elements").
/// An aggregate whose fields are split between a base and itself cannot be bound that way:
/// declare it with FLINT_RECORD_MEMBERS inside the struct, which skips the count check.

#include "runtime/streaming/type_serializer.hpp"

#include <tuple>
#include <type_traits>

/// Declares `type` (a struct in the current namespace, defined above) a record of the listed
/// fields, in this order. Ends with a static_assert: write a `;` after it.
#define FLINT_RECORD(type, ...)                                                 \
  inline auto flint_record_fields([[maybe_unused]] type& flint_record_) {       \
    __VA_OPT__(FLINT_RECORD_DETAIL_CHECK_COUNT(flint_record_, __VA_ARGS__))     \
    return std::tie(FLINT_RECORD_DETAIL_FIELDS(__VA_ARGS__));                   \
  }                                                                             \
  inline auto flint_record_fields([[maybe_unused]] const type& flint_record_) { \
    return std::tie(FLINT_RECORD_DETAIL_FIELDS(__VA_ARGS__));                   \
  }                                                                             \
  static_assert(::flint::streaming::is_serializable_v<type>, "FLINT_RECORD(" #type ", ...)")

/// FLINT_RECORD inside the class body (hidden friends): for private members and class templates.
#define FLINT_RECORD_MEMBERS(type, ...)                                         \
  friend auto flint_record_fields([[maybe_unused]] type& flint_record_) {       \
    return std::tie(FLINT_RECORD_DETAIL_FIELDS(__VA_ARGS__));                   \
  }                                                                             \
  friend auto flint_record_fields([[maybe_unused]] const type& flint_record_) { \
    return std::tie(FLINT_RECORD_DETAIL_FIELDS(__VA_ARGS__));                   \
  }                                                                             \
  static_assert(true)

// -- detail --

/// For an aggregate: one name per field, or the structured binding does not compile.
#define FLINT_RECORD_DETAIL_CHECK_COUNT(value, ...)                   \
  []<class FlintRecord>([[maybe_unused]] FlintRecord& flint_value_) { \
    if constexpr (std::is_aggregate_v<FlintRecord>) {                 \
      [[maybe_unused]] auto& [__VA_ARGS__] = flint_value_;            \
    }                                                                 \
  }(value);

/// `flint_record_.a, flint_record_.b, ...` for up to 256 names.
#define FLINT_RECORD_DETAIL_FIELDS(...) \
  __VA_OPT__(FLINT_RECORD_DETAIL_EXPAND(FLINT_RECORD_DETAIL_FIELD(__VA_ARGS__)))
#define FLINT_RECORD_DETAIL_FIELD(name, ...) \
  flint_record_.name __VA_OPT__(             \
    , FLINT_RECORD_DETAIL_FIELD_AGAIN FLINT_RECORD_DETAIL_PARENS(__VA_ARGS__))
#define FLINT_RECORD_DETAIL_FIELD_AGAIN() FLINT_RECORD_DETAIL_FIELD
#define FLINT_RECORD_DETAIL_PARENS ()
#define FLINT_RECORD_DETAIL_EXPAND(...)                    \
  FLINT_RECORD_DETAIL_EXPAND3(FLINT_RECORD_DETAIL_EXPAND3( \
    FLINT_RECORD_DETAIL_EXPAND3(FLINT_RECORD_DETAIL_EXPAND3(__VA_ARGS__))))
#define FLINT_RECORD_DETAIL_EXPAND3(...)                   \
  FLINT_RECORD_DETAIL_EXPAND2(FLINT_RECORD_DETAIL_EXPAND2( \
    FLINT_RECORD_DETAIL_EXPAND2(FLINT_RECORD_DETAIL_EXPAND2(__VA_ARGS__))))
#define FLINT_RECORD_DETAIL_EXPAND2(...)                   \
  FLINT_RECORD_DETAIL_EXPAND1(FLINT_RECORD_DETAIL_EXPAND1( \
    FLINT_RECORD_DETAIL_EXPAND1(FLINT_RECORD_DETAIL_EXPAND1(__VA_ARGS__))))
#define FLINT_RECORD_DETAIL_EXPAND1(...) __VA_ARGS__
