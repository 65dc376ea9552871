#include "apps/trace_tools/detail/flat_object.hpp"

#include <limits>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

namespace flint::trace::detail {

namespace {

/// nlohmann's SAX events for one line, kept while they describe a flat object of strings and
/// integers; the first event that does not stops the parse with an error saying why. No DOM is
/// built and nlohmann throws nothing on this path.
class flat_object_reader final : public nlohmann::json::json_sax_t {
public:
  explicit flat_object_reader(flat_object& fields) : fields_(fields) {}

  /// Why the parse stopped, once it did.
  std::optional<error>& failure() { return error_; }

  bool null() override { return not_flat(); }
  bool boolean(bool) override { return not_flat(); }
  bool binary(binary_t&) override { return not_flat(); }

  bool number_integer(number_integer_t v) override { return value(v); }

  bool number_unsigned(number_unsigned_t v) override {
    if (v > static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max()))
      return fail("the value of \"" + key_ + "\" does not fit 64 bits");
    return value(static_cast<std::int64_t>(v));
  }

  bool number_float(number_float_t, const string_t& literal) override {
    if (depth_ != 1)
      return not_flat();
    // nlohmann reads an integer too large for 64 bits as a float; the literal tells them apart.
    if (literal.find_first_of(".eE") == string_t::npos)
      return fail("the value of \"" + key_ + "\" does not fit 64 bits");
    return fail("the value of \"" + key_ + "\" is not an integer");
  }

  bool string(string_t& s) override { return value(std::move(s)); }

  bool start_object(std::size_t) override {
    if (depth_ != 0)
      return not_flat();
    depth_ = 1;
    return true;
  }

  bool key(string_t& k) override {
    if (fields_.contains(k))
      return fail("field \"" + k + "\" appears twice");
    key_ = std::move(k);
    return true;
  }

  bool end_object() override {
    depth_ = 2; // done: whatever follows is an error (the parser reports it)
    return true;
  }

  bool start_array(std::size_t) override { return not_flat(); }
  bool end_array() override { return not_flat(); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann says "[json.exception.parse_error.101] parse error at line 1, column 5: syntax
    // error while parsing value - ..."; a record is one line, so its column is what matters.
    std::string_view what = e.what();
    if (auto tag_end = what.find("] "); what.starts_with('[') && tag_end != std::string_view::npos)
      what.remove_prefix(tag_end + 2);
    if (what.starts_with("parse error at "))
      what.remove_prefix(std::string_view("parse error at ").size());
    if (what.starts_with("line 1, "))
      what.remove_prefix(std::string_view("line 1, ").size());
    return fail("invalid JSON at " + std::string(what));
  }

private:
  bool value(flat_value v) {
    if (depth_ != 1)
      return not_flat();
    fields_.emplace(std::move(key_), std::move(v));
    key_.clear();
    return true;
  }

  bool not_flat() {
    if (depth_ == 0)
      return fail("expected a JSON object (one record per line)");
    return fail("the value of \"" + key_
                + "\" is neither a string nor an integer (records are flat objects)");
  }

  bool fail(std::string message) {
    error_ = make_error(errc::malformed_message, std::move(message));
    return false;
  }

  flat_object& fields_;
  int depth_ = 0; // 0: before the object, 1: inside it, 2: after it
  std::string key_;
  std::optional<error> error_;
};

} // namespace

expected<flat_object> parse_flat_object(std::string_view line) {
  flat_object fields;
  flat_object_reader reader(fields);
  if (nlohmann::json::sax_parse(line.begin(), line.end(), &reader))
    return fields;
  if (reader.failure())
    return std::move(*reader.failure());
  return make_error(errc::malformed_message, "the JSON parser stopped without saying why");
}

} // namespace flint::trace::detail
