@0xb1f2e3d4c5a69789;
using Flint = import "/flint.capnp";
$Flint.namespace("flint::gen_test");

struct Mixed {
  name @0 :Text;
  union {
    a @1 :Int32;
    b @2 :Text;
  }
}
