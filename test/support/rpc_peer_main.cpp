// flint-test-rpc-peer <token-hi> <token-lo>: a second process for cross-process RPC tests. It
// serves a fenced echo endpoint ("echo_server") through a locator published on 127.0.0.1 at a
// free port, prints "port=<n>" and serves until its standard input closes.

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/actors/rpc/echo_endpoint.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: flint-test-rpc-peer <token-hi> <token-lo>\n");
    return 2;
  }
  flint::rpc::fencing_token token{std::strtoull(argv[1], nullptr, 10),
                                  std::strtoull(argv[2], nullptr, 10)};
  caf::actor_system_config cfg;
  flint::rpc::configure_node(cfg, {});
  caf::actor_system sys{cfg};
  flint::trace::trace_recorder recorder(flint::trace::system_now_us);
  flint::rpc::endpoint_context ctx{"echo_server", &recorder, {}};
  auto echo = sys.spawn<flint::rpc::echo_endpoint>(ctx, token);
  auto locator = flint::rpc::spawn_endpoint_locator(sys);
  flint::rpc::register_endpoint(locator, "echo_server", echo);
  auto port = flint::rpc::publish_locator(sys, locator, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "%s\n", port.error().to_string().c_str());
    return 1;
  }
  std::printf("port=%u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
  return 0;
}
