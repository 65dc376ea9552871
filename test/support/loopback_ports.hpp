#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace flint::test {

/// `n` distinct loopback ports free now, drawn from 20000 up to the kernel's ephemeral range
/// (never inside it, where an outgoing connection could take one before its server binds it).
/// Throws std::runtime_error if it cannot find them.
std::vector<std::uint16_t> free_loopback_ports(std::size_t n);

} // namespace flint::test
