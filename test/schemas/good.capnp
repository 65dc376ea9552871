@0xb1f2e3d4c5a69788;
# A protocol as flint-capnpc test input: prefix, snake_case names, a default, a union, a list.

using Flint = import "/flint.capnp";
$Flint.namespace("flint::gen_test");
$Flint.prefix("Gt");

struct GtPing {
  # Asks for an answer.
  requestId @0 :UInt64;
  # Which ping this is.
  retries @1 :Int32 = 3;
  tags @2 :List(Text);
}

struct GtAnswer {
  union {
    pong @0 :GtPing;
    refusal @1 :Text;
  }
}
