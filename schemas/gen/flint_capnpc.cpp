// flint-capnpc: a `capnp compile` plugin that writes, for every schema file annotated with
// `$Flint.namespace` (schemas/flint.capnp), the plain C++ value types of its structs and their
// codecs. The schema is then the one place a message is written; the gateway header declares
// the method (id, name, request, response) and nothing else.
//
// Output per file `x.capnp`: `x.messages.hpp` (value types, `rpc::codec` declarations; no Cap'n
// Proto headers) and `x.messages.c++` (the `flint::wire::put/get` conversions and the codecs).
//
// Usage (what CMake runs): capnp compile -I<schemas> --src-prefix=<schemas>
//                           -o<this binary>:<out dir> <schemas>/x.capnp

#include <capnp/schema-loader.h>
#include <capnp/schema.capnp.h>
#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <kj/io.h>

#include <cctype>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cs = capnp::schema;

constexpr std::uint64_t ann_namespace = 0xd0a9e5f3b1c24e01ull;
constexpr std::uint64_t ann_prefix = 0xd0a9e5f3b1c24e02ull;
constexpr std::uint64_t ann_include = 0xd0a9e5f3b1c24e03ull;
constexpr std::uint64_t ann_codec_include = 0xd0a9e5f3b1c24e04ull;
constexpr std::uint64_t ann_type = 0xd0a9e5f3b1c24e05ull;
constexpr std::uint64_t ann_name = 0xd0a9e5f3b1c24e06ull;
constexpr std::uint64_t ann_skip = 0xd0a9e5f3b1c24e07ull;
constexpr std::uint64_t ann_init = 0xd0a9e5f3b1c24e08ull;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

template <class Annotations>
std::optional<std::string> text_annotation(Annotations list, std::uint64_t id) {
  for (auto a : list)
    if (a.getId() == id)
      return std::string(a.getValue().getText().cStr());
  return std::nullopt;
}

template <class Annotations>
std::vector<std::string> list_annotation(Annotations list, std::uint64_t id) {
  std::vector<std::string> out;
  for (auto a : list)
    if (a.getId() == id)
      for (auto t : a.getValue().getList().template getAs<capnp::List<capnp::Text>>())
        out.emplace_back(t.cStr());
  return out;
}

std::string snake_case(const std::string& camel) {
  std::string out;
  for (std::size_t i = 0; i < camel.size(); ++i) {
    auto c = camel[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i > 0)
        out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

std::string upper_case(const std::string& s) {
  std::string out;
  for (auto c : s)
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string capitalized(const std::string& s) {
  auto out = s;
  if (!out.empty())
    out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

/// The generated enumerant name capnp uses for a union member: camelCase -> CAMEL_CASE.
std::string which_name(const std::string& camel) {
  return upper_case(snake_case(camel));
}

/// Doc comments as `///` lines at `indent`.
std::string doc(const std::string& comment, const std::string& indent) {
  std::string out;
  std::istringstream in(comment);
  std::string line;
  while (std::getline(in, line)) {
    auto start = line.find_first_not_of(' ');
    out += indent + "///" + (start == std::string::npos ? "" : " " + line.substr(start)) + "\n";
  }
  return out;
}

struct file_info {
  std::string ns; // C++ namespace of the value types; empty: nothing generated
  std::string prefix; // dropped from struct names
  std::string schema_name; // "resource_manager.capnp"
};

class generator {
public:
  explicit generator(cs::CodeGeneratorRequest::Reader request) : request_(request) {
    for (auto node : request.getNodes())
      loader_.load(node);
    for (auto info : request.getSourceInfo()) {
      comments_[info.getId()] = info.getDocComment().cStr();
      std::vector<std::string> members;
      for (auto m : info.getMembers())
        members.emplace_back(m.getDocComment().cStr());
      member_comments_[info.getId()] = std::move(members);
    }
    for (auto node : request.getNodes())
      if (node.isFile()) {
        file_info f;
        f.ns = text_annotation(node.getAnnotations(), ann_namespace).value_or("");
        f.prefix = text_annotation(node.getAnnotations(), ann_prefix).value_or("");
        std::string display = node.getDisplayName().cStr();
        f.schema_name = display.substr(display.rfind('/') + 1);
        files_[node.getId()] = f;
      }
  }

  void run(const std::string& out_dir) {
    for (auto file : request_.getRequestedFiles()) {
      auto node = loader_.get(file.getId()).getProto();
      const auto& info = files_.at(file.getId());
      if (info.ns.empty())
        continue;
      std::string stem = info.schema_name.substr(0, info.schema_name.size() - 6); // ".capnp"
      std::vector<capnp::StructSchema> structs;
      for (auto nested : node.getNestedNodes()) {
        auto s = loader_.get(nested.getId());
        if (s.getProto().isStruct() && !skipped(s.asStruct()))
          structs.push_back(s.asStruct());
      }
      structs = dependencies_first(structs);
      write(out_dir + "/" + stem + ".messages.hpp", header(node, info, stem, structs));
      write(out_dir + "/" + stem + ".messages.c++", source(node, info, stem, structs));
    }
  }

private:
  static void write(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    if (!out)
      fail("cannot write " + path);
    out << text;
  }

  /// C++ needs a struct defined before a field holds it: order the file's structs so.
  static std::vector<capnp::StructSchema> dependencies_first(
    const std::vector<capnp::StructSchema>& structs) {
    std::vector<capnp::StructSchema> out;
    std::set<std::uint64_t> done;
    std::set<std::uint64_t> in_file;
    for (auto s : structs)
      in_file.insert(s.getProto().getId());
    std::function<void(capnp::StructSchema)> visit = [&](capnp::StructSchema s) {
      if (!done.insert(s.getProto().getId()).second)
        return;
      for (auto f : s.getFields()) {
        auto t = f.getType();
        while (t.isList())
          t = t.asList().getElementType();
        if (t.isStruct() && in_file.count(t.asStruct().getProto().getId()) > 0)
          visit(t.asStruct());
      }
      out.push_back(s);
    };
    for (auto s : structs)
      visit(s);
    return out;
  }

  static bool skipped(capnp::StructSchema s) {
    for (auto a : s.getProto().getAnnotations())
      if (a.getId() == ann_skip)
        return true;
    return false;
  }

  static bool hand_written(capnp::StructSchema s) {
    return text_annotation(s.getProto().getAnnotations(), ann_type).has_value();
  }

  std::string short_name(capnp::Schema s) const {
    auto proto = s.getProto();
    std::string display = proto.getDisplayName().cStr();
    return display.substr(proto.getDisplayNamePrefixLength());
  }

  const file_info& file_of(capnp::Schema s) const {
    auto id = s.getProto().getScopeId();
    auto it = files_.find(id);
    if (it == files_.end())
      fail(short_name(s) + ": only top-level structs of a file are supported");
    return it->second;
  }

  /// The C++ type of a struct's values, fully qualified.
  std::string struct_type(capnp::StructSchema s) const {
    if (auto t = text_annotation(s.getProto().getAnnotations(), ann_type))
      return qualify(*t);
    const auto& f = file_of(s);
    if (f.ns.empty())
      fail(short_name(s) + " has no C++ type: annotate it with $Flint.type or give its file a "
           "$Flint.namespace");
    return "::" + f.ns + "::" + cxx_name(s);
  }

  std::string cxx_name(capnp::StructSchema s) const {
    if (auto n = text_annotation(s.getProto().getAnnotations(), ann_name))
      return *n;
    auto name = short_name(s);
    const auto& f = file_of(s);
    if (!f.prefix.empty() && name.rfind(f.prefix, 0) == 0)
      name = name.substr(f.prefix.size());
    return snake_case(name);
  }

  static std::string qualify(const std::string& t) {
    if (t.rfind("std::", 0) == 0 || t.rfind("::", 0) == 0)
      return t;
    return "::flint::" + t;
  }

  std::string schema_name_of(capnp::StructSchema s) const {
    return "::flint::schema::" + short_name(s);
  }

  static std::string primitive(capnp::Type t) {
    switch (t.which()) {
      case cs::Type::BOOL: return "bool";
      case cs::Type::INT8: return "std::int8_t";
      case cs::Type::INT16: return "std::int16_t";
      case cs::Type::INT32: return "std::int32_t";
      case cs::Type::INT64: return "std::int64_t";
      case cs::Type::UINT8: return "std::uint8_t";
      case cs::Type::UINT16: return "std::uint16_t";
      case cs::Type::UINT32: return "std::uint32_t";
      case cs::Type::UINT64: return "std::uint64_t";
      case cs::Type::FLOAT32: return "float";
      case cs::Type::FLOAT64: return "double";
      default: return {};
    }
  }

  std::string type_of(capnp::Type t, const std::optional<std::string>& override_type) const {
    if (override_type && !t.isList())
      return qualify(*override_type);
    if (auto p = primitive(t); !p.empty())
      return p;
    switch (t.which()) {
      case cs::Type::VOID: return "std::monostate";
      case cs::Type::TEXT: return "std::string";
      case cs::Type::DATA: return "std::vector<char>";
      case cs::Type::STRUCT: return struct_type(t.asStruct());
      case cs::Type::LIST:
        return "std::vector<" + type_of(t.asList().getElementType(), override_type) + ">";
      default: fail("unsupported field type (enums, interfaces and AnyPointer are not)");
    }
  }

  static std::string default_of(capnp::StructSchema::Field f) {
    auto proto = f.getProto();
    if (!proto.isSlot())
      return {};
    auto v = proto.getSlot().getDefaultValue();
    switch (v.which()) {
      case cs::Value::BOOL: return v.getBool() ? " = true" : " = false";
      case cs::Value::INT8: return " = " + std::to_string(v.getInt8());
      case cs::Value::INT16: return " = " + std::to_string(v.getInt16());
      case cs::Value::INT32: return " = " + std::to_string(v.getInt32());
      case cs::Value::INT64:
        // The literal -9223372036854775808 is the negation of an unsigned constant in C++.
        if (v.getInt64() == std::numeric_limits<std::int64_t>::min())
          return " = std::numeric_limits<std::int64_t>::min()";
        return " = " + std::to_string(v.getInt64());
      case cs::Value::UINT8: return " = " + std::to_string(v.getUint8());
      case cs::Value::UINT16: return " = " + std::to_string(v.getUint16());
      case cs::Value::UINT32: return " = " + std::to_string(v.getUint32());
      case cs::Value::UINT64: return " = " + std::to_string(v.getUint64());
      case cs::Value::FLOAT32: return " = " + std::to_string(v.getFloat32());
      case cs::Value::FLOAT64: return " = " + std::to_string(v.getFloat64());
      default: return {};
    }
  }

  static std::optional<std::string> override_of(capnp::StructSchema::Field f) {
    return text_annotation(f.getProto().getAnnotations(), ann_type);
  }

  static std::string field_name(capnp::StructSchema::Field f) {
    if (auto n = text_annotation(f.getProto().getAnnotations(), ann_name))
      return *n;
    return snake_case(f.getProto().getName().cStr());
  }

  static bool is_union(capnp::StructSchema s) {
    auto count = s.getProto().getStruct().getDiscriminantCount();
    if (count == 0)
      return false;
    if (count != s.getFields().size())
      fail(
        "a struct whose union sits beside other fields is not supported; wrap the union in "
        "a struct of its own");
    return true;
  }

  std::string member_comment(capnp::StructSchema s, capnp::StructSchema::Field f) const {
    auto it = member_comments_.find(s.getProto().getId());
    if (it == member_comments_.end())
      return {};
    auto index = f.getIndex();
    return index < it->second.size() ? it->second[index] : std::string();
  }

  std::string struct_comment(capnp::Schema s) const {
    auto it = comments_.find(s.getProto().getId());
    return it == comments_.end() ? std::string() : it->second;
  }

  // -- header ---------------------------------------------------------------------------------

  std::string header(cs::Node::Reader file, const file_info& info, const std::string& stem,
                     const std::vector<capnp::StructSchema>& structs) const {
    std::string out;
    out += "#pragma once\n";
    out += "// Generated by flint-capnpc from schemas/" + info.schema_name + ": do not edit.\n";
    out += "// Value types of the protocol, and their codecs (" + stem + ".messages.c++).\n\n";
    out +=
      "#include <cstdint>\n#include <limits>\n#include <span>\n#include <string>\n#include <variant>\n"
      "#include <vector>\n\n";
    out += "#include \"runtime/actors/rpc/method.hpp\"\n";
    for (const auto& inc : list_annotation(file.getAnnotations(), ann_include))
      out += "#include \"" + inc + "\"\n";
    out += "\nnamespace " + info.ns + " {\n\n";
    for (auto s : structs)
      if (!hand_written(s))
        out += value_type(s);
    out += "} // namespace " + info.ns + "\n\nnamespace flint::rpc {\n\n";
    for (auto s : structs)
      out += "FLINT_DECLARE_CODEC(" + struct_type(s) + ")\n";
    out += "\n} // namespace flint::rpc\n";
    return out;
  }

  std::string value_type(capnp::StructSchema s) const {
    std::string out = doc(struct_comment(s), "");
    auto name = cxx_name(s);
    if (is_union(s)) {
      out += "using " + name + " = std::variant<";
      bool first = true;
      for (auto f : s.getFields()) {
        out += (first ? "" : ", ") + type_of(f.getType(), override_of(f));
        first = false;
      }
      return out + ">;\n\n";
    }
    out += "struct " + name + " {\n";
    for (auto f : s.getFields()) {
      if (!f.getProto().isSlot())
        fail(short_name(s) + ": groups are not supported");
      out += doc(member_comment(s, f), "  ");
      auto t = f.getType();
      std::string init;
      if (!primitive(t).empty() && override_of(f)) {
        // An enum sent as its number: its C++ default is named, the wire default stays 0.
        auto init_value = text_annotation(f.getProto().getAnnotations(), ann_init);
        if (default_of(f) != " = 0")
          fail(short_name(s) + "." + f.getProto().getName().cStr()
               + ": give an enum field's default with $Flint.init, not in the schema");
        init = init_value ? " = " + qualify(*init_value) : "{}";
      } else if (!primitive(t).empty()) {
        init = default_of(f);
      }
      out += "  " + type_of(t, override_of(f)) + " " + field_name(f) + init + ";\n";
    }
    out += "  friend bool operator==(const " + name + "&, const " + name + "&) = default;\n";
    return out + "};\n\n";
  }

  // -- source ---------------------------------------------------------------------------------

  std::string source(cs::Node::Reader file, const file_info& info, const std::string& stem,
                     const std::vector<capnp::StructSchema>& structs) {
    std::string body, codecs;
    for (auto s : structs)
      if (!hand_written(s))
        body += conversions(s);
    for (auto s : structs)
      codecs += codec(s);

    std::string out;
    out += "// Generated by flint-capnpc from schemas/" + info.schema_name + ": do not edit.\n\n";
    out += "#include \"schemas/" + stem + ".messages.hpp\"\n\n";
    out += "#include \"schemas/codec_support.hpp\"\n";
    out += "#include \"schemas/" + stem + ".capnp.h\"\n";
    for (const auto& inc : list_annotation(file.getAnnotations(), ann_codec_include))
      out += "#include \"" + inc + "\"\n";
    for (const auto& inc : foreign_headers_)
      out += "#include \"" + inc + "\"\n";
    out += "\nnamespace flint::wire {\n\n";
    for (const auto& decl : foreign_declarations_)
      out += decl;
    if (!foreign_declarations_.empty())
      out += "\n";
    for (auto s : structs)
      if (!hand_written(s))
        out += "void put(" + schema_name_of(s) + "::Builder b, const " + struct_type(s) + "& x);\n"
          + "expected<unit> get(" + schema_name_of(s) + "::Reader r, " + struct_type(s)
          + "& out);\n";
    out += "\n" + body + "} // namespace flint::wire\n\nnamespace flint::rpc {\n\n" + codecs
      + "} // namespace flint::rpc\n";
    return out;
  }

  /// Generated structs of other files used here: their conversions are declared, not defined.
  void note_foreign(capnp::StructSchema s) {
    if (hand_written(s))
      return;
    const auto& f = file_of(s);
    bool requested = false;
    for (auto file : request_.getRequestedFiles())
      if (file.getId() == s.getProto().getScopeId())
        requested = true;
    if (requested)
      return;
    std::string stem = f.schema_name.substr(0, f.schema_name.size() - 6);
    foreign_headers_.insert("schemas/" + stem + ".messages.hpp");
    foreign_headers_.insert("schemas/" + stem + ".capnp.h");
    foreign_declarations_.insert(
      "void put(" + schema_name_of(s) + "::Builder b, const " + struct_type(s) + "& x);\n"
      + "expected<unit> get(" + schema_name_of(s) + "::Reader r, " + struct_type(s) + "& out);\n");
  }

  /// Statements writing value `v` (C++ expression) of type `t` through `setter`/`init`.
  std::string put_value(capnp::Type t, const std::optional<std::string>& ov, const std::string& v,
                        const std::string& name, const std::string& b, const std::string& ind) {
    auto cap = capitalized(name);
    if (!primitive(t).empty())
      return ind + b + ".set" + cap + "(" + (ov ? "to_wire(" + v + ")" : v) + ");\n";
    switch (t.which()) {
      case cs::Type::VOID: return ind + b + ".set" + cap + "();\n";
      case cs::Type::TEXT: return ind + b + ".set" + cap + "(as_text(" + v + "));\n";
      case cs::Type::DATA:
        if (ov)
          return ind + "{\n" + ind + "  auto bytes = encode_data(" + v + ");\n" + ind + "  " + b
            + ".set" + cap + "(as_data(bytes));\n" + ind + "}\n";
        return ind + b + ".set" + cap + "(as_data(" + v + "));\n";
      case cs::Type::STRUCT:
        if (!ov)
          note_foreign(t.asStruct());
        return ind + "put(" + b + ".init" + cap + "(), " + v + ");\n";
      case cs::Type::LIST: {
        auto elem = t.asList().getElementType();
        std::string out = ind + "{\n" + ind + "  auto list = " + b + ".init" + cap
          + "(static_cast<unsigned>(" + v + ".size()));\n" + ind
          + "  for (unsigned i = 0; i < list.size(); ++i) {\n";
        auto e = v + "[i]";
        auto in = ind + "    ";
        if (!primitive(elem).empty())
          out += in + "list.set(i, " + (ov ? "to_wire(" + e + ")" : e) + ");\n";
        else if (elem.isText())
          out += in + "list.set(i, as_text(" + e + "));\n";
        else if (elem.isData())
          out += in + "list.set(i, as_data(" + e + "));\n";
        else if (elem.isStruct()) {
          if (!ov)
            note_foreign(elem.asStruct());
          out += in + "put(list[i], " + e + ");\n";
        } else
          fail("lists of lists are not supported");
        return out + ind + "  }\n" + ind + "}\n";
      }
      default: fail("unsupported field type");
    }
  }

  /// Statements reading `r.get<Name>()` into lvalue `v`; failures return from the function.
  std::string get_value(capnp::Type t, const std::optional<std::string>& ov, const std::string& v,
                        const std::string& src, const std::string& ind) {
    auto check = [&](const std::string& call) {
      return ind + "if (auto ok = " + call + "; !ok)\n" + ind + "  return ok.error();\n";
    };
    if (!primitive(t).empty())
      return ov ? check("from_wire(" + src + ", " + v + ")") : ind + v + " = " + src + ";\n";
    switch (t.which()) {
      case cs::Type::VOID: return ind + v + " = std::monostate{};\n";
      case cs::Type::TEXT: return ind + v + " = text(" + src + ");\n";
      case cs::Type::DATA:
        return ov ? check("decode_data(" + src + ", " + v + ")")
                  : ind + v + " = from_data(" + src + ");\n";
      case cs::Type::STRUCT:
        if (!ov)
          note_foreign(t.asStruct());
        return check("get(" + src + ", " + v + ")");
      case cs::Type::LIST: {
        auto elem = t.asList().getElementType();
        std::string out = ind + "{\n" + ind + "  auto list = " + src + ";\n" + ind + "  " + v
          + ".resize(list.size());\n" + ind + "  for (unsigned i = 0; i < list.size(); ++i) {\n";
        auto in = ind + "    ";
        auto e = v + "[i]";
        if (!primitive(elem).empty() && ov)
          out += in + "if (auto ok = from_wire(list[i], " + e + "); !ok)\n" + in
            + "  return ok.error();\n";
        else if (!primitive(elem).empty())
          out += in + e + " = list[i];\n";
        else if (elem.isText())
          out += in + e + " = text(list[i]);\n";
        else if (elem.isData())
          out += in + e + " = from_data(list[i]);\n";
        else if (elem.isStruct()) {
          if (!ov)
            note_foreign(elem.asStruct());
          out += in + "if (auto ok = get(list[i], " + e + "); !ok)\n" + in
            + "  return make_error(ok.error().code, \"" + owner_
            + " entry \" + std::to_string(i) + \": \"\n" + in
            + "                    + ok.error().message);\n";
        }
        return out + ind + "  }\n" + ind + "}\n";
      }
      default: fail("unsupported field type");
    }
  }

  std::string conversions(capnp::StructSchema s) {
    owner_ = spaced(cxx_name(s));
    auto schema_t = schema_name_of(s);
    auto cxx_t = struct_type(s);
    std::string put_body, get_body;
    if (is_union(s)) {
      put_body += "  switch (x.index()) {\n";
      get_body += "  switch (r.which()) {\n";
      unsigned index = 0;
      for (auto f : s.getFields()) {
        std::string name = f.getProto().getName().cStr();
        put_body += "    case " + std::to_string(index) + ":\n"
          + put_value(f.getType(), override_of(f), "std::get<" + std::to_string(index) + ">(x)",
                      name, "b", "      ")
          + "      return;\n";
        get_body += "    case " + schema_t + "::" + which_name(name) + ": {\n" + "      "
          + type_of(f.getType(), override_of(f)) + " value;\n"
          + get_value(f.getType(), override_of(f), "value", "r.get" + capitalized(name) + "()",
                      "      ")
          + "      out = std::move(value);\n      return unit{};\n    }\n";
        ++index;
      }
      put_body += "  }\n";
      get_body +=
        "  }\n  // A sender with a newer schema may add alternatives this reader cannot "
        "interpret.\n  return make_error(errc::malformed_message, \""
        + spaced(cxx_name(s)) + ": unknown alternative \"\n"
        + "                    + std::to_string(static_cast<unsigned>(r.which())));\n";
    } else {
      for (auto f : s.getFields()) {
        std::string name = f.getProto().getName().cStr();
        put_body += put_value(f.getType(), override_of(f), "x." + field_name(f), name, "b", "  ");
        get_body += get_value(f.getType(), override_of(f), "out." + field_name(f),
                              "r.get" + capitalized(name) + "()", "  ");
      }
      get_body += "  return unit{};\n";
    }
    bool uses_b = s.getFields().size() > 0;
    return "void put(" + schema_t + "::Builder " + (uses_b ? "b" : "") + ", const " + cxx_t + "& "
      + (uses_b ? "x" : "") + ") {\n" + put_body + "}\n\n" + "expected<unit> get(" + schema_t
      + "::Reader " + (uses_b ? "r" : "") + ", " + cxx_t + "& " + (uses_b ? "out" : "") + ") {\n"
      + get_body + "}\n\n";
  }

  static std::string spaced(const std::string& snake) {
    std::string out = snake;
    for (auto& c : out)
      if (c == '_')
        c = ' ';
    return out;
  }

  std::string codec(capnp::StructSchema s) {
    auto schema_t = schema_name_of(s);
    auto cxx_t = struct_type(s);
    // First segment: the small-message size plus the top-level bytes, so most messages take one
    // allocation.
    std::string hint = "small_message_words";
    if (!is_union(s) && !hand_written(s))
      for (auto f : s.getFields())
        if ((f.getType().isText() || f.getType().isData()) && !override_of(f))
          hint += " + x." + field_name(f) + ".size() / sizeof(capnp::word)";
    return "void codec<" + cxx_t + ">::encode_to(std::vector<char>& out, const " + cxx_t + "& x) {\n"
           "  using namespace wire;\n"
           "  build_into<" + schema_t + ">(out, static_cast<unsigned>(" + hint + "),\n"
           "                             [&](" + schema_t + "::Builder b) { put(b, x); });\n}\n\n"
           "std::vector<char> codec<" + cxx_t + ">::encode(const " + cxx_t + "& x) {\n"
           "  std::vector<char> out;\n"
           "  encode_to(out, x);\n"
           "  return out;\n}\n\n"
           "expected<" + cxx_t + "> codec<" + cxx_t + ">::decode(std::span<const char> bytes) {\n"
           "  static const std::string what = \"" + spaced(cxx_name(s)) + "\";\n"
           "  return wire::read<" + schema_t + ">(bytes, what.c_str(),\n"
           "    [](" + schema_t + "::Reader r) -> expected<" + cxx_t + "> {\n"
           "      " + cxx_t + " out;\n"
           "      if (auto ok = wire::get(r, out); !ok) {\n"
           "        // Errors of list entries name the message already.\n"
           "        const auto& m = ok.error().message;\n"
           "        return make_error(ok.error().code, m.rfind(what, 0) == 0 ? m : what + (\": \" + m));\n"
           "      }\n"
           "      return out;\n"
           "    });\n}\n\n";
  }

  cs::CodeGeneratorRequest::Reader request_;
  capnp::SchemaLoader loader_;
  std::map<std::uint64_t, file_info> files_;
  std::map<std::uint64_t, std::string> comments_;
  std::map<std::uint64_t, std::vector<std::string>> member_comments_;
  std::set<std::string> foreign_headers_;
  std::set<std::string> foreign_declarations_;
  /// The message whose conversions are being written, as errors name it ("job list").
  std::string owner_;
};

} // namespace

int main(int argc, char** argv) {
  std::string out_dir = ".";
  // capnp passes the output directory as the working directory of the plugin.
  (void)argc;
  (void)argv;
  try {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = 1ull << 30;
    capnp::StreamFdMessageReader reader(0, options);
    generator gen(reader.getRoot<cs::CodeGeneratorRequest>());
    gen.run(out_dir);
  } catch (const std::exception& e) {
    std::cerr << "flint-capnpc: " << e.what() << "\n";
    return 1;
  } catch (const kj::Exception& e) {
    std::cerr << "flint-capnpc: " << e.getDescription().cStr() << "\n";
    return 1;
  }
  return 0;
}
