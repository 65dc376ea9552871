#include "runtime/state/state_codec.hpp"

#include "schemas/checkpoint.capnp.h"
#include "schemas/codec_support.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace flint::state {

namespace {

/// Thrown inside decoding when a value is out of range; caught at the codec's edge.
struct decode_failure {
  std::string what;
};

// ---- encoding ----------------------------------------------------------------------------

void write_id(schema::OperatorId128::Builder out, const graph::operator_id& id) {
  out.setUpper(id.upper());
  out.setLower(id.lower());
}

void write_stream_handle(schema::StreamStateHandle::Builder out, const stream_state_handle& in) {
  out.setPath(wire::as_text(in.path));
  out.setOffset(in.offset);
  out.setSize(in.size);
  if (!in.inline_data.empty())
    out.setInlineData(wire::as_data(in.inline_data));
}

void write_named_files(capnp::List<schema::NamedFile>::Builder out,
                       const std::vector<named_file>& in) {
  for (unsigned i = 0; i < in.size(); ++i) {
    out[i].setName(wire::as_text(in[i].name));
    write_stream_handle(out[i].initHandle(), in[i].handle);
  }
}

void write_subtask(schema::OperatorSubtaskState::Builder out, const operator_subtask_state& in) {
  write_id(out.initOperatorId(), in.operator_id);
  auto keyed = out.initKeyed(static_cast<unsigned>(in.keyed.size()));
  for (unsigned k = 0; k < in.keyed.size(); ++k) {
    const keyed_state_handle& handle = in.keyed[k];
    auto handle_out = keyed[k];
    handle_out.setFirstKeyGroup(handle.first_key_group);
    handle_out.setLastKeyGroup(handle.last_key_group);
    auto offsets =
      handle_out.initKeyGroupOffsets(static_cast<unsigned>(handle.key_group_offsets.size()));
    for (unsigned i = 0; i < handle.key_group_offsets.size(); ++i)
      offsets.set(i, handle.key_group_offsets[i]);
    write_stream_handle(handle_out.initData(), handle.data);
    handle_out.setIncremental(handle.incremental);
    handle_out.setBaseCheckpointId(handle.base_checkpoint_id);
    write_named_files(handle_out.initSharedFiles(static_cast<unsigned>(handle.shared_files.size())),
                      handle.shared_files);
    write_named_files(
      handle_out.initPrivateFiles(static_cast<unsigned>(handle.private_files.size())),
      handle.private_files);
  }
  auto entries = out.initListEntries(static_cast<unsigned>(in.list_entries.size()));
  for (unsigned i = 0; i < in.list_entries.size(); ++i)
    entries.set(i, wire::as_data(in.list_entries[i]));
}

void write_snapshot(schema::TaskStateSnapshot::Builder out, const task_state_snapshot& in) {
  auto ops = out.initOperators(static_cast<unsigned>(in.operators.size()));
  for (unsigned i = 0; i < in.operators.size(); ++i)
    write_subtask(ops[i], in.operators[i]);
  out.setFinished(in.finished);
}

void write_metadata(schema::CheckpointMetadata::Builder out, const checkpoint_metadata& in) {
  out.setCheckpointId(in.checkpoint_id);
  out.setTimestamp(in.timestamp);
  out.setIsSavepoint(in.is_savepoint);
  auto ops = out.initOperators(static_cast<unsigned>(in.operators.size()));
  for (unsigned o = 0; o < in.operators.size(); ++o) {
    const operator_state& op = in.operators[o];
    auto op_out = ops[o];
    write_id(op_out.initOperatorId(), op.operator_id);
    op_out.setHasUid(op.uid.has_value());
    if (op.uid)
      op_out.setUid(wire::as_text(*op.uid));
    op_out.setParallelism(op.parallelism);
    op_out.setMaxParallelism(op.max_parallelism);
    auto subtasks = op_out.initSubtasks(static_cast<unsigned>(op.subtasks.size()));
    for (unsigned s = 0; s < op.subtasks.size(); ++s)
      write_subtask(subtasks[s], op.subtasks[s]);
    auto finished = op_out.initFinished(static_cast<unsigned>(op.finished.size()));
    for (unsigned s = 0; s < op.finished.size(); ++s)
      finished.set(s, op.finished[s]);
  }
}

void put_u32_be(char* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
}

std::uint32_t get_u32_be(const char* in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}

// ---- decoding ----------------------------------------------------------------------------

/// The message's size bounds its lists. Every element Flint writes takes at least a byte, but a
/// list of zero-sized structs takes none: Cap'n Proto charges those only to the traversal limit,
/// so a few bytes could claim thousands of elements, each a vector's worth once decoded. Every
/// struct list is checked before it sizes anything.
struct list_bound {
  std::size_t message_bytes;

  template <class List>
  List operator()(List list, const std::string& what) const {
    if (list.size() > message_bytes)
      throw decode_failure{"the " + what + " claim " + std::to_string(list.size())
                           + " entries, but the message is " + std::to_string(message_bytes)
                           + " bytes"};
    return list;
  }
};

graph::operator_id read_id(schema::OperatorId128::Reader in) {
  return graph::operator_id{in.getUpper(), in.getLower()};
}

stream_state_handle read_stream_handle(schema::StreamStateHandle::Reader in) {
  stream_state_handle out;
  out.path = wire::text(in.getPath());
  out.offset = in.getOffset();
  out.size = in.getSize();
  out.inline_data = wire::from_data(in.getInlineData());
  if (!out.is_inline() && out.offset > std::numeric_limits<std::uint64_t>::max() - out.size)
    throw decode_failure{"state handle of " + out.path + " ends beyond 2^64 bytes"};
  return out;
}

/// A local file name: a restore makes it in its instance directory, so nothing that leaves it.
std::vector<named_file> read_named_files(capnp::List<schema::NamedFile>::Reader in,
                                         const std::string& range, const list_bound& bound) {
  in = bound(in, "files of the incremental keyed state handle of " + range);
  std::vector<named_file> out;
  out.reserve(in.size());
  for (auto file : in) {
    auto name = wire::text(file.getName());
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos
        || name.find('\0') != std::string::npos)
      throw decode_failure{"incremental keyed state handle of " + range + " has a file named '"
                           + name + "'"};
    out.push_back({std::move(name), read_stream_handle(file.getHandle())});
  }
  return out;
}

keyed_state_handle read_keyed_handle(schema::KeyedStateHandle::Reader in,
                                     const list_bound& bound) {
  keyed_state_handle out;
  out.first_key_group = in.getFirstKeyGroup();
  out.last_key_group = in.getLastKeyGroup();
  auto range = "key groups [" + std::to_string(out.first_key_group) + ", "
    + std::to_string(out.last_key_group) + "]";
  auto count = static_cast<std::int64_t>(out.last_key_group) - out.first_key_group + 1;
  if (out.first_key_group < 0 || count < 0)
    throw decode_failure{"keyed state handle of invalid " + range};
  out.data = read_stream_handle(in.getData());
  auto offsets = in.getKeyGroupOffsets();
  out.incremental = in.getIncremental();
  out.base_checkpoint_id = in.getBaseCheckpointId();
  if (out.incremental) {
    if (offsets.size() != 0)
      throw decode_failure{"incremental keyed state handle of " + range + " has key group offsets"};
    out.shared_files = read_named_files(in.getSharedFiles(), range, bound);
    out.private_files = read_named_files(in.getPrivateFiles(), range, bound);
    return out;
  }
  if (static_cast<std::int64_t>(offsets.size()) != count)
    throw decode_failure{"keyed state handle of " + range + " has " + std::to_string(offsets.size())
                         + " key group offsets"};
  std::uint64_t previous = 0;
  out.key_group_offsets.reserve(offsets.size());
  for (auto offset : offsets) {
    if (offset < previous || offset > out.data.state_size())
      throw decode_failure{"keyed state handle of " + range + " has key group offset "
                           + std::to_string(offset) + " out of order or beyond its "
                           + std::to_string(out.data.state_size()) + " bytes"};
    out.key_group_offsets.push_back(offset);
    previous = offset;
  }
  return out;
}

operator_subtask_state read_subtask(schema::OperatorSubtaskState::Reader in,
                                    const list_bound& bound) {
  operator_subtask_state out;
  out.operator_id = read_id(in.getOperatorId());
  auto keyed =
    bound(in.getKeyed(), "keyed state handles of operator " + out.operator_id.to_string());
  out.keyed.reserve(keyed.size());
  for (auto handle : keyed)
    out.keyed.push_back(read_keyed_handle(handle, bound));
  auto entries = in.getListEntries();
  out.list_entries.reserve(entries.size());
  for (auto entry : entries)
    out.list_entries.push_back(wire::from_data(entry));
  return out;
}

task_state_snapshot read_snapshot(schema::TaskStateSnapshot::Reader in,
                                  const list_bound& bound) {
  task_state_snapshot out;
  auto ops = bound(in.getOperators(), "operator states");
  out.operators.reserve(ops.size());
  for (auto op : ops)
    out.operators.push_back(read_subtask(op, bound));
  out.finished = in.getFinished();
  return out;
}

checkpoint_metadata read_metadata(schema::CheckpointMetadata::Reader in,
                                  const list_bound& bound) {
  checkpoint_metadata out;
  out.checkpoint_id = in.getCheckpointId();
  out.timestamp = in.getTimestamp();
  out.is_savepoint = in.getIsSavepoint();
  auto ops = bound(in.getOperators(), "operator states");
  out.operators.reserve(ops.size());
  for (auto op_in : ops) {
    operator_state op;
    op.operator_id = read_id(op_in.getOperatorId());
    if (op_in.getHasUid())
      op.uid = wire::text(op_in.getUid());
    op.parallelism = op_in.getParallelism();
    op.max_parallelism = op_in.getMaxParallelism();
    auto name = "operator " + op.operator_id.to_string();
    if (op.parallelism < 1 || op.max_parallelism < op.parallelism)
      throw decode_failure{name + " has parallelism " + std::to_string(op.parallelism)
                           + " and max parallelism " + std::to_string(op.max_parallelism)};
    auto subtasks = bound(op_in.getSubtasks(), "subtask states of " + name);
    auto finished = op_in.getFinished();
    auto parallelism = static_cast<unsigned>(op.parallelism);
    if (subtasks.size() > parallelism || finished.size() > parallelism)
      throw decode_failure{name + " of parallelism " + std::to_string(op.parallelism) + " has "
                           + std::to_string(subtasks.size()) + " subtask states and "
                           + std::to_string(finished.size()) + " finished flags"};
    op.subtasks.reserve(subtasks.size());
    for (auto subtask : subtasks)
      op.subtasks.push_back(read_subtask(subtask, bound));
    op.finished.reserve(finished.size());
    for (bool f : finished)
      op.finished.push_back(f);
    out.operators.push_back(std::move(op));
  }
  return out;
}

std::string size_text(std::size_t have, std::size_t want) {
  return std::to_string(have) + " of " + std::to_string(want) + " bytes";
}

std::string at_least_text(std::size_t have, std::size_t want) {
  return std::to_string(have) + " of at least " + std::to_string(want) + " bytes";
}

// Cap'n Proto's readers refuse more segments than this; our messages have one or a few.
constexpr std::uint32_t max_segments = 512;

/// Reads `bytes` as one message with root `Root` and converts it with `fn(root, list_bound)`.
/// Errors carry only the detail; `header` bytes preceded `bytes` in the input and count in the
/// sizes reported.
template <class Root, class Fn>
auto read_message(std::span<const char> bytes, std::size_t header, Fn&& fn)
  -> expected<decltype(fn(std::declval<typename Root::Reader>(), list_bound{}))> {
  auto fail = [](std::string detail) { return make_error(errc::invalid_argument, detail); };
  constexpr auto word = sizeof(capnp::word);
  if (bytes.empty() && header == 0)
    return fail("empty (0 bytes)");
  if (bytes.size() < word)
    return fail("truncated (" + at_least_text(header + bytes.size(), header + word) + ")");
  // The segment table says how long the message is: a short input is reported as truncated,
  // with the size it should have had.
  std::uint32_t segments = 0;
  std::memcpy(&segments, bytes.data(), sizeof segments); // little-endian, as Cap'n Proto is
  if (segments >= max_segments)
    return fail("not a Cap'n Proto message (a segment table of "
                + std::to_string(std::uint64_t{segments} + 1) + " segments)");
  try {
    wire::aligned_words storage(bytes);
    auto expected_bytes = capnp::expectedSizeInWordsFromPrefix(storage.words()) * word;
    if (expected_bytes > bytes.size()) {
      // The whole segment table may not be there yet: then the size is a lower bound.
      bool table_complete = bytes.size() >= (segments / 2 + 1) * word;
      auto sizes = header + bytes.size();
      return fail("truncated ("
                  + (table_complete ? size_text(sizes, header + expected_bytes)
                                    : at_least_text(sizes, header + expected_bytes))
                  + ")");
    }
    if (expected_bytes < bytes.size())
      return fail(std::to_string(bytes.size() - expected_bytes) + " bytes after the end of the "
                  + "message (" + size_text(header + bytes.size(), header + expected_bytes) + ")");
    capnp::FlatArrayMessageReader reader(storage.words(),
                                         wire::reader_options(storage.words().size()));
    if (reader.getEnd() != storage.words().end())
      return fail("trailing bytes after the message");
    return fn(reader.getRoot<Root>(), list_bound{bytes.size()});
  } catch (const kj::Exception& e) {
    return fail(std::string("not a valid message (") + e.getDescription().cStr() + ")");
  } catch (const decode_failure& e) {
    return fail(e.what);
  }
}

template <class T>
expected<T> with_context(expected<T> result, const std::string& context) {
  if (result)
    return result;
  return make_error(result.error().code, context + result.error().message);
}

} // namespace

std::vector<char> encode_task_state_snapshot(const task_state_snapshot& snapshot) {
  capnp::MallocMessageBuilder message;
  write_snapshot(message.initRoot<schema::TaskStateSnapshot>(), snapshot);
  return wire::to_bytes(message);
}

expected<task_state_snapshot> decode_task_state_snapshot(std::span<const char> bytes) {
  return with_context(read_message<schema::TaskStateSnapshot>(bytes, 0, read_snapshot),
                      "malformed task state snapshot: ");
}

std::vector<char> encode_task_restore(const task_restore& restore) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::TaskRestore>();
  root.setCheckpointId(restore.checkpoint_id);
  write_snapshot(root.initState(), restore.state);
  return wire::to_bytes(message);
}

expected<task_restore> decode_task_restore(std::span<const char> bytes) {
  auto read = [](schema::TaskRestore::Reader in, const list_bound& bound) {
    return task_restore{in.getCheckpointId(), read_snapshot(in.getState(), bound)};
  };
  return with_context(read_message<schema::TaskRestore>(bytes, 0, read),
                      "malformed task restore: ");
}

std::vector<char> encode_checkpoint_metadata(const checkpoint_metadata& metadata) {
  capnp::MallocMessageBuilder message;
  write_metadata(message.initRoot<schema::CheckpointMetadata>(), metadata);
  std::vector<char> out(metadata_header_size);
  put_u32_be(out.data(), metadata_magic_number);
  put_u32_be(out.data() + 4, metadata_version);
  wire::append_bytes(out, message);
  return out;
}

expected<checkpoint_metadata> decode_checkpoint_metadata(std::span<const char> bytes,
                                                         const std::string& source) {
  auto context = source.empty() ? std::string("malformed checkpoint metadata: ")
                                : "Cannot read checkpoint metadata " + source + ": ";
  auto fail = [&](const std::string& detail) {
    return make_error(errc::invalid_argument, context + detail);
  };
  if (bytes.empty())
    return fail("empty (0 bytes)");
  char magic[4];
  put_u32_be(magic, metadata_magic_number);
  auto magic_bytes = std::min<std::size_t>(bytes.size(), 4);
  if (!std::equal(bytes.begin(), bytes.begin() + magic_bytes, magic)) {
    if (bytes.size() < 4)
      return fail("not a checkpoint metadata file (" + std::to_string(bytes.size())
                  + " bytes, no magic number)");
    char found[11];
    std::snprintf(found, sizeof found, "0x%08x", get_u32_be(bytes.data()));
    return fail(std::string("not a checkpoint metadata file (magic number ") + found
                + ", expected 0x4960672d)");
  }
  if (bytes.size() < metadata_header_size)
    return fail("truncated (" + at_least_text(bytes.size(), metadata_header_size) + ")");
  auto version = get_u32_be(bytes.data() + 4);
  if (version != metadata_version)
    return fail("unsupported metadata version " + std::to_string(version) + " (this Flint reads "
                + std::to_string(metadata_version) + ")");
  return with_context(read_message<schema::CheckpointMetadata>(bytes.subspan(metadata_header_size),
                                                               metadata_header_size, read_metadata),
                      context);
}

} // namespace flint::state
