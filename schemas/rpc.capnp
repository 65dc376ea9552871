@0xaed857ba15e41788;
# The RPC envelope every endpoint call starts with (DESIGN.md "RPC"). The method's request is its
# own Cap'n Proto message, written right after the envelope in the same bytes, so the RPC layer
# never needs to know an endpoint's schema and the request is neither copied nor wrapped. An
# answer is the response message alone; an error answer is a CAF error (rpc_error.hpp).

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
}
