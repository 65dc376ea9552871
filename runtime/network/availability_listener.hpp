#pragma once
/// The wake-up hook of the data plane (Flink's BufferAvailabilityListener, as a callable).

#include <functional>

namespace flint::network {

/// Called when something became available: data in a subpartition, a buffer in a channel, a
/// channel in a gate, credit to announce. Runs on the thread that made it available with no lock
/// held, so it must be cheap and thread-safe; an actor passes a function that sends itself a
/// message. It must stay callable until the object it was given to is released.
using availability_listener = std::function<void()>;

} // namespace flint::network
