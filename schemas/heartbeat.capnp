@0xfee1463f2822f99c;
# Heartbeats between endpoints (Flink's HeartbeatTarget): the sender of a relation asks with
# `requestHeartbeat`, the target answers with `receiveHeartbeat`. Both carry the same struct.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

struct HeartbeatRequest {
  # Resource id of the endpoint the heartbeat comes from (its endpoint id).
  origin @0 :Text;
  # Opaque to the heartbeat service: a Cap'n Proto message of the relation (a slot report, an
  # accumulator report), or empty when the relation carries no payload in this direction.
  payload @1 :Data;
}
