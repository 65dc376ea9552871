#include "runtime/actors/trace/trace_export.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdint>
#include <istream>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <variant>

#include <nlohmann/json.hpp>

namespace flint::trace {

namespace {

error malformed(std::string message) {
  return make_error(errc::malformed_message, "trace record: " + std::move(message));
}

// -- a parser for the flat objects to_json writes ----------------------------------------------
//
// Hand-written rather than nlohmann's: to_json copies bytes of endpoint ids and error texts as
// they are, which need not be valid UTF-8, and errors here can name the field that is wrong.

using json_value = std::variant<std::string, std::int64_t>;

class flat_object_parser {
public:
  explicit flat_object_parser(std::string_view text) : text_(text) {}

  /// Fills `out` with every key and value; the error names the column (1-based).
  std::optional<error> parse(std::map<std::string, json_value, std::less<>>& out) {
    skip_ws();
    if (!eat('{'))
      return fail("expected '{' at the start of the line");
    skip_ws();
    if (eat('}'))
      return finish();
    for (;;) {
      skip_ws();
      std::string key;
      if (auto err = parse_string(key))
        return err;
      skip_ws();
      if (!eat(':'))
        return fail("expected ':' after key \"" + key + "\"");
      skip_ws();
      json_value value;
      if (auto err = parse_value(key, value))
        return err;
      if (!out.emplace(key, std::move(value)).second)
        return fail("field \"" + key + "\" appears twice");
      skip_ws();
      if (eat(','))
        continue;
      if (eat('}'))
        return finish();
      return fail("expected ',' or '}' after the value of \"" + key + "\"");
    }
  }

private:
  std::optional<error> finish() {
    skip_ws();
    if (pos_ != text_.size())
      return fail("unexpected text after the closing '}'");
    return std::nullopt;
  }

  std::optional<error> fail(const std::string& what) const {
    return malformed(what + " (column " + std::to_string(pos_ + 1) + ")");
  }

  void skip_ws() {
    while (pos_ < text_.size()
           && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r'
               || text_[pos_] == '\n'))
      ++pos_;
  }

  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  std::optional<error> parse_value(const std::string& key, json_value& out) {
    if (pos_ >= text_.size())
      return fail("the line ends before the value of \"" + key + "\"");
    char c = text_[pos_];
    if (c == '"') {
      std::string s;
      if (auto err = parse_string(s))
        return err;
      out = std::move(s);
      return std::nullopt;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      std::int64_t v = 0;
      auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
      if (ec == std::errc::result_out_of_range)
        return fail("the value of \"" + key + "\" does not fit 64 bits");
      if (ec != std::errc{})
        return fail("the value of \"" + key + "\" is not a number");
      pos_ = static_cast<std::size_t>(end - text_.data());
      if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E'))
        return fail("the value of \"" + key + "\" is not an integer");
      out = v;
      return std::nullopt;
    }
    return fail("the value of \"" + key
                + "\" is neither a string nor an integer (records are flat objects)");
  }

  static int hex_digit(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  bool parse_hex4(std::uint32_t& out) {
    if (text_.size() - pos_ < 4)
      return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      int d = hex_digit(text_[pos_ + i]);
      if (d < 0)
        return false;
      out = out * 16 + static_cast<std::uint32_t>(d);
    }
    pos_ += 4;
    return true;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::optional<error> parse_string(std::string& out) {
    if (!eat('"'))
      return fail("expected a string");
    for (;;) {
      if (pos_ >= text_.size())
        return fail("unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return std::nullopt;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("raw control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        return fail("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!parse_hex4(cp))
            return fail("bad \\u escape");
          if (cp >= 0xD800 && cp < 0xDC00) {
            std::uint32_t low = 0;
            if (!(eat('\\') && eat('u') && parse_hex4(low)) || low < 0xDC00 || low >= 0xE000)
              return fail("unpaired surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return fail("unpaired surrogate in a \\u escape");
          }
          append_utf8(out, cp);
          break;
        }
        default: return fail(std::string("unknown escape \\") + e);
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

using field_map = std::map<std::string, json_value, std::less<>>;

expected<std::string> string_field(const field_map& m, std::string_view key, bool required,
                                   std::string fallback = {}) {
  auto it = m.find(key);
  if (it == m.end()) {
    if (required)
      return malformed("missing field \"" + std::string(key) + "\"");
    return fallback;
  }
  if (auto* s = std::get_if<std::string>(&it->second))
    return *s;
  return malformed("field \"" + std::string(key) + "\" must be a string");
}

expected<std::int64_t> int_field(const field_map& m, std::string_view key, bool required,
                                 std::int64_t fallback, std::int64_t min, std::int64_t max) {
  auto it = m.find(key);
  if (it == m.end()) {
    if (required)
      return malformed("missing field \"" + std::string(key) + "\"");
    return fallback;
  }
  auto* v = std::get_if<std::int64_t>(&it->second);
  if (v == nullptr)
    return malformed("field \"" + std::string(key) + "\" must be an integer");
  if (*v < min || *v > max)
    return malformed("field \"" + std::string(key) + "\" is out of range: " + std::to_string(*v));
  return *v;
}

expected<std::uint64_t> parse_hex_u64(std::string_view text, std::string_view key) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (text.empty() || text.size() > 16 || ec != std::errc{} || end != text.data() + text.size())
    return malformed("field \"" + std::string(key) + "\" is not a 64-bit hex id: \""
                     + std::string(text) + "\"");
  return v;
}

expected<rpc::fencing_token> parse_token(std::string_view text) {
  if (text == "<none>")
    return rpc::fencing_token{};
  auto bad = [&] {
    return malformed("field \"token\" is neither a UUID nor \"<none>\": \"" + std::string(text)
                     + "\"");
  };
  // 8-4-4-4-12 hex digits, the form fencing_token::to_string writes.
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-')
    return bad();
  std::string digits;
  for (char c : text)
    if (c != '-')
      digits += c;
  if (digits.size() != 32)
    return bad();
  auto hi = parse_hex_u64(std::string_view(digits).substr(0, 16), "token");
  auto lo = parse_hex_u64(std::string_view(digits).substr(16), "token");
  if (!hi || !lo)
    return bad();
  rpc::fencing_token t{*hi, *lo};
  if (t.is_nil())
    return bad(); // to_json never writes the nil UUID as digits
  return t;
}

} // namespace

expected<direction> parse_direction(std::string_view text) {
  for (auto d : {direction::send, direction::receive, direction::reply, direction::response})
    if (text == to_string(d))
      return d;
  return malformed("unknown direction \"" + std::string(text)
                   + "\" (expected send, receive, reply or response)");
}

expected<outcome> parse_outcome(std::string_view text) {
  for (auto o : {outcome::ok, outcome::rejected, outcome::malformed, outcome::unknown_method,
                 outcome::failed, outcome::timeout, outcome::unreachable})
    if (text == to_string(o))
      return o;
  return malformed("unknown outcome \"" + std::string(text) + "\"");
}

expected<record> parse_record(std::string_view json_line) {
  field_map m;
  if (auto err = flat_object_parser(json_line).parse(m))
    return *err;
  constexpr auto i64_min = std::numeric_limits<std::int64_t>::min();
  constexpr auto i64_max = std::numeric_limits<std::int64_t>::max();
  record r;
  // The writer casts the unsigned sequence to int64; cast back the same way.
  auto seq = int_field(m, "seq", true, 0, i64_min, i64_max);
  if (!seq)
    return seq.error();
  r.sequence = static_cast<std::uint64_t>(*seq);
  auto time = int_field(m, "time_us", true, 0, i64_min, i64_max);
  if (!time)
    return time.error();
  r.time_us = *time;
  auto dir = string_field(m, "dir", true);
  if (!dir)
    return dir.error();
  auto d = parse_direction(*dir);
  if (!d)
    return d.error();
  r.dir = *d;
  for (auto [key, target] : {std::pair{"from", &r.from}, std::pair{"to", &r.to},
                             std::pair{"method", &r.method}}) {
    auto s = string_field(m, key, true);
    if (!s)
      return s.error();
    *target = std::move(*s);
  }
  auto kind = string_field(m, "kind", true);
  if (!kind)
    return kind.error();
  if (*kind != "ask" && *kind != "tell")
    return malformed("field \"kind\" must be \"ask\" or \"tell\", not \"" + *kind + "\"");
  r.is_ask = *kind == "ask";
  auto token = string_field(m, "token", true);
  if (!token)
    return token.error();
  auto t = parse_token(*token);
  if (!t)
    return t.error();
  r.token = *t;
  for (auto [key, target] : {std::pair{"trace_id", &r.trace.trace_id},
                             std::pair{"span_id", &r.trace.span_id},
                             std::pair{"parent_span_id", &r.trace.parent_span_id}}) {
    auto s = string_field(m, key, true);
    if (!s)
      return s.error();
    auto v = parse_hex_u64(*s, key);
    if (!v)
      return v.error();
    *target = *v;
  }
  auto bytes = int_field(m, "bytes", true, 0, 0, std::numeric_limits<std::uint32_t>::max());
  if (!bytes)
    return bytes.error();
  r.bytes = static_cast<std::uint32_t>(*bytes);
  auto result = string_field(m, "outcome", true);
  if (!result)
    return result.error();
  auto o = parse_outcome(*result);
  if (!o)
    return o.error();
  r.result = *o;
  auto latency = int_field(m, "latency_us", false, -1, i64_min, i64_max);
  if (!latency)
    return latency.error();
  r.latency_us = *latency;
  auto detail = string_field(m, "detail", false);
  if (!detail)
    return detail.error();
  r.detail = std::move(*detail);
  return r;
}

read_result read_records(std::istream& in) {
  read_result out;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto r = parse_record(line);
    if (r) {
      out.records.push_back(std::move(*r));
      continue;
    }
    ++out.bad_lines;
    if (!out.first_error)
      out.first_error = make_error(r.error().code,
                                   "line " + std::to_string(number) + ": " + r.error().message);
  }
  return out;
}

// -- filtering --------------------------------------------------------------------------------

namespace {

bool is_job_endpoint_of(std::string_view endpoint, std::string_view job) {
  auto slash = endpoint.find('/');
  if (slash == std::string_view::npos)
    return false;
  auto kind = endpoint.substr(0, slash);
  if (kind == "task_executor")
    return false; // its suffix is a TaskManager id, not a job
  return endpoint.substr(slash + 1).starts_with(job);
}

} // namespace

bool record_filter::matches(const record& r) const {
  if (!endpoint.empty() && !r.from.starts_with(endpoint) && !r.to.starts_with(endpoint))
    return false;
  if (!method.empty() && r.method != method)
    return false;
  if (!job.empty() && !is_job_endpoint_of(r.from, job) && !is_job_endpoint_of(r.to, job))
    return false;
  if (dir && r.dir != *dir)
    return false;
  return true;
}

std::vector<record> filter(std::span<const record> records, const record_filter& f) {
  std::vector<record> out;
  for (const auto& r : records)
    if (f.matches(r))
      out.push_back(r);
  return out;
}

std::string node_of(std::string_view endpoint_id) {
  auto slash = endpoint_id.find('/');
  auto kind = endpoint_id.substr(0, slash);
  if (kind == "task_executor")
    return slash == std::string_view::npos
             ? std::string("TaskManager")
             : "TaskManager " + std::string(endpoint_id.substr(slash + 1));
  if (kind == "dispatcher" || kind == "resource_manager" || kind == "job_master"
      || kind == "slot_pool")
    return "JobManager";
  if (kind.empty())
    return "unknown";
  return std::string(kind);
}

// -- exports ----------------------------------------------------------------------------------

namespace {

std::string hex_id(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// The endpoint on whose thread a record happened: the caller sends and gets responses, the
/// callee receives and replies (whose record names the callee as `from`).
const std::string& local_endpoint(const record& r) {
  return r.dir == direction::receive ? r.to : r.from;
}

/// Where each direction of a call sits in `records`, keyed by span id (0 means "not traced").
struct call_index {
  std::unordered_map<std::uint64_t, std::size_t> send, receive, reply, response;

  explicit call_index(std::span<const record> records) {
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      if (r.trace.span_id == 0)
        continue;
      auto& slot = r.dir == direction::send      ? send
                   : r.dir == direction::receive ? receive
                   : r.dir == direction::reply   ? reply
                                                 : response;
      slot.emplace(r.trace.span_id, i); // the first wins if a span repeats
    }
  }

  static std::optional<std::size_t> find(const std::unordered_map<std::uint64_t, std::size_t>& m,
                                         const record& r) {
    if (r.trace.span_id == 0)
      return std::nullopt;
    auto it = m.find(r.trace.span_id);
    if (it == m.end())
      return std::nullopt;
    return it->second;
  }
};

} // namespace

namespace {

/// One slice of the Chrome export before it is placed on a thread: an ask's span or a tell.
struct chrome_slice {
  std::string endpoint;
  std::int64_t begin_us = 0;
  std::int64_t end_us = 0;
  nlohmann::json event;              // without pid, tid and ts
  std::vector<nlohmann::json> flows; // flow ends bound to this slice, same time
};

/// Threads of the export. Asks of one endpoint overlap without nesting (a JobMaster deploys to
/// four slots at once; a handler replies before the call it made is answered), and viewers drop
/// or mangle slices that are not nested on a thread. So each endpoint gets as many lanes
/// (threads) as its overlaps need: a slice goes on the first lane where it nests.
class chrome_threads {
public:
  explicit chrome_threads(nlohmann::json& metadata) : metadata_(metadata) {}

  /// Slices must come in order of begin (and, for equal begins, longer first).
  std::pair<int, int> place(const std::string& endpoint, std::int64_t begin_us,
                            std::int64_t end_us) {
    auto& lanes = endpoint_lanes(endpoint);
    for (auto& l : lanes) {
      // What ended before this begins is closed; an end equal to the begin may still count as
      // open to a viewer, so it is not closed here.
      while (!l.open_ends.empty() && l.open_ends.back() < begin_us)
        l.open_ends.pop_back();
      if (l.open_ends.empty() || l.open_ends.back() >= end_us) {
        l.open_ends.push_back(end_us);
        return {l.pid, l.tid};
      }
    }
    auto& l = add_lane(endpoint, lanes);
    l.open_ends.push_back(end_us);
    return {l.pid, l.tid};
  }

private:
  struct lane {
    int pid = 0;
    int tid = 0;
    std::vector<std::int64_t> open_ends; // a stack: innermost last
  };

  std::vector<lane>& endpoint_lanes(const std::string& endpoint) {
    auto it = lanes_.find(endpoint);
    if (it != lanes_.end())
      return it->second;
    auto& lanes = lanes_[endpoint];
    order_.emplace(endpoint, static_cast<int>(order_.size()) + 1);
    add_lane(endpoint, lanes);
    return lanes;
  }

  lane& add_lane(const std::string& endpoint, std::vector<lane>& lanes) {
    using nlohmann::json;
    auto node = node_of(endpoint);
    auto [pit, fresh] = pids_.emplace(node, static_cast<int>(pids_.size()) + 1);
    if (fresh) {
      metadata_.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pit->second},
                           {"tid", 0}, {"args", {{"name", node}}}});
      metadata_.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pit->second},
                           {"tid", 0}, {"args", {{"sort_index", pit->second}}}});
    }
    lane l{pit->second, ++last_tid_, {}};
    auto name = lanes.empty() ? endpoint : endpoint + " (" + std::to_string(lanes.size() + 1) + ")";
    metadata_.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", l.pid}, {"tid", l.tid},
                         {"args", {{"name", name}}}});
    // Lanes of one endpoint stay together, endpoints in order of first appearance.
    metadata_.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", l.pid},
                         {"tid", l.tid},
                         {"args", {{"sort_index", order_.at(endpoint) * 1000
                                                    + static_cast<int>(lanes.size())}}}});
    lanes.push_back(l);
    return lanes.back();
  }

  nlohmann::json& metadata_;
  std::map<std::string, int> pids_;
  std::map<std::string, int> order_;
  std::map<std::string, std::vector<lane>> lanes_;
  int last_tid_ = 0;
};

} // namespace

std::string export_chrome(std::span<const record> records) {
  using nlohmann::json;
  std::int64_t t0 = 0;
  if (!records.empty())
    t0 = std::min_element(records.begin(), records.end(), [](const auto& a, const auto& b) {
           return a.time_us < b.time_us;
         })->time_us;

  auto args_of = [](const record& r) {
    json a = {{"from", r.from},
              {"to", r.to},
              {"token", r.token.to_string()},
              {"bytes", r.bytes},
              {"outcome", to_string(r.result)},
              {"trace_id", hex_id(r.trace.trace_id)},
              {"span_id", hex_id(r.trace.span_id)},
              {"parent_span_id", hex_id(r.trace.parent_span_id)},
              {"seq", r.sequence}};
    if (!r.detail.empty())
      a["detail"] = r.detail;
    if (r.latency_us >= 0)
      a["latency_us"] = r.latency_us;
    return a;
  };

  call_index calls(records);
  std::vector<chrome_slice> slices;
  // The arrow from a send to its receipt, keyed by span id; each end is written right after the
  // slice it binds to (the one open on its thread then), as viewers read events in order.
  auto add_flows = [&](chrome_slice& slice, const record& r) {
    if (r.dir == direction::send && call_index::find(calls.receive, r))
      slice.flows.push_back({{"ph", "s"}, {"name", r.method}, {"cat", "flow"},
                             {"id", hex_id(r.trace.span_id)}});
    if (r.dir == direction::receive && call_index::find(calls.send, r))
      slice.flows.push_back({{"ph", "f"}, {"bp", "e"}, {"name", r.method}, {"cat", "flow"},
                             {"id", hex_id(r.trace.span_id)}});
  };
  // A complete event for one side of an ask: `start` opens it, `end` (when recorded) closes it
  // and supplies the outcome; without `start`, the latency says when it began.
  auto ask_span = [&](const record* start, const record* end, const char* side) {
    const record& any = start != nullptr ? *start : *end;
    chrome_slice slice;
    slice.endpoint = local_endpoint(any);
    slice.begin_us = start != nullptr ? start->time_us
                                      : end->time_us - std::max<std::int64_t>(0, end->latency_us);
    slice.end_us = std::max(slice.begin_us, end != nullptr ? end->time_us : slice.begin_us);
    json a = args_of(end != nullptr ? *end : *start);
    a["side"] = side;
    // A reply names the callee as its sender; the span always reads caller to callee.
    a["from"] = any.dir == direction::reply ? any.to : any.from;
    a["to"] = any.dir == direction::reply ? any.from : any.to;
    if (start != nullptr)
      a["request_bytes"] = start->bytes;
    if (end != nullptr)
      a["answer_bytes"] = end->bytes;
    else
      a["answer"] = "not recorded";
    // A call refused before it was answered keeps that outcome even without an answer record.
    if (start != nullptr && start->result != outcome::ok
        && (end == nullptr || end->result == outcome::ok))
      a["outcome"] = to_string(start->result);
    slice.event = {{"ph", "X"}, {"name", any.method}, {"cat", "ask"},
                   {"dur", slice.end_us - slice.begin_us}, {"args", a}};
    if (start != nullptr)
      add_flows(slice, *start);
    slices.push_back(std::move(slice));
  };

  for (const auto& r : records) {
    if (!r.is_ask) {
      if (r.dir != direction::send && r.dir != direction::receive)
        continue; // tells have no answers; tolerate odd input
      chrome_slice slice;
      slice.endpoint = local_endpoint(r);
      slice.begin_us = slice.end_us = r.time_us;
      json a = args_of(r);
      a["side"] = r.dir == direction::send ? "caller" : "callee";
      slice.event = {{"ph", "i"}, {"s", "t"}, {"name", r.method}, {"cat", "tell"}, {"args", a}};
      add_flows(slice, r);
      slices.push_back(std::move(slice));
      continue;
    }
    switch (r.dir) {
      case direction::send: {
        auto resp = call_index::find(calls.response, r);
        ask_span(&r, resp ? &records[*resp] : nullptr, "caller");
        break;
      }
      case direction::response:
        if (!call_index::find(calls.send, r))
          ask_span(nullptr, &r, "caller");
        break;
      case direction::receive: {
        auto rep = call_index::find(calls.reply, r);
        ask_span(&r, rep ? &records[*rep] : nullptr, "callee");
        break;
      }
      case direction::reply:
        if (!call_index::find(calls.receive, r))
          ask_span(nullptr, &r, "callee");
        break;
    }
  }

  // By begin, enclosing slices before what they enclose; record order breaks ties.
  std::stable_sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) {
    if (a.begin_us != b.begin_us)
      return a.begin_us < b.begin_us;
    return a.end_us > b.end_us;
  });
  json metadata = json::array();
  json timed = json::array();
  chrome_threads threads(metadata);
  for (auto& slice : slices) {
    auto [pid, tid] = threads.place(slice.endpoint, slice.begin_us, slice.end_us);
    auto place = [&](json& e) {
      e["pid"] = pid;
      e["tid"] = tid;
      e["ts"] = slice.begin_us - t0;
      timed.push_back(std::move(e));
    };
    place(slice.event);
    for (auto& flow : slice.flows)
      place(flow);
  }
  json all = std::move(metadata);
  for (auto& e : timed)
    all.push_back(std::move(e));
  json doc = {{"traceEvents", std::move(all)}, {"displayTimeUnit", "ms"}};
  // Endpoint ids and error texts are bytes as recorded; replace what is not UTF-8.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

bool is_mermaid_keyword(const std::string& id) {
  static const std::set<std::string> keywords = {
    "end",   "participant", "actor",  "loop",    "alt",     "else",   "opt",
    "par",   "and",         "rect",   "note",    "over",    "activate", "deactivate",
    "title", "autonumber",  "critical", "break", "box",     "create", "destroy",
    "link",  "links",       "left",   "right",   "of",      "as"};
  std::string lower;
  for (char c : id)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return keywords.contains(lower);
}

/// Text Mermaid shows as it is: no line breaks, and the characters its parser treats specially
/// written as entity codes.
std::string mermaid_text(std::string_view s, std::size_t limit = 120) {
  std::string out;
  std::size_t shown = 0;
  for (char c : s) {
    if (shown++ == limit) {
      out += "...";
      break;
    }
    switch (c) {
      case '\n':
      case '\r':
      case '\t': out += ' '; break;
      case ';': out += "#59;"; break;
      case '#': out += "#35;"; break;
      case '<': out += "#60;"; break;
      case '>': out += "#62;"; break;
      default: out += c;
    }
  }
  return out;
}

class mermaid_participants {
public:
  const std::string& id_of(const std::string& endpoint) {
    auto it = ids_.find(endpoint);
    if (it != ids_.end())
      return it->second;
    std::string id;
    for (char c : endpoint)
      id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0])) || is_mermaid_keyword(id))
      id = "p_" + id;
    // Two endpoints may sanitize alike ("a/b" and "a_b").
    auto base = id;
    for (int n = 2; taken_.contains(id); ++n)
      id = base + "_" + std::to_string(n);
    taken_.insert(id);
    declarations_ += "    participant " + id + " as " + mermaid_text(endpoint) + "\n";
    return ids_.emplace(endpoint, id).first->second;
  }

  const std::string& declarations() const { return declarations_; }

private:
  std::map<std::string, std::string> ids_;
  std::set<std::string> taken_;
  std::string declarations_;
};

} // namespace

std::string export_mermaid(std::span<const record> records) {
  mermaid_participants parts;
  // Declare every endpoint in order of appearance before any arrow, so lanes keep that order.
  for (const auto& r : records) {
    const auto& caller = r.dir == direction::reply ? r.to : r.from;
    const auto& callee = r.dir == direction::reply ? r.from : r.to;
    parts.id_of(caller.empty() ? std::string("?") : caller);
    parts.id_of(callee.empty() ? std::string("?") : callee);
  }
  call_index calls(records);
  std::string body;
  auto note = [&](const std::string& over, const record& r) {
    std::string text = to_string(r.result);
    if (!r.detail.empty())
      text += " - " + r.detail;
    body += "    Note over " + parts.id_of(over) + ": " + mermaid_text(r.method) + " "
            + mermaid_text(text) + "\n";
  };
  for (const auto& r : records) {
    auto caller = r.dir == direction::reply ? r.to : r.from;
    auto callee = r.dir == direction::reply ? r.from : r.to;
    if (caller.empty())
      caller = "?";
    if (callee.empty())
      callee = "?";
    const auto& a = parts.id_of(caller);
    const auto& b = parts.id_of(callee);
    bool ok = r.result == outcome::ok;
    auto label = mermaid_text(r.method) + (r.is_ask ? "" : " (tell)");
    switch (r.dir) {
      case direction::receive:
        body += "    " + a + (ok ? "->>" : "-x") + b + ": " + label + "\n";
        if (!ok)
          note(callee, r);
        break;
      case direction::send:
        // Drawn here only when this trace does not hold its receipt (another node's, or lost).
        if (call_index::find(calls.receive, r))
          break;
        body += "    " + a + (ok ? "->>" : "-x") + b + ": " + label + "\n";
        if (!ok)
          note(caller, r);
        break;
      case direction::reply: {
        body += "    " + b + (ok ? "-->>" : "--x") + a + ": " + label + "\n";
        // A call refused on receipt was annotated there; its error reply says the same.
        auto received = call_index::find(calls.receive, r);
        if (!ok && (!received || records[*received].result == outcome::ok))
          note(callee, r);
        break;
      }
      case direction::response:
        if (call_index::find(calls.reply, r))
          break;
        body += "    " + b + (ok ? "-->>" : "--x") + a + ": " + label + "\n";
        if (!ok)
          note(caller, r);
        break;
    }
  }
  return "sequenceDiagram\n" + parts.declarations() + body;
}

} // namespace flint::trace
