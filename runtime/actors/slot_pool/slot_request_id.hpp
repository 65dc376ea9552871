#pragma once
/// Names one request for a slot (Flink's SlotRequestId).

#include "runtime/graph/ids.hpp"

namespace flint::slot_pool {

using slot_request_id = graph::abstract_id<struct slot_request_id_tag>;

} // namespace flint::slot_pool
