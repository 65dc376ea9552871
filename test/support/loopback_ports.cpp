#include "test/support/loopback_ports.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

namespace flint::test {

// Ports below the kernel's ephemeral range (ip_local_port_range's low end; 20000 up, as the cluster
// scripts' unused_port): a port bind(0) hands out lies in that range, and any outgoing connection
// can take it as its local end between this check and the server's own bind (seen in the cluster
// scripts as ZooKeeper's "Address already in use"). Every socket stays bound until all are
// chosen, so the ports differ.
std::vector<std::uint16_t> free_loopback_ports(std::size_t n) {
  unsigned low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range)
    range >> low;
  unsigned span = low > 21024 ? low - 20000 : 30000;
  std::mt19937 random(std::random_device{}());
  std::vector<int> fds;
  std::vector<std::uint16_t> ports;
  for (int attempt = 0; ports.size() < n && attempt < 1000; ++attempt) {
    auto port = static_cast<std::uint16_t>(20000 + random() % span);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
      break;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd);
      continue;
    }
    fds.push_back(fd);
    ports.push_back(port);
  }
  for (int fd : fds)
    close(fd);
  if (ports.size() < n)
    throw std::runtime_error("free_loopback_ports: cannot find " + std::to_string(n)
                             + " free loopback ports below the ephemeral range");
  return ports;
}

} // namespace flint::test
