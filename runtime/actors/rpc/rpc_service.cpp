#include "runtime/actors/rpc/rpc_service.hpp"

#include <optional>
#include <unordered_map>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/tls.hpp"

#include <caf/openssl/all.hpp>

namespace flint::rpc {

namespace {

using register_atom = caf::atom_constant<caf::atom("flint_reg")>;
using unregister_atom = caf::atom_constant<caf::atom("flint_unrg")>;
using lookup_atom = caf::atom_constant<caf::atom("flint_look")>;

struct locator_state {
  std::unordered_map<std::string, caf::actor> endpoints;
  const endpoint_directory* fallback = nullptr;
  static inline const char* name = "flint.endpoint_locator";
};

caf::behavior locator(caf::stateful_actor<locator_state>* self,
                      const endpoint_directory* fallback) {
  self->state.fallback = fallback;
  return {
    [self](register_atom, const std::string& id, const caf::actor& endpoint) {
      self->state.endpoints[id] = endpoint;
    },
    [self](unregister_atom, const std::string& id) { self->state.endpoints.erase(id); },
    // An unknown id answers an invalid handle: the caller turns it into errc::not_found.
    [self](lookup_atom, const std::string& id) -> caf::actor {
      auto i = self->state.endpoints.find(id);
      if (i != self->state.endpoints.end())
        return i->second;
      if (self->state.fallback != nullptr)
        return self->state.fallback->lookup(id).value_or(caf::actor{});
      return caf::actor{};
    },
  };
}

} // namespace

caf::actor_system_config& configure_node(caf::actor_system_config& cfg, const node_options& opts) {
  if (opts.network) {
    cfg.load<caf::io::middleman>();
    install_inbound_guard(opts.inbound);
  }
  // After the middleman (the other order throws, CAF-NOTES). Setting the files turns on mutual
  // authentication: there is no server-only mode.
  if (opts.network && opts.tls.enabled) {
    install_tls_guards(opts.tls);
    cfg.load<caf::openssl::manager>();
    cfg.set("openssl.certificate", opts.tls.keystore);
    cfg.set("openssl.key", opts.tls.keystore);
    cfg.set("openssl.cafile", opts.tls.truststore);
    if (!opts.tls.key_password.empty())
      cfg.set("openssl.passphrase", opts.tls.key_password);
  }
  cfg.set("scheduler.policy",
          opts.scheduler_policy == "sharing" ? caf::atom("sharing") : caf::atom("stealing"));
  if (opts.workers > 0)
    cfg.set("scheduler.max-threads", opts.workers);
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console", caf::atom("none"));
  return cfg;
}

caf::actor spawn_endpoint_locator(caf::actor_system& sys, const endpoint_directory* fallback) {
  return sys.spawn(locator, fallback);
}

void register_endpoint(const caf::actor& locator, const std::string& endpoint_id,
                       const caf::actor& endpoint) {
  caf::anon_send(locator, register_atom::value, endpoint_id, endpoint);
}

void unregister_endpoint(const caf::actor& locator, const std::string& endpoint_id) {
  caf::anon_send(locator, unregister_atom::value, endpoint_id);
}

bool uses_tls(caf::actor_system& sys) {
  return sys.has_openssl_manager();
}

expected<std::uint16_t> publish_actor(caf::actor_system& sys, const caf::actor& a,
                                      std::uint16_t port, const std::string& bind_address) {
  const char* in = bind_address.empty() ? nullptr : bind_address.c_str();
  // Before the first peer can connect; the socket publish makes, not one already listening on
  // the number (another listener of this process keeps its own rules).
  if (port != 0)
    expect_inbound_port(port, uses_tls(sys));
  auto res = uses_tls(sys) ? caf::openssl::publish(a, port, in, true)
                           : sys.middleman().publish(a, port, in, true);
  if (res) {
    guard_inbound_port(*res, uses_tls(sys));
  } else {
    if (port != 0)
      unguard_inbound_port(port);
    return make_error(errc::unreachable,
                      "cannot listen on " + (bind_address.empty() ? std::string("*") : bind_address)
                        + ":" + std::to_string(port) + ": " + sys.render(res.error()));
  }
  return *res;
}

expected<caf::actor> connect_actor(caf::actor_system& sys, const std::string& host,
                                   std::uint16_t port) {
  auto res = uses_tls(sys) ? caf::openssl::remote_actor(sys, host, port)
                           : sys.middleman().remote_actor(host, port);
  if (!res)
    return make_error(errc::unreachable,
                      "cannot reach a Flint node at " + host + ":" + std::to_string(port) + ": "
                        + sys.render(res.error()));
  return *res;
}

expected<std::uint16_t> publish_locator(caf::actor_system& sys, const caf::actor& locator,
                                        std::uint16_t port, const std::string& bind_address) {
  auto res = publish_actor(sys, locator, port, bind_address);
  if (!res)
    return make_error(errc::unreachable, res.error().message);
  return *res;
}

expected<caf::actor> connect_endpoint(caf::actor_system& sys, const std::string& host,
                                      std::uint16_t port, const std::string& endpoint_id,
                                      std::chrono::nanoseconds timeout) {
  auto where = host + ":" + std::to_string(port);
  auto node = connect_actor(sys, host, port);
  if (!node)
    return node.error();
  caf::scoped_actor self{sys, true};
  std::optional<expected<caf::actor>> result;
  self->request(*node, timeout, lookup_atom::value, endpoint_id)
    .receive(
      [&](caf::actor& a) {
        if (a)
          result.emplace(std::move(a));
        else
          result.emplace(make_error(
            errc::not_found, "the node at " + where + " has no endpoint '" + endpoint_id + "'"));
      },
      [&](caf::error& err) {
        result.emplace(make_error(
          errc::unreachable,
          "looking up '" + endpoint_id + "' at " + where + " failed: " + sys.render(err)));
      });
  return std::move(*result);
}

} // namespace flint::rpc
