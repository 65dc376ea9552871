#include "runtime/actors/blob/blob_gateway.hpp"
#include "runtime/actors/blob/job_package.hpp"

#include "schemas/blob.capnp.h"
#include "schemas/codec_support.hpp"
#include "schemas/job_package.capnp.h"

namespace flint::rpc {

using blob::get_blob_request;
using blob::get_blob_response;
using blob::put_blob_request;
using blob::put_blob_response;
using blob::put_job_package_request;
using blob::put_job_package_response;
using wire::as_data;
using wire::as_text;
using wire::from_data;
using wire::text;

/// One first segment big enough for the whole message: large blobs are copied once.
static unsigned words_for(std::size_t bytes) {
  return static_cast<unsigned>(wire::small_message_words + bytes / sizeof(capnp::word) + 1);
}

std::vector<char> codec<put_blob_request>::encode(const put_blob_request& x) {
  capnp::MallocMessageBuilder message(words_for(x.data.size()));
  message.initRoot<schema::PutBlobRequest>().setData(as_data(x.data));
  return wire::to_bytes(message);
}

expected<put_blob_request> codec<put_blob_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::PutBlobRequest>(bytes, "put_blob request",
                                            [](schema::PutBlobRequest::Reader r) -> expected<put_blob_request> {
                                              return put_blob_request{from_data(r.getData())};
                                            });
}

std::vector<char> codec<put_blob_response>::encode(const put_blob_response& x) {
  capnp::MallocMessageBuilder message(wire::small_message_words);
  message.initRoot<schema::PutBlobResponse>().setKey(as_text(x.key));
  return wire::to_bytes(message);
}

expected<put_blob_response> codec<put_blob_response>::decode(std::span<const char> bytes) {
  return wire::read<schema::PutBlobResponse>(bytes, "put_blob response",
                                             [](schema::PutBlobResponse::Reader r) -> expected<put_blob_response> {
                                               return put_blob_response{text(r.getKey())};
                                             });
}

std::vector<char> codec<get_blob_request>::encode(const get_blob_request& x) {
  capnp::MallocMessageBuilder message(wire::small_message_words);
  message.initRoot<schema::GetBlobRequest>().setKey(as_text(x.key));
  return wire::to_bytes(message);
}

expected<get_blob_request> codec<get_blob_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::GetBlobRequest>(bytes, "get_blob request",
                                            [](schema::GetBlobRequest::Reader r) -> expected<get_blob_request> {
                                              return get_blob_request{text(r.getKey())};
                                            });
}

std::vector<char> codec<get_blob_response>::encode(const get_blob_response& x) {
  capnp::MallocMessageBuilder message(words_for(x.data.size()));
  message.initRoot<schema::GetBlobResponse>().setData(as_data(x.data));
  return wire::to_bytes(message);
}

expected<get_blob_response> codec<get_blob_response>::decode(std::span<const char> bytes) {
  return wire::read<schema::GetBlobResponse>(bytes, "get_blob response",
                                             [](schema::GetBlobResponse::Reader r) -> expected<get_blob_response> {
                                               return get_blob_response{from_data(r.getData())};
                                             });
}

std::vector<char> codec<put_job_package_request>::encode(const put_job_package_request& x) {
  capnp::MallocMessageBuilder message(words_for(x.data.size()));
  auto root = message.initRoot<schema::PutJobPackageRequest>();
  root.setJobId(as_text(x.job_id));
  root.setData(as_data(x.data));
  return wire::to_bytes(message);
}

expected<put_job_package_request> codec<put_job_package_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::PutJobPackageRequest>(
    bytes, "put_job_package request",
    [](schema::PutJobPackageRequest::Reader r) -> expected<put_job_package_request> {
      return put_job_package_request{text(r.getJobId()), from_data(r.getData())};
    });
}

std::vector<char> codec<put_job_package_response>::encode(const put_job_package_response& x) {
  capnp::MallocMessageBuilder message(wire::small_message_words);
  message.initRoot<schema::PutJobPackageResponse>().setKey(as_text(x.key));
  return wire::to_bytes(message);
}

expected<put_job_package_response> codec<put_job_package_response>::decode(std::span<const char> bytes) {
  return wire::read<schema::PutJobPackageResponse>(
    bytes, "put_job_package response",
    [](schema::PutJobPackageResponse::Reader r) -> expected<put_job_package_response> {
      return put_job_package_response{text(r.getKey())};
    });
}

} // namespace flint::rpc

namespace flint::blob {

using rpc::words_for;
using wire::as_data;
using wire::as_text;
using wire::from_data;
using wire::text;

std::vector<char> encode_job_package(const job_package& x) {
  std::size_t text_bytes = x.library_key.size() + x.library_name.size();
  for (const auto& a : x.args)
    text_bytes += a.size() + 16;
  for (const auto& [k, v] : x.config)
    text_bytes += k.size() + v.size() + 32;
  capnp::MallocMessageBuilder message(words_for(x.job_graph.size() + text_bytes));
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
  return wire::to_bytes(message);
}

expected<job_package> decode_job_package(std::span<const char> bytes) {
  return wire::read<schema::JobPackage>(bytes, "job package", [](schema::JobPackage::Reader r) -> expected<job_package> {
    job_package out;
    out.library_key = text(r.getLibraryKey());
    out.library_name = text(r.getLibraryName());
    for (auto a : r.getArgs())
      out.args.push_back(text(a));
    for (auto e : r.getConfig())
      out.config[text(e.getKey())] = text(e.getValue());
    out.job_graph = from_data(r.getJobGraph());
    return out;
  });
}

} // namespace flint::blob
