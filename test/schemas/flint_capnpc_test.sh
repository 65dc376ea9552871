#!/usr/bin/env bash
# flint-capnpc on small schemas: what it generates from a good one, and the clear errors for the
# shapes it refuses. Usage: flint_capnpc_test.sh <flint-capnpc> <schemas dir> <test schemas dir>
set -uo pipefail
plugin=$1 schemas=$2 here=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

compile() { # schema file -> exit status; stderr in $out/err
  capnp compile -I"$schemas" --src-prefix="$here" -o"$plugin:$out" "$here/$1" 2>"$out/err"
}

compile good.capnp || fail "good.capnp: $(cat "$out/err")"
hpp=$out/good.messages.hpp
cpp=$out/good.messages.c++
[ -f "$hpp" ] && [ -f "$cpp" ] || fail "no output files"
grep -q 'namespace flint::gen_test {' "$hpp" || fail "namespace"
grep -q 'struct ping {' "$hpp" || fail "prefix dropped, snake_case name"
grep -q 'std::uint64_t request_id = 0;' "$hpp" || fail "snake_case field with default 0"
grep -q 'std::int32_t retries = 3;' "$hpp" || fail "the schema's default"
grep -q 'std::vector<std::string> tags;' "$hpp" || fail "a list of texts"
grep -q '/// Asks for an answer.' "$hpp" || fail "the struct's comment"
grep -q '/// Which ping this is.' "$hpp" || fail "the field's comment"
grep -q 'using answer = std::variant<::flint::gen_test::ping, std::string>;' "$hpp" || fail "union as variant"
grep -q 'FLINT_DECLARE_CODEC(::flint::gen_test::answer)' "$hpp" || fail "codec declaration"
grep -q 'answer: unknown alternative' "$cpp" || fail "a newer union alternative is refused by name"
grep -q 'ping entry' "$cpp" && fail "no list of structs here, no entry error"
# The header needs no Cap'n Proto.
grep -q '#include .*capnp' "$hpp" && fail "the header includes Cap'n Proto"

compile union_beside_fields.capnp && fail "a union beside fields was accepted"
grep -q 'union sits beside other fields' "$out/err" || fail "union error text: $(cat "$out/err")"

compile enum_default.capnp && fail "an enum default in the schema was accepted"
grep -q 'give an enum field.s default with \$Flint.init' "$out/err" || fail "enum default error text: $(cat "$out/err")"

echo "PASS"
