@0xe3b0c1d2a4f59687;
# Annotations read by Flint's schema compiler plugin (schemas/gen/flint_capnpc.cpp). A protocol's
# schema is the one place its messages are written: the plugin turns every struct of a file that
# names a `namespace` into a plain C++ value type (snake_case names, the schema's comments as doc
# comments) with its Cap'n Proto codec, so a gateway header only declares its methods.

annotation namespace @0xd0a9e5f3b1c24e01 (file) :Text;
# C++ namespace of the file's value types, e.g. "flint::resource_manager". Files without it
# generate nothing (their structs may still be used, through `type`).

annotation prefix @0xd0a9e5f3b1c24e02 (file) :Text;
# Dropped from struct names before they become C++ names ("Rm": RmSlotRequest -> slot_request).
# All schemas share the C++ namespace flint::schema, hence the prefixes.

annotation include @0xd0a9e5f3b1c24e03 (file) :List(Text);
# Headers the generated value types need (the C++ types named by `type`).

annotation codecInclude @0xd0a9e5f3b1c24e04 (file) :List(Text);
# Headers declaring the hand-written `flint::wire::put/get` conversions of those types.

annotation type @0xd0a9e5f3b1c24e05 (field, struct) :Text;
# On a struct: its values are this hand-written C++ type (not generated); `flint::wire::put` and
# `get` convert it. On a field: the field's C++ type, converted by `put`/`get` (struct fields),
# `to_wire`/`from_wire` (numbers, e.g. enums sent as UInt8) or `encode_data`/`decode_data`
# (Data fields carrying another layer's message).

annotation name @0xd0a9e5f3b1c24e06 (field, struct) :Text;
# The C++ name when the snake_case form of the schema name is not the one wanted.

annotation skip @0xd0a9e5f3b1c24e07 (struct) :Void;
# Not a message: no C++ type and no codec (Id128, whose C++ type each field names).

annotation init @0xd0a9e5f3b1c24e08 (field) :Text;
# The C++ default of a field whose `type` is an enum, e.g. "graph::job_status::created" (a
# number default in the schema would change how the field is stored on the wire).
