#include "runtime/graph/detail/murmur3.hpp"

namespace flint::graph::detail {

namespace {

constexpr std::uint64_t c1 = 0x87c37b91114253d5ULL;
constexpr std::uint64_t c2 = 0x4cf5ad432745937fULL;

std::uint64_t rotl(std::uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

std::uint64_t fmix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

std::uint64_t mix_k1(std::uint64_t k1) {
  return rotl(k1 * c1, 31) * c2;
}
std::uint64_t mix_k2(std::uint64_t k2) {
  return rotl(k2 * c2, 33) * c1;
}

} // namespace

void murmur3_128::put_int(std::int32_t value) {
  auto u = static_cast<std::uint32_t>(value);
  for (int i = 0; i < 4; ++i)
    put_byte(static_cast<std::uint8_t>(u >> (8 * i)));
}

void murmur3_128::put_string(std::string_view text) {
  for (char c : text)
    put_byte(static_cast<std::uint8_t>(c));
}

void murmur3_128::put_byte(std::uint8_t b) {
  block_[fill_++] = b;
  ++length_;
  if (fill_ == block_.size())
    mix_block();
}

void murmur3_128::mix_block() {
  std::uint64_t k1 = load_le(block_.data(), 8);
  std::uint64_t k2 = load_le(block_.data() + 8, 8);
  h1_ ^= mix_k1(k1);
  h1_ = rotl(h1_, 27);
  h1_ += h2_;
  h1_ = h1_ * 5 + 0x52dce729;
  h2_ ^= mix_k2(k2);
  h2_ = rotl(h2_, 31);
  h2_ += h1_;
  h2_ = h2_ * 5 + 0x38495ab5;
  fill_ = 0;
}

std::array<std::uint8_t, 16> murmur3_128::hash() {
  if (fill_ > 0) {
    std::uint64_t k1 = load_le(block_.data(), fill_ < 8 ? fill_ : 8);
    std::uint64_t k2 = fill_ > 8 ? load_le(block_.data() + 8, fill_ - 8) : 0;
    h1_ ^= mix_k1(k1);
    h2_ ^= mix_k2(k2);
    fill_ = 0;
  }
  h1_ ^= length_;
  h2_ ^= length_;
  h1_ += h2_;
  h2_ += h1_;
  h1_ = fmix(h1_);
  h2_ = fmix(h2_);
  h1_ += h2_;
  h2_ += h1_;
  std::array<std::uint8_t, 16> out{};
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<std::uint8_t>(h1_ >> (8 * i));
    out[8 + i] = static_cast<std::uint8_t>(h2_ >> (8 * i));
  }
  return out;
}

std::array<std::uint8_t, 16> murmur3_128_of(std::string_view bytes) {
  murmur3_128 h;
  h.put_string(bytes);
  return h.hash();
}

} // namespace flint::graph::detail
