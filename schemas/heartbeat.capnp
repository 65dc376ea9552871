@0xfee1463f2822f99c;
# Heartbeats between endpoints (Flink's HeartbeatTarget): the sender of a relation asks with
# `requestHeartbeat`, the target answers with `receiveHeartbeat`. Both carry the same struct.
# The methods are declared in runtime/actors/heartbeat/heartbeat_gateway.hpp.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::heartbeat");
$Flint.include(["runtime/actors/heartbeat/heartbeat_target.hpp"]);

struct HeartbeatRequest {
  # One heartbeat or heartbeat request.
  origin @0 :Text $Flint.type("heartbeat::resource_id");
  # Resource id (endpoint id) of the endpoint the heartbeat comes from.
  payload @1 :Data $Flint.name("data");
  # Opaque to the heartbeat service: a Cap'n Proto message of the relation (a slot report, an
  # accumulator report), or empty when the relation carries no payload in this direction.
}
