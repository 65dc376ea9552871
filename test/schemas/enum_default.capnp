@0xb1f2e3d4c5a6978a;
using Flint = import "/flint.capnp";
$Flint.namespace("flint::gen_test");

struct WithStatus {
  status @0 :UInt8 = 2 $Flint.type("graph::job_status");
}
