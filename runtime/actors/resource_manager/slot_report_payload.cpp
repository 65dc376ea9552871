#include "runtime/actors/resource_manager/slot_report_payload.hpp"

#include "runtime/actors/common/cluster_codec.hpp"
#include "schemas/codec_support.hpp"

namespace flint::resource_manager {

std::vector<char> encode_slot_report(const cluster::slot_report& report) {
  capnp::MallocMessageBuilder message(32 + 16 * report.slots.size());
  wire::put(message.initRoot<schema::SlotReport>(), report);
  return wire::to_bytes(message);
}

expected<cluster::slot_report> decode_slot_report(std::span<const char> bytes) {
  return wire::read<schema::SlotReport>(
    bytes, "slot report", [](schema::SlotReport::Reader r) -> expected<cluster::slot_report> {
      cluster::slot_report out;
      (void)wire::get(r, out); // a slot report cannot fail to read
      return out;
    });
}

} // namespace flint::resource_manager
