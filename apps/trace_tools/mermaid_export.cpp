#include "apps/trace_tools/mermaid_export.hpp"

#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include "apps/trace_tools/detail/call_index.hpp"

namespace flint::trace {

namespace {

using detail::call_index;

bool is_mermaid_keyword(const std::string& id) {
  static const std::set<std::string> keywords = {
    "end",   "participant", "actor",    "loop",  "alt",  "else",     "opt",
    "par",   "and",         "rect",     "note",  "over", "activate", "deactivate",
    "title", "autonumber",  "critical", "break", "box",  "create",   "destroy",
    "link",  "links",       "left",     "right", "of",   "as"};
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
