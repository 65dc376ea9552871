@0xaed857ba15e41788;
# The RPC envelope every endpoint message travels in (DESIGN.md "RPC"), and the reply to an ask.
# Method payloads are their own Cap'n Proto messages, carried as bytes so the RPC layer never
# needs to know an endpoint's schema.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

struct FencingToken {
  # A leader session id (a UUID). Both halves zero means "no token".
  hi @0 :UInt64;
  lo @1 :UInt64;
}

struct TraceContext {
  traceId @0 :UInt64;
  spanId @1 :UInt64;
  parentSpanId @2 :UInt64;
}

struct Envelope {
  methodId @0 :UInt32;
  token @1 :FencingToken;
  # Narrows which token applies at endpoints fenced per relationship (a TaskExecutor checks calls
  # about job J against J's JobMasterId); empty elsewhere.
  fencingScope @2 :Text;
  trace @3 :TraceContext;
  sender @4 :Text;
  payload @5 :Data;
}

struct RpcError {
  code @0 :UInt8;
  message @1 :Text;
}

struct Reply {
  union {
    ok @0 :Data;
    error @1 :RpcError;
  }
}
