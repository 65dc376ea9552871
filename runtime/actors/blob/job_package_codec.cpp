#include "runtime/actors/blob/job_package.hpp"

#include "schemas/codec_support.hpp"
#include "schemas/job_package.capnp.h"

namespace flint::blob {

using wire::as_data;
using wire::as_text;
using wire::from_data;
using wire::text;

std::vector<char> encode_job_package(const job_package& x) {
  std::size_t text_bytes = x.library_key.size() + x.library_name.size() + x.entry.size();
  for (const auto& a : x.args)
    text_bytes += a.size() + 16;
  for (const auto& [k, v] : x.config)
    text_bytes += k.size() + v.size() + 32;
  // One first segment big enough for the whole message: the graph is copied once.
  capnp::MallocMessageBuilder message(static_cast<unsigned>(
    wire::small_message_words + (x.job_graph.size() + text_bytes) / sizeof(capnp::word) + 1));
  auto root = message.initRoot<schema::JobPackage>();
  root.setLibraryKey(as_text(x.library_key));
  root.setLibraryName(as_text(x.library_name));
  auto args = root.initArgs(static_cast<unsigned>(x.args.size()));
  for (unsigned i = 0; i < x.args.size(); ++i)
    args.set(i, as_text(x.args[i]));
  auto config = root.initConfig(static_cast<unsigned>(x.config.size()));
  unsigned i = 0;
  for (const auto& [k, v] : x.config) {
    config[i].setKey(as_text(k));
    config[i].setValue(as_text(v));
    ++i;
  }
  root.setJobGraph(as_data(x.job_graph));
  root.setEntry(as_text(x.entry));
  return wire::to_bytes(message);
}

expected<job_package> decode_job_package(std::span<const char> bytes) {
  return wire::read<schema::JobPackage>(bytes, "job package",
                                        [](schema::JobPackage::Reader r) -> expected<job_package> {
                                          job_package out;
                                          out.library_key = text(r.getLibraryKey());
                                          out.library_name = text(r.getLibraryName());
                                          for (auto a : r.getArgs())
                                            out.args.push_back(text(a));
                                          for (auto e : r.getConfig())
                                            out.config[text(e.getKey())] = text(e.getValue());
                                          out.job_graph = from_data(r.getJobGraph());
                                          out.entry = text(r.getEntry());
                                          return out;
                                        });
}

} // namespace flint::blob
