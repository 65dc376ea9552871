#pragma once
/// The stateless one-input operators (Flink's StreamMap, StreamFlatMap, StreamFilter).

#include "runtime/streaming/operator_api.hpp"

#include <functional>
#include <utility>

namespace flint::streaming {

/// One output per input. `Fn` is the user's function: its own type when the API knows it (the
/// call is then direct and can be inlined), else a std::function.
template <class In, class Out, class Fn = std::function<Out(const In&)>>
class map_operator final : public one_input_operator<In> {
public:
  map_operator(Fn fn, std::unique_ptr<output<Out>> out)
    : fn_(std::move(fn)),
      out_(std::move(out)) {}
  // The result lives until the outputs return: they only read it (no move into a parameter).
  void process_element(const In& value) override { out_->collect_ref(fn_(value)); }
  void collect_ref(const In& value) override { process_element(value); }

private:
  Fn fn_;
  output_ref<Out> out_;
};

/// Any number of outputs per input; `Fn` is called as `fn(value, output<Out>&)`.
template <class In, class Out, class Fn>
class flat_map_operator final : public one_input_operator<In> {
public:
  flat_map_operator(Fn fn, std::unique_ptr<output<Out>> out)
    : fn_(std::move(fn)),
      out_(std::move(out)) {}
  void process_element(const In& value) override { fn_(value, *out_); }
  void collect_ref(const In& value) override { process_element(value); }

private:
  Fn fn_;
  output_ref<Out> out_;
};

/// Keeps what the predicate accepts (`Fn` as for map_operator).
template <class T, class Fn = std::function<bool(const T&)>>
class filter_operator final : public one_input_operator<T> {
public:
  filter_operator(Fn fn, std::unique_ptr<output<T>> out)
    : fn_(std::move(fn)),
      out_(std::move(out)) {}
  void process_element(const T& value) override {
    if (fn_(value))
      out_->collect_ref(value);
  }
  void collect_ref(const T& value) override { process_element(value); }

private:
  Fn fn_;
  output_ref<T> out_;
};

} // namespace flint::streaming
