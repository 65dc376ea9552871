#pragma once
/// The payload of a TaskExecutor's heartbeat to the ResourceManager: its slot report as the
/// bytes of a cluster.capnp `SlotReport` (heartbeat payloads are opaque bytes).

#include <span>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/common/expected.hpp"

namespace flint::resource_manager {

std::vector<char> encode_slot_report(const cluster::slot_report& report);

/// errc::malformed_message for bytes that are not a SlotReport.
expected<cluster::slot_report> decode_slot_report(std::span<const char> bytes);

} // namespace flint::resource_manager
