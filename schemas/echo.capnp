@0xd1c3a6b2f0e49a57;
# A diagnostic method every node can serve: answers with what it was sent. Used by the demo,
# the RPC benchmark and the RPC tests (runtime/actors/rpc/echo_gateway.hpp).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::rpc");

struct EchoRequest {
  text @0 :Text;
  data @1 :Data;
}

struct EchoResponse {
  text @0 :Text;
  data @1 :Data;
  responder @2 :Text;
  # Which endpoint answered.
}
